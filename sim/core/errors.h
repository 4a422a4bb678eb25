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
  // Called with every error as it is reported (the debugger's error
  // breakpoints); nullptr: nobody.
  using Observer = void (*)(void* ctx, const SimError& e);
  void set_observer(Observer o, void* ctx) {
    observer_ = o;
    observer_ctx_ = ctx;
  }

 private:
  std::vector<SimError> errors_;
  Observer observer_ = nullptr;
  void* observer_ctx_ = nullptr;
};

}  // namespace nicsim
