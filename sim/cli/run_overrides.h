// Changes `nicsim run` makes to a loaded scenario from its command line, so
// a benchmark can sweep a program argument or a model parameter without
// editing the scenario file.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scenario/loader.h"

namespace nicsim {

// `args` are "--key=value" or "--flag": each replaces the argument with the
// same "--key=" (or the same flag) of every workload, or is appended to it;
// "PROGRAM:--key=value" does so only for the workloads that run PROGRAM (a
// scenario that mixes programs takes one's argument without the others
// refusing it). Returns "" or the rule broken.
// A whole decimal number as typed on the command line: digits only (no sign,
// which Boost's conversion would wrap round), at most 2^64 - 1.
bool parse_whole_number(const std::string& text, std::uint64_t& out);

std::string override_program_args(Scenario& scenario, const std::vector<std::string>& args);

// `params` are "scope.name=value" for the node scopes ("host.", "bus.",
// "nic.") and links ("link."): each is set on every node (of a NIC kind that
// has the parameter) or link. Returns "" or the rule broken (a malformed
// override, a parameter nothing in the scenario has, a bad value).
std::string override_params(Scenario& scenario, const std::vector<std::string>& params);

}  // namespace nicsim
