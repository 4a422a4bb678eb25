#!/bin/bash
# The Elan3's hardware barrier and broadcast as the Elite fat tree grows:
# scenarios/elan3_barrier and elan3_bcast at each node count given (default
# 2 4 16 64 256). Prints the simulated figures (deterministic: barrier_us,
# broadcast latency to the last node for 8 and 256 bytes, streamed 64 KiB
# broadcast throughput) and the wall seconds and peak memory of each run.
#   bench/collectives_scaling.sh BUILD_DIR [NODES...]
set -euo pipefail
usage="usage: collectives_scaling.sh BUILD_DIR [NODES...]"
build=${1:?$usage}
shift
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(2 4 16 64 256)
src=$(cd "$(dirname "$0")/.." && pwd)
nicsim="$build/sim/nicsim"
[ -x "$nicsim" ] || { echo "collectives_scaling.sh: no $nicsim" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# One run: prints "<wall s> <peak KiB>" and leaves the summary in $tmp/out.
run() {
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$nicsim" run "$1" --out "$tmp/o" >"$tmp/out"
  cat "$tmp/time"
}
figure() { sed -n "s/^ *$1 *\([0-9.e+-]*\) .*/\1/p" "$tmp/out" | head -1; }
printf '%6s %11s %9s %9s %12s %14s %14s\n' nodes "barrier us" "bcast 8B" "bcast 256B" "bcast MB/s" "wall s (b/c)" "peak MiB (b/c)"
for n in "${counts[@]}"; do
  sed "s/nodes: 64/nodes: $n/; s/--iters=100/--iters=50/" "$src/scenarios/elan3_barrier.textproto" >"$tmp/b.textproto"
  sed "s/nodes: 64/nodes: $n/; s/--sizes=[0-9,]*/--sizes=8,256,65536/" "$src/scenarios/elan3_bcast.textproto" >"$tmp/c.textproto"
  read -r bw bm < <(run "$tmp/b.textproto")
  barrier=$(figure barrier_us)
  read -r cw cm < <(run "$tmp/c.textproto")
  printf '%6s %11s %9s %9s %12s %14s %14s\n' "$n" "$barrier" "$(figure lat_8)" "$(figure lat_256)" \
    "$(figure bw_65536)" "$bw/$cw" "$((bm / 1024))/$((cm / 1024))"
done
