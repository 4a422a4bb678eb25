#!/usr/bin/env bash
# Checks the C++ code style (.clang-format) of the tracked C++ sources;
# --fix rewrites them. The public C headers (*/include/), the C programs
# (*.c and the headers they share) and the kernel shims under a seed's
# sample code keep the kernel style of the specifications and are left
# alone.
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=$(command -v clang-format-14 || command -v clang-format || true)
[ -n "$fmt" ] || { echo "format.sh: clang-format is not installed (scripts/deps.sh installs it)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cc' '*.h' |
  grep -vE '^(sim|verbs|ep|cm)/include/|^cm/tests/seed/|^ti/tests/seed_sample/|^verbs/perftest/|^ep/eip/|^ep/lib/programs/')
if [ "${1:-}" = "--fix" ]; then
  "$fmt" -i "${files[@]}"
  exit 0
fi
"$fmt" --dry-run -Werror "${files[@]}"
echo "format.sh: ${#files[@]} files follow .clang-format"
