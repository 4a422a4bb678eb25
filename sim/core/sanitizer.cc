// SystemC's QuickThreads coroutines announce each stack switch to
// AddressSanitizer (__sanitizer_start/finish_switch_fiber) when they yield,
// but not when a finished thread hands over to the next coroutine
// (sc_cor_pkg_qt::abort in SystemC 2.3.4). When the last thread to run
// before sc_start returns has finished, ASan therefore still takes that
// thread's stack for the main thread's, after SystemC has unmapped it:
// LeakSanitizer's exit-time scan then reads unmapped memory and dies
// instead of checking for leaks, and an exception thrown on the main stack
// would be unwound against the wrong bounds. sanitizer_on_main_stack()
// puts the real main stack back; it also runs at exit, before the leak
// check (atexit handlers run in reverse order, and ASan registers its own
// at start-up), for programs that call sc_start themselves.
#include "core/sanitizer.h"

// GCC says ASan is on with __SANITIZE_ADDRESS__, clang with __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define NICSIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NICSIM_ASAN 1
#endif
#endif

#if defined(NICSIM_ASAN)
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>

#include <cstdlib>

namespace nicsim {
namespace {

const char* g_main_bottom = nullptr;
std::size_t g_main_size = 0;

// Static initialisers run on the main thread's own stack.
const bool g_registered = [] {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return false;
  void* bottom = nullptr;
  std::size_t size = 0;
  pthread_attr_getstack(&attr, &bottom, &size);
  pthread_attr_destroy(&attr);
  g_main_bottom = static_cast<const char*>(bottom);
  g_main_size = size;
  std::atexit(sanitizer_on_main_stack);
  return true;
}();

}  // namespace

void sanitizer_on_main_stack() {
  char here;
  if (&here < g_main_bottom || &here >= g_main_bottom + g_main_size) return;
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, g_main_bottom, g_main_size);
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
}

}  // namespace nicsim
#else
namespace nicsim {
void sanitizer_on_main_stack() {}
}  // namespace nicsim
#endif
