#!/usr/bin/env bash
# Installs, builds, and runs the default scenario, writing results to out/quickstart.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
./scripts/build.sh
./build/sim/nicsim run scenarios/quickstart.textproto --out out/quickstart
