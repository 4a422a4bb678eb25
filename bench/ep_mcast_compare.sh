#!/bin/bash
# Kernel Comms multicast by the arity-3 tree against multicast by hardware
# broadcast (host.ep.hw_broadcast=1), node 0 to every other node of an
# Elite fat tree (scenarios/ep_mcast64 at each node count given, default
# 16 64): the time per 256-byte multicast sent one at a time (--window=1;
# the sender polls every microsecond) and the 64 KiB stream (--window=4) in
# MB/s per receiver. Simulated figures, deterministic.
#   bench/ep_mcast_compare.sh BUILD_DIR [NODES...]
set -euo pipefail
usage="usage: ep_mcast_compare.sh BUILD_DIR [NODES...]"
build=${1:?$usage}
shift
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(16 64)
src=$(cd "$(dirname "$0")/.." && pwd)
nicsim="$build/sim/nicsim"
[ -x "$nicsim" ] || { echo "ep_mcast_compare.sh: no $nicsim" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# One run of ep_mcast_bw: nodes, hw_broadcast (0/1), size, window, iters;
# prints the size's MB/s per receiver.
run() {
  local param=""
  [ "$2" = 1 ] && param='node_param { key: "host.ep.hw_broadcast" value: "1" }'
  sed "s/nodes: 64 }/nodes: $1 }/; s/^  node_param { key: \"bus.profile\" value: \"pci-66\" }/&\n  $param/;
       s/--sizes=65536/--sizes=$3/; s/--window=4/--window=$4/; s/--iters=32/--iters=$5/" \
    "$src/scenarios/ep_mcast64.textproto" >"$tmp/s.textproto"
  "$nicsim" run "$tmp/s.textproto" --out "$tmp/o" >"$tmp/out"
  sed -n "s/^ *mcast_bw_$3 *\([0-9.e+-]*\) .*/\1/p" "$tmp/out" | head -1
}
printf '%6s %18s %18s %20s %20s\n' nodes "tree 256 B us" "bcast 256 B us" "tree 64 KiB MB/s" "bcast 64 KiB MB/s"
for n in "${counts[@]}"; do
  row=("$n")
  for hw in 0 1; do
    bw=$(run "$n" "$hw" 256 1 64)
    row+=("$(awk -v b="$bw" 'BEGIN { printf "%.3f", 256 / b }')")
  done
  for hw in 0 1; do row+=("$(run "$n" "$hw" 65536 4 32)"); done
  printf '%6s %18s %18s %20s %20s\n' "${row[@]}"
done
