#!/bin/bash
# Scale-out: each scenario cut into BLOCKS partition blocks (default 2), run
# in one process and over 2 MPI ranks, the two runs' results.json compared
# byte for byte. Prints per scenario: wall seconds of the run (wall.json)
# in one process and on 2 ranks, the speed-up, windows per simulated
# microsecond, the share of the 2-rank run spent exchanging, each rank's
# peak RSS against the one process's, and packet-hops per wall second on
# 2 ranks.
#   bench/ranks_speedup.sh BUILD_DIR [BLOCKS] [SCENARIO...]
# Default scenarios: the 1,024-host IB fat tree (permutation and
# all-to-all), the 1,024-node Elite broadcast and Kernel Comms multicast,
# and the 64-node Kernel Comms multicast. Needs Open MPI (mpirun).
set -euo pipefail
usage="usage: ranks_speedup.sh BUILD_DIR [BLOCKS] [SCENARIO...]"
build=${1:?$usage}
blocks=${2:-2}
shift $(($# >= 2 ? 2 : 1))
src=$(cd "$(dirname "$0")/.." && pwd)
nicsim="$build/sim/nicsim"
[ -x "$nicsim" ] || { echo "ranks_speedup.sh: no $nicsim" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "ranks_speedup.sh: no mpirun (scripts/deps.sh installs Open MPI)" >&2; exit 2; }
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=("$src/scenarios/ib_fat_tree_1024.textproto"
  "$src/bench/ranks/ib_alltoall_1024.textproto" "$src/bench/ranks/elite_bcast_1024.textproto"
  "$src/bench/ranks/ep_mcast_1024.textproto" "$src/scenarios/ep_mcast64.textproto")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-20s %9s %9s %8s %12s %9s %22s %14s\n' scenario "1 proc s" "2 ranks s" speed-up "windows/us" exchange \
  "peak RSS MiB 1 | 2" "hops/s 2 ranks"
for s in "${scenarios[@]}"; do
  name=$(basename "$s" .textproto)
  "$nicsim" run "$s" --blocks="$blocks" --out "$tmp/$name.1" >/dev/null
  mpirun --oversubscribe -np 2 "$nicsim" run "$s" --blocks="$blocks" --out "$tmp/$name.2" >/dev/null
  cmp -s "$tmp/$name.1/results.json" "$tmp/$name.2/results.json" ||
    { echo "ranks_speedup.sh: $name: results.json differs between 1 process and 2 ranks" >&2; exit 1; }
  python3 - "$tmp/$name.1" "$tmp/$name.2" "$name" <<'EOF'
import json, sys
one, two, name = sys.argv[1:4]
w1 = json.load(open(one + "/wall.json"))
w2 = json.load(open(two + "/wall.json"))
r = json.load(open(two + "/results.json"))
sim_us = int(r["sim_time_ps"]) / 1e6
ranks = " ".join(f"{int(x) / 2**20:.0f}" for x in w2["peak_rss_bytes_per_rank"])
rate = f"{w2['packet_hops_per_second']:.3g}"
print(f"{name:<20} {w1['wall_seconds']:9.2f} {w2['wall_seconds']:9.2f} {w1['wall_seconds'] / w2['wall_seconds']:7.2f}x "
      f"{int(w2['windows']) / sim_us:12.1f} {100 * w2['sync_seconds'] / w2['wall_seconds']:8.0f}% "
      f"{int(w1['peak_rss_bytes']) / 2**20:9.0f} | {ranks:>10} "
      f"{rate:>14}")
EOF
done
