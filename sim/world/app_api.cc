// The C functions of nicsim/app.h, on top of the host model and the world.
#include <fmt/format.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/sim.h"
#include "host/host.h"
#include "nicsim/app.h"
#include "trace/trace.h"
#include "world/programs.h"
#include "world/world.h"

using namespace nicsim;

namespace {

// An argument check (ProgramRegistry::check_args) runs before there is a
// simulation: a call it may not make is recorded as its misuse.
bool outside_simulation(const char* call) {
  ArgsCheckReport* check = current_args_check();
  if (check && check->misuse.empty()) check->misuse = call;
  return check != nullptr;
}

// Programs call these only from their own simulated threads; a call from
// anywhere else is a usage error reported once per call site kind.
ProgramInstance* self(const char* call) {
  ProgramInstance* p = current_program();
  if (!p && !outside_simulation(call)) Sim::get().error("app", fmt::format("{} called outside a program thread", call));
  return p;
}

// Charges the call's CPU cost and records it in the trace ("api" component).
void charge(ProgramInstance* p, const char* call, std::uint64_t bytes = 0) {
  Sim& sim = Sim::get();
  const std::uint32_t dev = p->node().id();
  if (sim.tracer().on(dev, Component::api))
    sim.tracer().record(now(), dev, Component::api, call, {{"program", p->info().name}, {"bytes", bytes}});
  p->node().host().charge("api_call", bytes);
}

// Barrier tags: 0xff000000 | workload << 8 | generation; programs are told
// to keep their own tags below 0xff000000.
constexpr std::uint32_t kBarrierTagBase = 0xff000000u;

}  // namespace

extern "C" {

int nicsim_register_program(const char* name, nicsim_program_fn fn, const char* doc) {
  if (!name) return -1;
  return ProgramRegistry::instance().add(name, fn, doc ? doc : "") ? 0 : -1;
}

int nicsim_register_program_checked(const char* name, nicsim_program_fn fn, nicsim_args_check_fn check,
                                    const char* doc) {
  if (!name) return -1;
  return ProgramRegistry::instance().add(name, fn, doc ? doc : "", check) ? 0 : -1;
}

uint32_t nicsim_node_id(void) {
  ProgramInstance* p = self("nicsim_node_id");
  return p ? p->node().id() : 0;
}

const char* nicsim_node_name(void) {
  ProgramInstance* p = self("nicsim_node_name");
  return p ? p->node().name().c_str() : "";
}

uint32_t nicsim_node_count(void) {
  if (outside_simulation("nicsim_node_count")) return 0;
  World* w = World::current();
  return w ? static_cast<uint32_t>(w->num_nodes()) : 0;
}

const char* nicsim_node_name_of(uint32_t node_id) {
  if (outside_simulation("nicsim_node_name_of")) return nullptr;
  World* w = World::current();
  return w && node_id < w->num_nodes() ? w->node(node_id).name().c_str() : nullptr;
}

uint32_t nicsim_workload_size(void) {
  ProgramInstance* p = self("nicsim_workload_size");
  return p ? static_cast<uint32_t>(p->workload().nodes.size()) : 0;
}

uint32_t nicsim_workload_rank(void) {
  ProgramInstance* p = self("nicsim_workload_rank");
  return p ? p->rank() : 0;
}

uint32_t nicsim_workload_node(uint32_t rank) {
  ProgramInstance* p = self("nicsim_workload_node");
  if (!p || rank >= p->workload().nodes.size()) return NICSIM_ANY_NODE;
  return p->workload().nodes[rank];
}

uint64_t nicsim_now_ps(void) { return outside_simulation("nicsim_now_ps") ? 0 : now(); }
uint64_t nicsim_now_ns(void) { return outside_simulation("nicsim_now_ns") ? 0 : now() / kNs; }

void nicsim_sleep_ps(uint64_t ps) {
  if (ProgramInstance* p = self("nicsim_sleep_ps")) p->node().host().sleep(ps);
}

void nicsim_sleep_ns(uint64_t ns) {
  if (ProgramInstance* p = self("nicsim_sleep_ns")) p->node().host().sleep(mul_saturating(ns, kNs));
}

void nicsim_yield(void) {
  if (ProgramInstance* p = self("nicsim_yield")) p->node().host().yield();
}

nicsim_thread_t nicsim_thread_spawn(void (*fn)(void* arg), void* arg, const char* name) {
  ProgramInstance* p = self("nicsim_thread_spawn");
  if (!p || !fn) return nullptr;
  host::Host& h = p->node().host();
  // Host::spawn charges thread_spawn to the new thread before its body runs.
  host::HostThread* t = h.spawn(name ? name : "thread", [fn, arg] { fn(arg); });
  t->user_context = p;
  return reinterpret_cast<nicsim_thread_t>(t);
}

int nicsim_thread_join(nicsim_thread_t thread) {
  ProgramInstance* p = self("nicsim_thread_join");
  if (!p || !thread) return -1;
  host::Host& h = p->node().host();
  auto* t = reinterpret_cast<host::HostThread*>(thread);
  for (auto& owned : h.threads())
    if (owned.get() == t) return h.join(t) ? 0 : -1;
  return -1;  // not a thread of this node
}

void* nicsim_alloc(size_t bytes, size_t align) {
  ProgramInstance* p = self("nicsim_alloc");
  if (!p) return nullptr;
  charge(p, "nicsim_alloc");
  return p->node().host().memory().alloc(bytes, align ? align : 64);
}

void nicsim_free(void* ptr) {
  ProgramInstance* p = self("nicsim_free");
  if (!p || !ptr) return;
  if (!p->node().host().memory().free_checked(ptr))
    Sim::get().error(p->node().name(), fmt::format("nicsim_free of {} which this node did not allocate", ptr));
}

void** nicsim_program_context(void) {
  ProgramInstance* p = self("nicsim_program_context");
  return p ? &p->context : nullptr;
}

void nicsim_log(const char* format, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, format);
  std::vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  if (ArgsCheckReport* check = current_args_check()) {
    check->last_log = buf;
    return;
  }
  ProgramInstance* p = self("nicsim_log");
  if (!p) return;
  p->logged(buf);
  Sim& sim = Sim::get();
  const std::uint32_t dev = p->node().id();
  if (sim.tracer().on(dev, Component::program))
    sim.tracer().record(now(), dev, Component::program, "log", {{"program", p->info().name}, {"text", buf}});
  if (std::getenv("NICSIM_VERBOSE"))
    std::fprintf(stderr, "[%s %s] %s\n", format_time(now()).c_str(), p->node().name().c_str(), buf);
}

void nicsim_result(const char* name, double value, const char* unit) {
  if (ProgramInstance* p = self("nicsim_result")) p->result(name ? name : "", value, unit ? unit : "");
}

void nicsim_result_tail(const char* name, const uint64_t* samples, uint32_t n, double divisor, const char* unit) {
  ProgramInstance* p = self("nicsim_result_tail");
  if (!p || !samples || n == 0) return;
  std::vector<std::uint64_t> sorted(samples, samples + n);
  const auto rank = sorted.begin() + static_cast<std::ptrdiff_t>((std::uint64_t{n} * 99 + 99) / 100 - 1);
  std::nth_element(sorted.begin(), rank, sorted.end());
  const std::string base = name ? name : "", u = unit ? unit : "";
  p->result(base + "_p99", static_cast<double>(*rank) / divisor, u);
  p->result(base + "_max", static_cast<double>(*std::max_element(rank, sorted.end())) / divisor, u);
}

void nicsim_fail(const char* reason) {
  if (ArgsCheckReport* check = current_args_check()) {
    if (check->failure.empty()) check->failure = reason ? reason : "failed";
    return;
  }
  if (ProgramInstance* p = self("nicsim_fail")) p->fail(reason ? reason : "failed");
}

namespace {

// One whole decimal number in [min, max] at `text`, ending at `stop` or the
// end of the string; *end is left after it.
bool whole_number(const char* text, char stop, std::uint64_t min, std::uint64_t max, std::uint64_t* out,
                  const char** end) {
  std::uint64_t v = 0;
  const char* p = text;
  for (; *p >= '0' && *p <= '9'; ++p) {
    if (v > (UINT64_MAX - static_cast<std::uint64_t>(*p - '0')) / 10) return false;
    v = v * 10 + static_cast<std::uint64_t>(*p - '0');
  }
  *end = p;
  if (p == text || (*p != '\0' && *p != stop) || v < min || v > max) return false;
  *out = v;
  return true;
}

// `cap`: 0 for one number, else the most a list may hold.
int bad_argument(const char* arg, std::uint64_t min, std::uint64_t max, std::uint32_t cap) {
  const std::string range = fmt::format("a whole number from {} to {}", min, max);
  nicsim_fail((cap == 0 ? fmt::format("{}: expected {}", arg, range)
                        : fmt::format("{}: expected 1 to {} numbers separated by commas, each {}", arg, cap, range))
                  .c_str());
  return -1;
}

}  // namespace

int nicsim_arg_u64(const char* arg, const char* key, uint64_t min, uint64_t max, uint64_t* out) {
  if (!arg || !key || !out) return -1;
  const std::size_t n = std::strlen(key);
  if (std::strncmp(arg, key, n) != 0) return 0;
  const char* end = nullptr;
  return whole_number(arg + n, '\0', min, max, out, &end) ? 1 : bad_argument(arg, min, max, 0);
}

int nicsim_arg_u64_list(const char* arg, const char* key, uint64_t min, uint64_t max, uint64_t* out, uint32_t cap,
                        uint32_t* n) {
  if (!arg || !key || !out || !n) return -1;
  const std::size_t len = std::strlen(key);
  if (std::strncmp(arg, key, len) != 0) return 0;
  std::uint32_t count = 0;
  for (const char* p = arg + len;; ++p) {
    const char* end = nullptr;
    if (count == cap || !whole_number(p, ',', min, max, &out[count], &end)) return bad_argument(arg, min, max, cap);
    ++count;
    p = end;
    if (*p == '\0') break;
  }
  *n = count;
  return 1;
}

int nicsim_mgmt_send(uint32_t dst_node, uint32_t tag, const void* buf, size_t len) {
  ProgramInstance* p = self("nicsim_mgmt_send");
  if (!p || (!buf && len)) return -1;
  charge(p, "nicsim_mgmt_send", len);
  return World::current()->mgmt().send(p->node().id(), dst_node, tag, buf, len) ? 0 : -1;
}

long nicsim_mgmt_recv(uint32_t src_node, uint32_t tag, void* buf, size_t cap, uint32_t* from, uint64_t timeout_ns) {
  ProgramInstance* p = self("nicsim_mgmt_recv");
  if (!p || (!buf && cap)) return -1;
  host::BlockScope blocked(p->node().host(), "nicsim_mgmt_recv");
  long n =
      World::current()->mgmt().recv(p->node().id(), src_node, tag, buf, cap, from, mul_saturating(timeout_ns, kNs));
  if (n > 0) charge(p, "nicsim_mgmt_recv", static_cast<std::uint64_t>(n));
  return n;
}

int nicsim_barrier(void) {
  ProgramInstance* p = self("nicsim_barrier");
  if (!p) return -1;
  // Gather at rank 0, then release; tags carry the barrier generation so
  // back-to-back barriers never mix.
  const auto& nodes = p->workload().nodes;
  const std::uint32_t tag = kBarrierTagBase | ((p->workload_index() & 0xffff) << 8) |
                            static_cast<std::uint32_t>(p->barrier_generation++ & 0xff);
  const std::uint32_t root = nodes[0];
  char token = 0;
  if (p->rank() == 0) {
    for (std::size_t i = 1; i < nodes.size(); ++i)
      if (nicsim_mgmt_recv(NICSIM_ANY_NODE, tag, &token, 1, nullptr, 0) < 0) return -1;
    for (std::size_t i = 1; i < nodes.size(); ++i)
      if (nicsim_mgmt_send(nodes[i], tag, &token, 1) != 0) return -1;
    return 0;
  }
  if (nicsim_mgmt_send(root, tag, &token, 1) != 0) return -1;
  return nicsim_mgmt_recv(root, tag, &token, 1, nullptr, 0) < 0 ? -1 : 0;
}

}  // extern "C"
