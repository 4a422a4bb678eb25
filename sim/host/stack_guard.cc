#include "host/stack_guard.h"

#include <signal.h>
#include <unistd.h>
#include <ucontext.h>

#include <cstdlib>
#include <vector>

namespace nicsim::host {

namespace {

struct Guarded {
  const void* key;
  std::uintptr_t lo;  // lowest usable address (approximately the red zone)
  std::uintptr_t hi;  // top of the stack as seen by the thread's first frame
  std::string message;
};

// Only read in the handler. The simulation is single-threaded and a SIGSEGV
// is synchronous, so the handler never sees the vector mid-update unless the
// fault is inside this file's own bookkeeping.
std::vector<Guarded>& guarded() {
  static std::vector<Guarded> v;
  return v;
}

struct sigaction g_previous;
bool g_installed = false;
// Faults below the red zone can land this far away when a frame with a
// large local array skips over it.
constexpr std::uintptr_t kBelowSlack = 1u << 20;
constexpr std::uintptr_t kRedZoneSlack = 16u << 10;

void chain(int sig, siginfo_t* info, void* uc) {
  if ((g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_sigaction) {
    g_previous.sa_sigaction(sig, info, uc);
    return;
  }
  if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
    return;
  }
  // Default action: returning re-executes the faulting access, which now
  // kills the process with SIGSEGV as it would have without us.
  signal(sig, SIG_DFL);
}

void on_segv(int sig, siginfo_t* info, void* ucv) {
  auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
  std::uintptr_t sp = 0;
#if defined(__x86_64__)
  sp = static_cast<std::uintptr_t>(static_cast<ucontext_t*>(ucv)->uc_mcontext.gregs[REG_RSP]);
#endif
  for (const Guarded& g : guarded()) {
    bool addr_in_zone = addr + kBelowSlack >= g.lo && addr < g.lo + kRedZoneSlack;
    bool sp_in_stack = sp == 0 || (sp + kBelowSlack >= g.lo && sp <= g.hi);
    if (addr_in_zone && sp_in_stack) {
      ssize_t ignored = write(2, g.message.data(), g.message.size());
      (void)ignored;
      signal(sig, SIG_DFL);
      return;
    }
  }
  chain(sig, info, ucv);
}

void install() {
  if (g_installed) return;
  g_installed = true;
  // The overflowing stack is unusable, so the handler needs its own.
  static std::vector<char> alt(256u << 10);
  stack_t ss{};
  ss.ss_sp = alt.data();
  ss.ss_size = alt.size();
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &g_previous);
}

}  // namespace

void stack_guard_add(const void* key, const void* top, std::size_t size, std::string message) {
  install();
  auto hi = reinterpret_cast<std::uintptr_t>(top);
  guarded().push_back(Guarded{key, hi > size ? hi - size : 0, hi, std::move(message)});
}

void stack_guard_remove(const void* key) {
  auto& v = guarded();
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i].key == key) {
      v[i] = std::move(v.back());
      v.pop_back();
      return;
    }
  }
}

}  // namespace nicsim::host
