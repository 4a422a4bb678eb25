// Host: threads, the CPU model and the blocking rules. Synchronisation
// primitives are in sync.cc, the interrupt controller in irq.cc, memory in
// memory.cc.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "host/host.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <unordered_map>

#include "core/sanitizer.h"
#include "core/sim.h"
#include "host/stack_guard.h"
#include "trace/trace.h"

namespace nicsim::host {

namespace {

// Which Host a running process belongs to (its threads and its interrupt
// thread), for Host::current_host().
std::unordered_map<const sc_core::sc_object*, Host*>& process_hosts() {
  static std::unordered_map<const sc_core::sc_object*, Host*> m;
  return m;
}

// SystemC wants object names unique among siblings and made of [A-Za-z0-9_];
// thread names come from programs and may repeat, so derive a legal unique one.
std::string unique_process_name(std::string_view wanted) {
  std::string base;
  for (char c : wanted) base.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_');
  if (base.empty()) base = "thread";
  sc_core::sc_object* parent = sc_core::sc_get_current_object();
  std::string prefix = parent ? std::string(parent->name()) + "." : std::string();
  std::string candidate = base;
  for (unsigned n = 1; sc_core::sc_find_object((prefix + candidate).c_str()); ++n)
    candidate = fmt::format("{}_{}", base, n);
  return candidate;
}

}  // namespace

Host::Host(sc_core::sc_module_name name, std::uint32_t node_id, const ParamSet& params)
    : sc_core::sc_module(name), node_id_(node_id), params_(params), calendar_(&Sim::get().calendar()) {
  cpus_ = static_cast<std::uint32_t>(params_.count("cpus"));
  cpus_free_ = cpus_;
  Calendar::set_thread_block_fn([](std::uint32_t& block) {
    const Host* h = current_host();
    if (h) block = h->block_;
    return h != nullptr;
  });
  std::uint64_t stack = params_.size("thread_stack");
  stack_bytes_ = static_cast<int>(std::min<std::uint64_t>(stack, std::numeric_limits<int>::max()));
  copy_bandwidth_ = params_.bandwidth("copy_bandwidth");
  memory_ = std::make_unique<HostMemory>(params_.size("memory"));
  irq_ = std::make_unique<InterruptController>(*this);
  sc_core::sc_spawn_options opts;
  opts.set_stack_size(stack_bytes_);
  sc_core::sc_process_handle h = sc_core::sc_spawn(
      [this] {
        char top;
        stack_guard_add(this, &top, static_cast<std::size_t>(stack_bytes_),
                        fmt::format("nicsim: stack overflow in the interrupt handlers of node {} ({}): "
                                    "thread_stack is {} bytes; raise the host parameter thread_stack\n",
                                    node_id_, this->name(), stack_bytes_));
        irq_->thread_body();
      },
      unique_process_name("irq").c_str(), &opts);
  irq_process_ = h.get_process_object();
  process_hosts()[irq_process_] = this;
}

Host::~Host() {
  release_software();
  forget_processes();
}

void Host::release_software() {
  while (!software_.empty()) software_.pop_back();
}

void Host::forget_processes() {
  forget_process(irq_process_);
  irq_process_ = nullptr;
  stack_guard_remove(this);
  for (auto& [process, thread] : by_process_) {
    forget_process(process);
    stack_guard_remove(thread);
    thread->process_ = nullptr;
  }
  by_process_.clear();
  last_thread_process_ = nullptr;
  last_thread_ = nullptr;
}

void Host::trace(const char* event, const std::string& name) {
  Tracer& tr = Sim::get().tracer();
  if (tr.on(node_id_, Component::host)) tr.record(now(), node_id_, Component::host, event, {{"name", name}});
}

HostThread* Host::spawn(std::string name, std::function<void()> body) {
  auto owned = std::make_unique<HostThread>();
  HostThread* t = owned.get();
  t->name_ = std::move(name);
  t->host_ = this;
  threads_.push_back(std::move(owned));

  bool pay_spawn = sc_core::sc_is_running();
  // The new process is visible to the kernel at once.
  if (pay_spawn) Calendar::sync_thread();
  // Spawned from a calendar callback running ahead of SystemC time, the
  // thread must not start before the time it was spawned at.
  const Tick start_at = Calendar::now();
  sc_core::sc_spawn_options opts;
  opts.set_stack_size(stack_bytes_);
  sc_core::sc_process_handle h = sc_core::sc_spawn(
      [this, t, body = std::move(body), pay_spawn, start_at] {
        const Tick sc_now = Calendar::sc_clock();
        if (start_at > sc_now) Sim::get().calendar().thread_sleep_until(start_at);
        thread_main(t, body, pay_spawn);
      },
      unique_process_name(t->name_).c_str(), &opts);
  // Registered before the thread first runs, so that it is "current" from
  // its first instruction (charging thread_spawn needs that).
  t->process_ = h.get_process_object();
  Calendar::activity_changed();
  by_process_[t->process_] = t;
  process_hosts()[t->process_] = this;
  return t;
}

void Host::thread_main(HostThread* t, const std::function<void()>& body, bool pay_spawn) {
  char top;
  stack_guard_add(t, &top, static_cast<std::size_t>(stack_bytes_),
                  fmt::format("nicsim: stack overflow in host thread '{}' of node {} ({}): "
                              "thread_stack is {} bytes; raise the host parameter thread_stack\n",
                              t->name_, node_id_, name(), stack_bytes_));
  // Runs when the body returns and when end_threads unwinds the stack.
  struct Exit {
    Host* host;
    HostThread* thread;
    ~Exit() { host->thread_exited(thread, std::uncaught_exceptions() > 0); }
  } exit{this, t};
  trace("thread_start", t->name_);
  if (pay_spawn) charge("thread_spawn");
  body();
  trace("thread_exit", t->name_);
}

void Host::thread_exited(HostThread* t, bool unwound) {
  t->finished_ = true;
  // An unwound thread's joiners are being ended too: nobody is to be woken.
  // Notified while the thread is still known, so as its node's block.
  if (!unwound) Calendar::notify_now(t->done_);
  stack_guard_remove(t);
  // The process object dies with the SC_THREAD and its address may be
  // reused by a later process: forget it now.
  by_process_.erase(t->process_);
  if (last_thread_process_ == t->process_) last_thread_process_ = nullptr, last_thread_ = nullptr;
  forget_process(t->process_);
  t->process_ = nullptr;
}

void Host::end_threads(const std::vector<Host*>& hosts) {
  if (sc_core::sc_get_status() != sc_core::SC_PAUSED) return;
  std::vector<sc_core::sc_process_handle> victims;
  for (Host* h : hosts) {
    for (auto& t : h->threads_)
      if (t->process_) victims.emplace_back(const_cast<sc_core::sc_object*>(t->process_));
    if (h->irq_process_) victims.emplace_back(const_cast<sc_core::sc_object*>(h->irq_process_));
  }
  // Suspended first, so that none that is runnable now runs before the
  // killer reaches it.
  for (auto& v : victims)
    if (v.valid() && !v.terminated()) v.suspend();
  // Killing from a thread: each victim unwinds at once and control comes
  // back to the killer (IEEE 1666 "murder by thread"). The handles go with
  // the killer, so SystemC collects the victims at the end of this delta.
  sc_core::sc_spawn(
      [victims = std::move(victims)]() mutable {
        for (auto& v : victims)
          if (v.valid() && !v.terminated()) v.kill();
        victims.clear();
      },
      sc_core::sc_gen_unique_name("nicsim_end_threads"));
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  sanitizer_on_main_stack();
  // Threads ended before their body began (still waiting for their start
  // time) and the interrupt threads are still registered.
  for (Host* h : hosts) h->forget_processes();
}

HostThread* Host::current() const {
  const sc_core::sc_object* p = running_process();
  if (!p) return nullptr;
  if (p == last_thread_process_) return last_thread_;
  auto it = by_process_.find(p);
  if (it == by_process_.end()) return nullptr;
  last_thread_process_ = p;
  last_thread_ = it->second;
  return it->second;
}

std::string Host::node_name() const {
  std::string n = basename();
  if (n.ends_with("_host")) n.resize(n.size() - 5);
  return n;
}

Host* Host::current_host_slow(const sc_core::sc_object* p) {
  if (!p) return nullptr;
  auto& m = process_hosts();
  auto it = m.find(p);
  if (it == m.end()) return nullptr;
  last_process_ = p;
  last_process_host_ = it->second;
  return it->second;
}

void Host::forget_process(const sc_core::sc_object* p) {
  process_hosts().erase(p);
  if (last_process_ == p) last_process_ = nullptr, last_process_host_ = nullptr;
}

bool Host::may_block(const char* what, const std::source_location& where) {
  if (in_interrupt()) {
    Sim::get().error(name(), fmt::format("blocking call {} in interrupt context at {}:{} (handler {})", what,
                                         where.file_name(), where.line(), irq_->running()));
    return false;
  }
  if (!current()) {
    Sim::get().error(name(), fmt::format("blocking call {} outside a thread of {} at {}:{}", what, name(),
                                         where.file_name(), where.line()));
    return false;
  }
  return true;
}

bool Host::join(HostThread* t, std::source_location where) {
  if (!may_block("join", where)) return false;
  if (!t || t->host_ != this || t == current()) {
    Sim::get().error(name(), fmt::format("join of {} at {}:{}",
                                         !t                 ? "a null thread"
                                         : t->host_ != this ? "another node's thread"
                                                            : "the calling thread itself",
                                         where.file_name(), where.line()));
    return false;
  }
  BlockScope scope(*this, "join");
  Calendar::sync_thread();
  while (!t->finished_) sc_core::wait(t->done_);
  return true;
}

bool Host::sleep(Tick duration, std::source_location where) {
  if (!may_block("sleep", where)) return false;
  BlockScope scope(*this, "sleep");
  if (duration >= kTickMax - now()) {
    // Beyond the end of time: sleep forever (a deadlock report names it).
    sc_core::sc_event never;
    Calendar::sync_thread();
    sc_core::wait(never);
    return true;
  }
  Sim::get().calendar().thread_wait_until(now() + duration);
  return true;
}

void Host::yield(std::source_location where) {
  if (!may_block("yield", where)) return;
  Calendar::sync_thread();
  sc_core::wait(sc_core::SC_ZERO_TIME);
}

Tick Host::cost_of(std::string_view cost_class, std::uint64_t bytes) const {
  // Callers mostly pass string literals: the same characters at the same
  // address each time. The recent ones are found by address, confirmed by
  // their characters (an address alone could be a reused buffer).
  const auto at = reinterpret_cast<std::uintptr_t>(cost_class.data());
  RecentCost& r = recent_costs_[(at >> 3 ^ at >> 9 ^ cost_class.size()) % recent_costs_.size()];
  Tick t;
  if (r.chars == cost_class.data() && r.name && *r.name == cost_class) {
    t = r.cost;
  } else {
    auto it = cost_cache_.find(cost_class);
    if (it == cost_cache_.end()) {
      // ParamSet::time throws std::logic_error for an undeclared class.
      Tick fixed = params_.time(fmt::format("cost.{}", cost_class));
      it = cost_cache_.emplace(std::string(cost_class), fixed).first;
    }
    r = RecentCost{cost_class.data(), &it->first, it->second};
    t = it->second;
  }
  if (bytes) t += serialization_time(bytes, copy_bandwidth_);
  return t;
}

namespace {
std::unordered_map<std::string, std::uint32_t>& cost_class_ids() {
  static std::unordered_map<std::string, std::uint32_t> m;
  return m;
}
}  // namespace

CostClass::CostClass(std::string_view name) : name_(name) {
  auto& ids = cost_class_ids();
  id_ = ids.emplace(name_, static_cast<std::uint32_t>(ids.size())).first->second;
}

Tick Host::cost_of_slow(const CostClass& cost_class, std::uint64_t bytes) const {
  if (cost_class.id() >= cost_by_id_.size()) cost_by_id_.resize(cost_class.id() + 1, kTickMax);
  Tick& fixed = cost_by_id_[cost_class.id()];
  if (fixed == kTickMax) fixed = cost_of(cost_class.name());
  return bytes ? fixed + serialization_time(bytes, copy_bandwidth_) : fixed;
}

bool Host::charge(std::string_view cost_class, std::uint64_t bytes, std::source_location where) {
  return charge_time(cost_of(cost_class, bytes), where);
}

void Host::stall(Tick cost) {
  if (cost) Sim::get().calendar().thread_wait_until(now() + cost);
}

void Host::wait_for_cpu() {
  // All CPUs busy: queue FIFO; a releasing thread hands its CPU over.
  HostThread* me = current();
  CpuWaiter w{&me->wake_, false};
  cpu_waiters_.push_back(&w);
  // Not granted: the thread is being unwound (end_threads); leave the queue.
  struct Leave {
    std::deque<CpuWaiter*>& waiters;
    CpuWaiter& w;
    ~Leave() {
      if (!w.granted) waiters.erase(std::find(waiters.begin(), waiters.end(), &w));
    }
  } leave{cpu_waiters_, w};
  BlockScope scope(*this, "cpu");
  Calendar::sync_thread();
  while (!w.granted) sc_core::wait(me->wake_);
}

void Host::hand_cpu_over() {
  CpuWaiter* next = cpu_waiters_.front();
  cpu_waiters_.pop_front();
  next->granted = true;
  Calendar::notify_now(*next->wake);
}

void Host::timer_expired(void* host, std::uint64_t timer_id) {
  auto* h = static_cast<Host*>(host);
  // A timer cancelled or re-armed since this event was scheduled is no
  // longer in the table: the event is stale by design.
  if (h->timers_.count(timer_id)) h->irq_->post_timer(timer_id);
}

}  // namespace nicsim::host
