// The software stacks' entry points (verbs, kernel verbs, CMA, TI, DAT, ep)
// announce each call by name, so that the debugger can stop at a call on a
// node and the timeline can show it on the calling thread's track. With no
// observer, which is every run without either, an announcement is one load
// and a compare.
#pragma once
#include <array>
#include <cstddef>

namespace nicsim::host {

class Host;

class ApiCalls {
 public:
  // `node`: the host whose thread (or interrupt context) makes the call;
  // nullptr for a call from outside any node (a test's main thread).
  using Observer = void (*)(void* ctx, Host* node, const char* name);
  // Adds an observer (at most kMaxObservers); returns its slot for remove().
  static std::size_t add(Observer fn, void* ctx);
  static void remove(std::size_t slot);
  static void note(const char* name) {
    if (observers_) [[unlikely]]
      notify(name);
  }

 private:
  static constexpr std::size_t kMaxObservers = 4;
  struct Slot {  // an empty slot is all zeros (slots_ is value-initialised)
    Observer fn;
    void* ctx;
  };
  static void notify(const char* name);
  static inline std::size_t observers_ = 0;  // slots in use
  static inline std::array<Slot, kMaxObservers> slots_{};
};

}  // namespace nicsim::host

// At the top of an entry point: the call under the function's own name, or
// under `name` where the function's name is not the API's (the verbs table).
#define NICSIM_API_CALL() ::nicsim::host::ApiCalls::note(__func__)
#define NICSIM_API_CALL_NAMED(name) ::nicsim::host::ApiCalls::note(name)
