// The pending calendar wake-ups of an engine that runs when woken and, when
// it still has work, asks to be woken again (a pump).
//
// A request at `at` needs a new calendar event only when no wake-up is
// pending at or before `at`: the earlier one runs the engine first, and the
// engine asks again if it must. Every event this lets through is earlier than
// all pending ones, so the pending times form a stack, latest at the bottom;
// the event that fires is always the top. Remembering all of them (not only
// the earliest) keeps a wake-up that is already pending at the engine's
// next-free time from being scheduled a second time there.
#pragma once
#include <vector>

#include "core/units.h"

namespace nicsim {

class Wakeups {
 public:
  // True when the caller must schedule a calendar event at `at`.
  bool request(Tick at) {
    if (!pending_.empty() && pending_.back() <= at) return false;
    pending_.push_back(at);
    return true;
  }
  // The earliest pending wake-up fired (its event calls this first).
  void fired() {
    if (!pending_.empty()) pending_.pop_back();
  }

 private:
  std::vector<Tick> pending_;  // descending: the earliest at the back
};

}  // namespace nicsim
