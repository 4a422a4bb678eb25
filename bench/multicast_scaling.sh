#!/bin/bash
# How the Elan simulator's cost per data packet grows with the machine:
# the ep_mcast64 workload (64 KiB multicasts down an arity-3 tree of nodes
# on an Elite fat tree) at 4, 16 and 64 nodes, and the two-node 64 KiB
# stream, each run RUNS times in interleaved rounds pinned to the last
# processor. Prints the medians of wall ns per data packet, calendar
# events per data packet (deterministic) and wall ns per calendar event.
#   bench/multicast_scaling.sh BUILD_DIR [RUNS]
# Every run moves about 0.2-0.4 M data packets; the multicast's message
# count shrinks as the tree grows (iters = 2048 / nodes) so that each
# configuration moves about as many packets.
set -euo pipefail
usage="usage: multicast_scaling.sh BUILD_DIR [RUNS]"
build=${1:?$usage}
runs=${2:-5}
src=$(cd "$(dirname "$0")/.." && pwd)
bench="$build/bench/elan_bench"
[ -x "$bench" ] || { echo "multicast_scaling.sh: no $bench (build with the ep layer)" >&2; exit 2; }
cpu=$(( $(nproc) - 1 ))
pin=()
command -v taskset >/dev/null && pin=(taskset -c "$cpu")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
configs=(4 16 64 stream)
for n in 4 16 64; do
  sed "s/nodes: 64/nodes: $n/" "$src/scenarios/ep_mcast64.textproto" >"$tmp/mcast$n.textproto"
done
for ((r = 0; r < runs; ++r)); do
  for c in "${configs[@]}"; do
    if [ "$c" = stream ]; then
      args=(--workload stream --arg --iters=1024)
    else
      args=(--scenario "$tmp/mcast$c.textproto" --arg --iters=$((2048 / c)))
    fi
    out=$("${pin[@]}" "$bench" "${args[@]}")
    ns=$(sed -n 's/.*wall ns \/ packet *\([0-9.]*\).*/\1/p' <<<"$out")
    ev=$(sed -n 's/.*events \/ packet *\([0-9.]*\).*/\1/p' <<<"$out")
    pk=$(sed -n 's/.*Elan packets *\([0-9]*\) data.*/\1/p' <<<"$out")
    echo "$ns $ev $pk" >>"$tmp/$c"
  done
done
printf '%-22s %10s %14s %14s %12s %14s\n' workload "data pkts" "events/pkt" "wall ns/pkt" "ns/event" "M pkts/wall s"
for c in "${configs[@]}"; do
  name=$([ "$c" = stream ] && echo "stream, 2 nodes" || echo "multicast, $c nodes")
  sort -n "$tmp/$c" | awk -v name="$name" -v runs="$runs" '
    { ns[NR] = $1; ev = $2; pk = $3 }
    END {
      m = (NR % 2) ? ns[(NR + 1) / 2] : (ns[NR / 2] + ns[NR / 2 + 1]) / 2
      printf "%-22s %10d %14.2f %14.1f %12.1f %14.2f\n", name, pk, ev, m, m / ev, 1000 / m
    }'
done
echo "(medians of $runs runs; wall ns varies with the machine, events per packet do not)"
