#!/usr/bin/env bash
# The libFuzzer targets (docs/fuzzing.md): builds the fuzzed layers with
# clang, ASan, UBSan and libFuzzer's coverage in ./build-fuzz, then runs each
# target RUNS times (default 10000) from its seed corpus, new inputs going
# to build-fuzz/<layer>/<target>.corpus. `scripts/fuzz.sh 1000000
# fuzz_hca_packet` runs one target longer. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10000}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_scenario fuzz_hca_packet fuzz_mad fuzz_elan_packet fuzz_program_args)
./scripts/deps.sh
clangxx=$(command -v clang++-16 || true)
if [ -z "$clangxx" ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang-16 libclang-rt-16-dev
fi
# Clang 15 or later: libstdc++ 12's std::source_location needs
# __builtin_source_location, which clang 14 lacks.
CC=clang-16 CXX=clang++-16 cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNICSIM_SANITIZE=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" >/dev/null
cmake --build build-fuzz -j2 --target "${targets[@]}"
# As the sanitizer job sets them (scripts/sanitize.sh), with a smaller
# quarantine for freed memory: with ASan's 256 MB each allocation touches
# fresh pages (docs/fuzzing.md).
export ASAN_OPTIONS=detect_stack_use_after_return=0:quarantine_size_mb=16
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
for t in "${targets[@]}"; do
  exe=$(find build-fuzz -name "$t" -type f -perm -u+x | head -1)
  layer=$(dirname "${exe#build-fuzz/}")
  mkdir -p "build-fuzz/$layer/$t.corpus"
  echo "== $t: $runs runs"
  "$exe" -runs="$runs" -seed=1 -print_final_stats=1 "build-fuzz/$layer/$t.corpus" "$layer/fuzz/corpus/$t"
done
