#!/usr/bin/env bash
# Installs, builds, and runs the test suite (one process per test). Long
# soak and benchmark runs are labelled "bench" and excluded here; their
# short versions are labelled "bench-short" and do run.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
./scripts/build.sh
cd build && ctest -j2 --output-on-failure -LE '^bench$'
