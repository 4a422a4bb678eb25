// Running as one rank of a run over several processes (docs/partition.md):
// under mpirun nicsim loads the MPI engine, a plug-in built only where MPI
// is installed, so that nicsim itself needs no MPI.
#pragma once
#include <memory>
#include <string>

#include "core/block_exchange.h"

namespace nicsim {

// Whether an MPI launcher started this process (its environment says so).
bool launched_by_mpi();

// Loads libnicsim_mpi.so (next to the executable, or in ../lib) and joins
// the run's ranks; nullptr with `error` set when it cannot.
std::unique_ptr<RankTransport> load_mpi_engine(int* argc, char*** argv, std::string& error);

}  // namespace nicsim
