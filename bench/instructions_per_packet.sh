#!/bin/bash
# Instructions per simulated network packet, by callgrind: runs a benchmark
# at two lengths and divides the difference in instructions by the
# difference in packets, so start-up and set-up cancel out (the marginal
# cost per packet).
#   bench/instructions_per_packet.sh BUILD_DIR hca|elan|elan-multicast [SHORT_ITERS [LONG_ITERS]]
# hca:  ib_write_bw, 64 KiB RDMA writes in 2 KiB MTU packets; "IB packets"
#       are every packet an HCA sends, ACKs included.
# elan: a stream of 64 KiB Elan Kernel Comms messages between two nodes;
#       "Elan packets" are data packets (each also draws an ack token).
# elan-multicast: ep_mcast64, 64 KiB multicasts from node 0 to 63 nodes
#       down an arity-3 tree of nodes on a 64-node Elite fat tree; Elan
#       data packets of every node (each also draws an ack token).
# Needs valgrind. Valgrind does not model AVX-512, so the IB CRCs run their
# 128-bit folding here; native runs may use the 512-bit one.
set -euo pipefail
usage="usage: instructions_per_packet.sh BUILD_DIR hca|elan|elan-multicast [SHORT_ITERS [LONG_ITERS]]"
build=${1:?$usage}
kind=${2:?$usage}
src=$(cd "$(dirname "$0")/.." && pwd)
case "$kind" in
  hca)
    short=${3:-128} long=${4:-384}
    cmd=("$build/bench/fabric_bench" --scenario "$src/scenarios/ib_write_bw.textproto" --arg --sizes=65536)
    pattern='s/.*IB packets sent *\([0-9]*\).*/\1/p' ;;
  elan)
    short=${3:-64} long=${4:-192}
    cmd=("$build/bench/elan_bench" --workload stream)
    pattern='s/.*Elan packets *\([0-9]*\) data.*/\1/p' ;;
  elan-multicast)
    short=${3:-8} long=${4:-24}
    cmd=("$build/bench/elan_bench" --workload multicast)
    pattern='s/.*Elan packets *\([0-9]*\) data.*/\1/p' ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$1" "${cmd[@]}" --arg "--iters=$1" \
    >"$tmp/out.$1" 2>"$tmp/err.$1"
  local ir packets
  ir=$(sed -n 's/.*refs: *\([0-9,]*\).*/\1/p' "$tmp/err.$1" | tr -d ,)
  packets=$(sed -n "$pattern" "$tmp/out.$1")
  echo "$ir $packets"
}
read -r ir1 p1 < <(run "$short")
read -r ir2 p2 < <(run "$long")
echo "iters $short: $ir1 instructions, $p1 $kind packets"
echo "iters $long: $ir2 instructions, $p2 $kind packets"
echo "marginal instructions per $kind packet: $(( (ir2 - ir1) / (p2 - p1) ))"
