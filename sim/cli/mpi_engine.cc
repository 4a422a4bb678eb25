#include "cli/mpi_engine.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

namespace nicsim {

bool launched_by_mpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(var)) return true;
  return false;
}

std::unique_ptr<RankTransport> load_mpi_engine(int* argc, char*** argv, std::string& error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe_dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  void* lib = nullptr;
  std::string tried;
  for (const fs::path& p : {exe_dir / "libnicsim_mpi.so", exe_dir / ".." / "lib" / "libnicsim_mpi.so"}) {
    lib = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) break;
    tried += fmt::format("{}{}", tried.empty() ? "" : "; ", dlerror());
  }
  if (!lib) {
    error = fmt::format(
        "started by mpirun, but the MPI engine cannot be loaded ({}); build nicsim with MPI installed "
        "(scripts/deps.sh installs it)",
        tried);
    return nullptr;
  }
  using Create = RankTransport* (*)(int*, char***);
  auto create = reinterpret_cast<Create>(dlsym(lib, "nicsim_mpi_transport"));
  if (!create) {
    error = "libnicsim_mpi.so has no nicsim_mpi_transport";
    return nullptr;
  }
  return std::unique_ptr<RankTransport>(create(argc, argv));
}

}  // namespace nicsim
