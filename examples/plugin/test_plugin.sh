#!/usr/bin/env bash
# Installs nicsim from the build tree into a scratch prefix, builds the
# example plugin against that installed package (as an outside user would),
# and runs it. Usage: test_plugin.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/examples/plugin" -B "$work/plugin" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/plugin" >/dev/null
out=$("$work/prefix/bin/nicsim" run "$src/examples/plugin/ping_pong.textproto" --plugin "$work/plugin/ping_pong.so")
echo "$out"
grep -q "workload 0 ping_pong on 2 node(s): 2 Finished" <<<"$out"
# Each leg, exactly: 300 ns api_call + 7 B copied at 8 Gb/s (7 ns) to send,
# (7+64) B at 1 Gb/s on the management link (568 ns), 50 us latency, and the
# same 307 ns to receive: 51182 ns, so 102364 ns per round trip.
grep -qE "mgmt_round_trip +102364 ns" <<<"$out" || { echo "round trip is not 102364 ns"; exit 1; }
# (Captured first: grep -q stops reading at its match, and with pipefail the
# writer's SIGPIPE would fail the pipeline.)
listing=$("$work/prefix/bin/nicsim" list --plugin "$work/plugin/ping_pong.so")
grep -q "ping_pong .*\[$work/plugin/ping_pong.so\]" <<<"$listing"
# A plugin that does not exist is bad input (exit 2) with the file named.
set +e
"$work/prefix/bin/nicsim" run "$src/examples/plugin/ping_pong.textproto" --plugin "$work/missing.so" 2>"$work/err"
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "missing.so: cannot load plugin" "$work/err"
echo "plugin test passed"
