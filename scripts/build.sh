#!/usr/bin/env bash
# Configures and builds nicsim in ./build (Release, 2 jobs).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2
