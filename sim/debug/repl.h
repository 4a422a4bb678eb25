// `nicsim debug SCENARIO`: a debugging session on the terminal, from a
// script.
#pragma once
#include <string>

#include "scenario/loader.h"

namespace nicsim::debug {

struct DebugOptions {
  std::string script;   // replay this command file (a session as a test)
};

// Runs the session; the exit code for the command line.
int debug_main(const Scenario& scenario, const DebugOptions& options);

}  // namespace nicsim::debug
