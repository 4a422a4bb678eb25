#!/usr/bin/env bash
# Installs the Debian packages nicsim needs (only those missing).
set -euo pipefail
pkgs=(cmake g++ make pkg-config libsystemc-dev libboost-dev libboost-program-options-dev
      libprotobuf-dev protobuf-compiler libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev tshark
      clang-format gnuplot-nox chromium libedit-dev python3-protobuf clang-14 libfuzzer-14-dev
      libopenmpi-dev openmpi-bin)  # the last two: the MPI engine (nicsim builds and runs without it)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  # env after sudo: sudo would drop a DEBIAN_FRONTEND set before it, and
  # tshark's package asks a debconf question otherwise.
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi
