// The debugging session served to remote clients over TCP, and the client
// (protocol: sim/proto/debug.proto).
#pragma once
#include <string>

#include "debug/session.h"

namespace nicsim::debug {

// Serves `session` on HOST:PORT (port 0: any free port) until a client
// quits it; prints "listening on HOST:PORT token TOKEN" first. Only a
// loopback address unless `allow_remote`. Returns the exit code.
int serve_remote(Session& session, const std::string& listen, bool allow_remote);
// `nicsim attach HOST:PORT --token T`: sends the commands of `script` (or of
// standard input) and prints the answers and the events pushed meanwhile.
int attach_main(const std::string& address, const std::string& token, const std::string& script);

}  // namespace nicsim::debug
