#!/usr/bin/env bash
# Installs nicsim from the build tree into a scratch prefix, builds the toy
# network plugin against that installed package (as an outside user would),
# and runs its ring. Usage: test_toy_network.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
here=$src/examples/toy_network
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$here" -B "$work/toy" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/toy" >/dev/null
nicsim=$work/prefix/bin/nicsim plugin=$work/toy/toy_network.so
out=$("$nicsim" run "$here/toy_ring.textproto" --plugin "$plugin" --out "$work/out")
echo "$out" | head -3
# The last of h0's 8 frames starts at 7 x 2048 ns (256 B at 1 Gb/s, queued
# behind the others), crosses 3 cables (10 ns each) and 2 switches (50 ns
# each) cut-through, and is all in 2048 ns after its head: 16514 ns.
grep -q "ok after 16.514us simulated" <<<"$out" || { echo "end time is not 16.514 us"; exit 1; }
# Every NIC sent 8 frames and received its neighbour's 8, every byte intact.
results=$work/out/results.json
for counter in toy_sent toy_received; do
  n=$(grep -A2 "\"name\": \"$counter\"" "$results" | grep -c '"value": 8$')
  [ "$n" -eq 6 ] || { echo "$counter is not 8 on every NIC ($n of 6)"; exit 1; }
done
for counter in toy_corrupt toy_misdelivered; do
  n=$(grep -A2 "\"name\": \"$counter\"" "$results" | grep -c '"value": 0$')
  [ "$n" -eq 6 ] || { echo "$counter is not 0 on every NIC"; exit 1; }
done
# The capture is in the toy network's format: LINKTYPE_USER2 (149).
[ "$(od -An -tu4 -j20 -N4 "$work/out/packets.pcap" | tr -d ' ')" = 149 ] || { echo "capture link type"; exit 1; }
# A bad shape is bad input with file:line:column (exit 2); without the
# plugin, its scenario field is unknown.
printf 'topology {\n  toy_ring { nodes: 1 }\n}\n' >"$work/bad.textproto"
set +e
"$nicsim" validate "$work/bad.textproto" --plugin "$plugin" 2>"$work/err"; rc=$?
"$nicsim" validate "$here/toy_ring.textproto" 2>"$work/err2"; rc2=$?
set -e
[ "$rc" -eq 2 ] && grep -q "bad.textproto:2:14: toy_ring needs 2..256 nodes, not 1" "$work/err" ||
  { echo "bad shape: exit $rc: $(cat "$work/err")"; exit 1; }
[ "$rc2" -eq 2 ] && grep -q "toy_ring" "$work/err2" || { echo "without the plugin: exit $rc2: $(cat "$work/err2")"; exit 1; }
echo "toy network test passed"
