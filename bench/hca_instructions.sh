#!/bin/bash
# Instructions per simulated IB packet on the HCA path, by callgrind: runs
# ib_write_bw (64 KiB RDMA writes, 2 KiB MTU) at two lengths and divides the
# difference in instructions by the difference in IB packets, so start-up
# and set-up cancel out (the marginal cost per packet).
#   bench/hca_instructions.sh BUILD_DIR [SHORT_ITERS [LONG_ITERS]]
# Needs valgrind. Valgrind does not model AVX-512, so the CRCs run their
# 128-bit folding here; native runs may use the 512-bit one.
set -euo pipefail
build=${1:?usage: hca_instructions.sh BUILD_DIR [SHORT_ITERS [LONG_ITERS]]}
short=${2:-128}
long=${3:-384}
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$1" "$build/bench/fabric_bench" \
    --scenario "$src/scenarios/ib_write_bw.textproto" --arg --sizes=65536 --arg "--iters=$1" >"$tmp/out.$1" 2>"$tmp/err.$1"
  local ir packets
  ir=$(sed -n 's/.*refs: *\([0-9,]*\).*/\1/p' "$tmp/err.$1" | tr -d ,)
  packets=$(sed -n 's/.*IB packets sent *\([0-9]*\).*/\1/p' "$tmp/out.$1")
  echo "$ir $packets"
}
read -r ir1 p1 < <(run "$short")
read -r ir2 p2 < <(run "$long")
echo "iters $short: $ir1 instructions, $p1 IB packets"
echo "iters $long: $ir2 instructions, $p2 IB packets"
echo "marginal instructions per IB packet: $(( (ir2 - ir1) / (p2 - p1) ))"
