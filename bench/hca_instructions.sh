#!/bin/bash
# Instructions per simulated IB packet on the HCA path (see
# instructions_per_packet.sh).   bench/hca_instructions.sh BUILD_DIR [SHORT_ITERS [LONG_ITERS]]
exec "$(dirname "$0")/instructions_per_packet.sh" "${1:?usage: hca_instructions.sh BUILD_DIR [SHORT_ITERS [LONG_ITERS]]}" hca "${@:2}"
