// `nicsim debug SCENARIO`: a debugging session on the terminal, from a
// script, or served to remote clients.
#pragma once
#include <string>

#include "scenario/loader.h"

namespace nicsim::debug {

struct DebugOptions {
  std::string script;         // replay this command file (a session as a test)
  std::string listen;         // serve remote clients on HOST:PORT (debug/remote.h)
  bool allow_remote = false;  // listen on an address other than loopback
};

// Runs the session; the exit code for the command line.
int debug_main(const Scenario& scenario, const DebugOptions& options);

}  // namespace nicsim::debug
