// libFuzzer target: arbitrary text as a scenario file, through the loader
// as `nicsim run` takes it (the workloads' arguments through their
// programs' own parsers): either a ScenarioError located in the file
// (file:line:column, 1-based) or a Scenario, from which the world is then
// built (nodes, NICs, switches, links, routes, programs) and taken down
// again without running. A world the scenario cannot build is reported as
// `nicsim run` reports it (an exception, exit code 2); anything else that
// escapes (a crash, a sanitizer report, a leak, a hang) is a finding.
//
// SystemC keeps the processes of a world built and taken down before any
// simulation ran (they can only be killed once it has started), so each
// world is built in a child process: the loader's coverage guides the
// fuzzing, a child that does not end cleanly (a crash, a sanitizer report,
// an exception other than the world's own) is a finding. The child ends
// without the leak check (it would see the parent's state as its own).
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include <google/protobuf/stubs/logging.h>

#include "core/sim.h"
#include "scenario/loader.h"
#include "world/programs.h"
#include "world/world.h"

namespace {

// Worlds past these sizes take seconds to build; the loader's own checks
// run on every input all the same.
constexpr std::size_t kMaxNodes = 64, kMaxSwitches = 64, kMaxLinks = 256;

// Topology helpers are held to this (an error located at the shape, as the
// loader's own caps give): a 16,384-host tree took 91 s to load under the
// sanitizers, and such inputs came to dominate the run.
constexpr nicsim::LoadLimits kLoadLimits{.topology_hosts = 1024, .topology_links = 4096};

bool located(const nicsim::ScenarioError& e) {
  const nicsim::SourceLoc& l = e.loc();
  const std::string what = e.what();
  return l.file == "fuzz.textproto" && l.line >= 0 && l.column >= 0 && what.rfind(l.file + ":", 0) == 0;
}

void build(const nicsim::Scenario& sc) {
  if (sc.nodes.size() > kMaxNodes || sc.switches.size() > kMaxSwitches || sc.links.size() > kMaxLinks) return;
  const pid_t child = fork();
  if (child == 0) {
    {
      nicsim::Sim sim(sc.seed);
      try {
        nicsim::World world(sc);
      } catch (const std::exception&) {
        // `nicsim run` prints it and exits 2.
      }
    }
    _exit(0);
  }
  if (child < 0) return;
  // libFuzzer's timer (SIGALRM, each second) may interrupt the wait: a
  // child not waited for would be a finding missed and a zombie left.
  int status = 0;
  pid_t got = 0;
  do {
    got = waitpid(child, &status, 0);
  } while (got < 0 && errno == EINTR);
  if (got != child) return;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "building the world failed (wait status %#x)\n", static_cast<unsigned>(status));
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  nicsim::Scenario sc;
  try {
    sc = nicsim::load_scenario_text(text, "fuzz.textproto", nicsim::registered_programs(), kLoadLimits);
  } catch (const nicsim::ScenarioError& e) {
    if (!located(e)) {
      std::fprintf(stderr, "a scenario error without its place: %s\n", e.what());
      std::abort();
    }
    return 0;
  }
  build(sc);
  return 0;
}
