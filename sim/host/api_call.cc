#include "host/api_call.h"

#include <stdexcept>

#include "host/host.h"

namespace nicsim::host {

std::size_t ApiCalls::add(Observer fn, void* ctx) {
  for (std::size_t i = 0; i < kMaxObservers; ++i)
    if (!slots_[i].fn) {
      slots_[i] = Slot{fn, ctx};
      ++observers_;
      return i;
    }
  throw std::logic_error("ApiCalls: more than four observers");
}

void ApiCalls::remove(std::size_t slot) {
  if (slot >= kMaxObservers || !slots_[slot].fn) return;
  slots_[slot] = Slot{nullptr, nullptr};
  --observers_;
}

void ApiCalls::notify(const char* name) {
  Host* node = Host::current_host();
  for (const Slot& s : slots_)
    if (s.fn) s.fn(s.ctx, node, name);
}

}  // namespace nicsim::host
