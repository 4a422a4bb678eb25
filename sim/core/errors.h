// Errors found while the simulation runs (protocol violations, blocking in
// interrupt context, bus master aborts, illegal FSM transitions...). They do
// not stop the run; they are reported and make `nicsim run` exit 1.
#pragma once
#include <string>
#include <vector>

#include "core/units.h"

namespace nicsim {

struct SimError {
  Tick time;
  std::string where;    // object path, e.g. "h0.host" or "leaf0.port3"
  std::string message;  // what rule was broken
};

class SimErrors {
 public:
  void report(Tick time, std::string where, std::string message);
  const std::vector<SimError>& all() const { return errors_; }
  bool empty() const { return errors_.empty(); }
  void clear() { errors_.clear(); }

 private:
  std::vector<SimError> errors_;
};

}  // namespace nicsim
