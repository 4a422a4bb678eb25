// The software stacks' entry points (verbs, kernel verbs, CMA, TI, DAT, ep)
// announce each call by name, so that the debugger can stop at a call on a
// node. With no observer, which is every run but a debugging one, an
// announcement is one load and a compare.
#pragma once

namespace nicsim::host {

class Host;

class ApiCalls {
 public:
  // `node`: the host whose thread (or interrupt context) makes the call;
  // nullptr for a call from outside any node (a test's main thread).
  using Observer = void (*)(void* ctx, Host* node, const char* name);
  static void observe(Observer fn, void* ctx) {
    observer_ = fn;
    context_ = ctx;
  }
  static void note(const char* name) {
    if (observer_) [[unlikely]]
      notify(name);
  }

 private:
  static void notify(const char* name);
  static inline Observer observer_ = nullptr;
  static inline void* context_ = nullptr;
};

}  // namespace nicsim::host

// At the top of an entry point: the call under the function's own name, or
// under `name` where the function's name is not the API's (the verbs table).
#define NICSIM_API_CALL() ::nicsim::host::ApiCalls::note(__func__)
#define NICSIM_API_CALL_NAMED(name) ::nicsim::host::ApiCalls::note(name)
