// The host side of one simulated node: software threads, synchronisation in
// simulated time, an interrupt context, a memory allocator, a CPU with a cost
// table. Every consumer program, library and driver runs on a HostThread (an
// SC_THREAD); hardware models reach the host only through the HostBus
// (host/bus.h) and the InterruptController.
#pragma once
#include <systemc>

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <unordered_map>
#include <memory>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "core/calendar.h"
#include "core/params.h"
#include "core/units.h"

namespace nicsim::host {

class Host;
class HostBus;

// A cost class named once and charged many times without looking its name
// up (a hot path's charge): `static const host::CostClass kPoll{"verbs_poll_cq"};`
// then `host.charge(kPoll)`. The same class on every node; each node has
// its own value ("cost.<name>" in its host scope), found on first use.
class CostClass {
 public:
  explicit CostClass(std::string_view name);
  const std::string& name() const { return name_; }
  std::uint32_t id() const { return id_; }

 private:
  std::string name_;
  std::uint32_t id_;
};

// A simulated software thread of one node. Runs on an SC_THREAD whose stack
// is the "thread_stack" parameter; overflowing it is reported by name (see
// Host) instead of corrupting memory.
class HostThread {
 public:
  const std::string& name() const { return name_; }
  Host& host() const { return *host_; }
  bool finished() const { return finished_; }
  // What the thread is blocked in right now ("mutex_lock", "mgmt_recv", ...),
  // or nullptr when runnable. Used to explain deadlocks.
  const char* blocked_in() const { return blocked_in_; }
  void* user_context = nullptr;  // per-thread slot for program layers

 private:
  friend class Host;
  friend class BlockScope;
  friend class Mutex;
  friend class WaitQueue;
  std::string name_;
  Host* host_ = nullptr;
  bool finished_ = false;
  const char* blocked_in_ = nullptr;
  sc_core::sc_event done_;
  // Every primitive that blocks this thread wakes it through this one event
  // (a thread blocks in one place at a time) and re-checks its condition, so
  // a stale notification is harmless.
  sc_core::sc_event wake_;
  const sc_core::sc_object* process_ = nullptr;
};

// Marks the current thread as blocked in `what` for the scope's lifetime. The
// outermost label wins: a layer that wraps a primitive in its own scope
// ("mgmt_recv") keeps that label while the primitive ("wait_queue") blocks.
// Outside a HostThread of `host` it does nothing.
class BlockScope {
 public:
  BlockScope(Host& host, const char* what);
  ~BlockScope();

 private:
  HostThread* thread_;
  const char* previous_;
};

// FIFO mutex in simulated time; ownership is handed to the longest waiter at
// the moment of unlock (no barging). Not recursive: relocking is an error.
class Mutex {
 public:
  explicit Mutex(Host& host) : host_(host) {}
  // Blocking; from interrupt context it reports an error and returns false.
  bool lock(std::source_location where = std::source_location::current());
  bool try_lock();
  void unlock();  // unlocking a mutex the caller does not hold is reported as an error
  bool locked() const { return owner_ != nullptr; }

 private:
  friend class WaitQueue;
  Host& host_;
  HostThread* owner_ = nullptr;
  std::deque<HostThread*> waiters_;
};

// A wait queue / condition variable in simulated time.
class WaitQueue {
 public:
  explicit WaitQueue(Host& host) : host_(host) {}
  // Releases `m`, waits for a notify (or the deadline), reacquires `m`.
  // Returns false on timeout or when called from interrupt context (error).
  bool wait(Mutex& m, std::source_location where = std::source_location::current());
  bool wait_until(Mutex& m, Tick deadline, std::source_location where = std::source_location::current());
  // Without a mutex (for code that tests a condition then sleeps).
  bool wait(std::source_location where = std::source_location::current());
  bool wait_until(Tick deadline, std::source_location where = std::source_location::current());
  void notify_one();  // callable from any context, including interrupts
  void notify_all();
  std::size_t waiters() const { return waiters_.size(); }

 private:
  struct Waiter {
    HostThread* thread;
    sc_core::sc_event* wake;
    bool notified;
  };
  bool block(Mutex* m, Tick deadline, const std::source_location& where);
  Host& host_;
  std::deque<Waiter*> waiters_;
};

// A one-shot timer whose callback runs in the node's interrupt context: at
// expiry it is queued on the InterruptController like a raised line, so the
// callback runs "cost.interrupt_entry" after the expiry time. Cancelling (or
// destroying) the timer before the callback has run suppresses it.
class Timer {
 public:
  Timer(Host& host, std::string name, std::function<void()> callback);
  ~Timer();
  void start(Tick delay);  // re-arming cancels the previous expiry
  void cancel();
  bool armed() const { return armed_; }
  const std::string& name() const { return name_; }

 private:
  friend class InterruptController;
  Host& host_;
  std::string name_;
  std::function<void()> callback_;
  // Identifies the current arming in Host's timer table; calendar events and
  // queued deliveries carry it, so a stale one finds nothing and does nothing.
  std::uint64_t generation_ = 0;
  bool armed_ = false;
};

// Interrupt lines of one node. Devices raise() from any context (calendar
// callbacks, SC_METHODs, threads); handlers run one at a time on the node's
// interrupt SC_THREAD after the "interrupt_entry" cost, and in_interrupt() is
// true while they do. A raised line that is already pending is coalesced, as
// a level-triggered line would be.
class InterruptController {
 public:
  explicit InterruptController(Host& host);
  using Handler = std::function<void()>;
  // Returns the vector number. Names appear in traces and error messages.
  // Vector numbers are never reused; a delivery still pending when its line
  // is detached is dropped (the driver that detached no longer wants it).
  int attach(std::string name, Handler handler);
  // A driver takes a line the platform wired for its device (a PCI
  // function's interrupt line: attached with no handler) and names it.
  // False, with an error, for an unknown line or one already taken.
  bool request(int vector, std::string name, Handler handler);
  void detach(int vector);
  void raise(int vector);
  std::uint64_t delivered(int vector) const;
  // Name of the line (or timer) whose handler is running, else "".
  const std::string& running() const { return *running_; }

 private:
  friend class Host;
  friend class Timer;
  void thread_body();
  void post_timer(std::uint64_t timer_id);
  void run_handler(const std::string& name, const Handler& handler);
  struct Line {
    std::string name;
    Handler handler;
    bool pending = false;
    std::uint64_t delivered = 0;
  };
  struct Pending {
    int vector;              // >= 0: an interrupt line
    std::uint64_t timer_id;  // vector < 0: a timer expiry
  };
  Host& host_;
  std::deque<Line> lines_;  // a deque: attach() from a handler keeps references valid
  std::deque<Pending> queue_;
  sc_core::sc_event kick_;
  static const std::string kNone;
  const std::string* running_ = &kNone;
};

// The node's memory. Allocations are real process memory (so device DMA and C
// consumers use ordinary pointers), accounted per node against the "memory"
// parameter, and recorded as regions so that the host bus can refuse a DMA
// outside the node's memory (master abort) instead of writing elsewhere.
// Memory the node did not allocate (a consumer's stack buffer, a static
// array) becomes DMA-able by pin()ning it, as a driver pins user pages.
// Allocations are zero-filled so that runs stay byte-for-byte deterministic;
// pinned ranges do not count against the limit (they are already the
// process's memory).
class HostMemory {
 public:
  explicit HostMemory(std::uint64_t limit_bytes) : limit_(limit_bytes) {}
  ~HostMemory();
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;
  // nullptr when the limit would be exceeded or `align` is not a power of two.
  void* alloc(std::size_t bytes, std::size_t align = 64);
  void free(void* p);  // an unknown pointer is reported as a SimError (free_checked: false)
  bool free_checked(void* p);
  bool pin(const void* p, std::size_t bytes);  // false if it overlaps a region or is empty
  bool unpin(const void* p);                   // only pinned regions, by start address
  // Whole range inside one region. A zero-length range is contained when its
  // address lies within (or at the end of) a region.
  bool contains(std::uint64_t addr, std::size_t bytes) const {
    const std::uint64_t end = addr + bytes;
    // The regions of the last two ranges found hold most of the next ones (a
    // DMA engine walks a buffer, often two at once: the source it reads and
    // the receive buffer a peer writes).
    if (end < addr) return false;
    if (addr >= hits_[0].start && end <= hits_[0].end) return true;
    if (addr >= hits_[1].start && end <= hits_[1].end) return true;
    return contains_slow(addr, bytes);
  }
  // "r<id>+<offset>" (regions numbered in creation order) or "unmapped":
  // process addresses differ between runs, so traces and messages use this.
  std::string describe(std::uint64_t addr) const;
  std::uint64_t bytes_in_use() const { return in_use_; }
  std::uint64_t limit() const { return limit_; }

 private:
  struct Region {
    std::size_t bytes;    // as requested: DMA may touch exactly these
    std::size_t charged;  // counted against the limit (rounded up to the alignment)
    bool owned;           // allocated here (freed with the node) vs pinned
    std::uint64_t id;     // creation order: names the region in traces
  };
  std::uint64_t next_region_id_ = 0;
  std::uint64_t limit_;
  // The node's address range (memory.cc): arena_ .. arena_ + arena_bytes_,
  // inside the mapping at mapped_; free_: its free pieces, offset -> bytes.
  bool reserve_arena();
  std::uint64_t arena_ = 0, arena_bytes_ = 0, mapped_ = 0, mapped_bytes_ = 0;
  std::map<std::uint64_t, std::uint64_t> free_;
  std::uint64_t in_use_ = 0;
  std::map<std::uint64_t, Region> regions_;  // by start address
  bool contains_slow(std::uint64_t addr, std::size_t bytes) const;
  // The last two regions contains_slow() found, [start, end), the latest
  // first; empty when start > end. Forgotten when a region goes.
  struct Hit {
    std::uint64_t start = 1, end = 0;
  };
  mutable Hit hits_[2];
};

// State a software layer keeps for one node: a driver instance, a
// protocol's tables, an access layer's registrations. The host owns it, as
// an operating system owns its kernel's data, so that it goes with the
// node however its programs left it (Host::software).
class HostSoftware {
 public:
  virtual ~HostSoftware() = default;
};

// Parameters (scope "host", host/host_params.cc): cpus, memory,
// thread_stack, copy_bandwidth and the cost table "cost.<class>" (Time): the
// fixed CPU time of one operation of that class. This layer defines
// api_call, syscall, interrupt_entry, context_switch and thread_spawn; other
// layers add their own classes to the same scope with their own
// ParamRegistration. Charging is explicit (charge()) except for
// interrupt_entry (charged by the InterruptController before each handler)
// and thread_spawn (charged to a thread spawned while the simulation runs,
// before its body, as pthread_create would; threads created before the run
// stand for processes already running and start at once).
class Host : public sc_core::sc_module {
 public:
  // `params` is the node's "host" scope (cpus, memory, thread_stack,
  // copy_bandwidth, cost.<class>...).
  Host(sc_core::sc_module_name name, std::uint32_t node_id, const ParamSet& params);
  ~Host() override;

  std::uint32_t node_id() const { return node_id_; }
  // The node's partition block: its threads schedule as that block.
  std::uint32_t block() const { return block_; }
  void set_block(std::uint32_t block) { block_ = block; }
  // The node's name in the scenario ("h0"; the module is "h0_host").
  std::string node_name() const;
  // The node's configured IPv4 address of each NIC port (host order; ports
  // count from 1), as its operating system would have it configured; 0:
  // none. Set by the world builder from the scenario.
  void set_ipv4(std::vector<std::uint32_t> per_port) { ipv4_ = std::move(per_port); }
  std::uint32_t ipv4(std::uint32_t port) const { return port >= 1 && port <= ipv4_.size() ? ipv4_[port - 1] : 0; }
  // Distinct for every Host of the process, even one at a destroyed one's
  // address: for caches keyed by host.
  std::uint64_t serial() const { return serial_; }
  const ParamSet& params() const { return params_; }

  // Threads. spawn() may be called before or during simulation, from any
  // context. Thread names need not be unique; the SC_THREAD gets a unique
  // SystemC name derived from it.
  HostThread* spawn(std::string name, std::function<void()> body);
  bool join(HostThread* t, std::source_location where = std::source_location::current());
  bool sleep(Tick duration, std::source_location where = std::source_location::current());
  // Lets the other runnable threads of this time run first.
  void yield(std::source_location where = std::source_location::current());
  HostThread* current() const;  // the calling HostThread of this node, else nullptr
  // The Host whose thread (or interrupt context) is running.
  static Host* current_host() {
    const sc_core::sc_object* p;
    return current_host(p);
  }
  // The same, also giving the calling process (nullptr outside a process or
  // while calendar events fire) to pass to work_as(): a polling loop finds
  // its host and charges it on every call, and asking SystemC once is enough.
  static Host* current_host(const sc_core::sc_object*& process) {
    const sc_core::sc_object* p = running_process();
    process = p;
    if (p && p == last_process_) return last_process_host_;
    return current_host_slow(p);
  }
  const std::vector<std::unique_ptr<HostThread>>& threads() const { return threads_; }
  // Ends every thread of `hosts` that has not finished, interrupt threads
  // included, blocked or runnable: each is suspended first (no program code
  // runs any more), then killed, which unwinds its stack (the destructors of
  // its frames run) and lets SystemC free the stack. For the end of a world,
  // before it destroys what those threads use. Needs a kernel that has run
  // and is paused (Calendar::request_stop pauses it); otherwise it does
  // nothing: before the first sc_start no thread has a stack yet, and after
  // sc_stop SystemC can no longer unwind one.
  static void end_threads(const std::vector<Host*>& hosts);

  // True while the calling process is this node's interrupt thread running a
  // handler. (A handler may stall the CPU in an MMIO read; the node's other
  // threads keep running meanwhile and are not in interrupt context.)
  bool in_interrupt() const { return in_interrupt_ && running_process() == irq_process_; }
  // Every blocking primitive calls this first. In interrupt context it
  // reports "blocking call <what> in interrupt context at file:line" as a
  // SimError and returns false; the primitive then returns without blocking.
  // Called from a process that is not one of this node's threads (a
  // hardware model's callback, another node's thread) it reports "blocking
  // call <what> outside a thread of <host> at file:line" likewise.
  bool may_block(const char* what, const std::source_location& where);

  // CPU time: occupies one of the node's CPUs for the cost of `cost_class`
  // (parameter "cost.<class>") plus `bytes` at "copy_bandwidth". Blocking.
  // Unknown classes are a programming error.
  Tick cost_of(std::string_view cost_class, std::uint64_t bytes = 0) const;
  bool charge(std::string_view cost_class, std::uint64_t bytes = 0,
              std::source_location where = std::source_location::current());
  Tick cost_of(const CostClass& cost_class, std::uint64_t bytes = 0) const {
    if (!bytes && cost_class.id() < cost_by_id_.size() && cost_by_id_[cost_class.id()] != kTickMax)
      return cost_by_id_[cost_class.id()];
    return cost_of_slow(cost_class, bytes);
  }
  bool charge(const CostClass& cost_class, std::uint64_t bytes = 0,
              std::source_location where = std::source_location::current()) {
    return charge_time(cost_of(cost_class, bytes), where);
  }

  // CPU time for driver and library work that may also run in interrupt
  // context: a thread charges it (queueing for a CPU like charge()); a
  // handler, already running on a CPU and unable to queue, stalls for it.
  void work(std::string_view cost_class, std::uint64_t bytes = 0,
            std::source_location where = std::source_location::current()) {
    const Tick cost = cost_of(cost_class, bytes);
    if (in_interrupt())
      stall(cost);
    else
      charge_time(cost, where);
  }
  void work(const CostClass& cost_class, std::uint64_t bytes = 0,
            std::source_location where = std::source_location::current()) {
    work_as(running_process(), cost_class, bytes, where);
  }
  // work() for a caller that found this host with current_host(process)
  // and let nothing run since: `process` is still the calling process.
  void work_as(const sc_core::sc_object* process, const CostClass& cost_class, std::uint64_t bytes = 0,
               std::source_location where = std::source_location::current()) {
    const Tick cost = cost_of(cost_class, bytes);
    if (in_interrupt_ && process == irq_process_)
      stall(cost);
    else
      charge_time_as(process, cost, where);
  }

  // work_as() for a busy-polling caller, when it needs no wait: `process`
  // charged this host last (so it is a thread of this node, not its
  // interrupt thread), a CPU is free with nobody queued for one, the class's
  // cost is known and not zero, and the thread runs ahead with nothing due
  // before the charge ends (Calendar::try_run_ahead). That is work_as()
  // exactly: the CPU is taken and given back while nothing else runs.
  // Otherwise it does nothing and returns false; the caller then calls
  // work_as().
  bool try_work_ahead(const sc_core::sc_object* process, const CostClass& cost_class) {
    if (process != last_thread_process_ || !process || !cpus_free_ || !cpu_waiters_.empty() ||
        cost_class.id() >= cost_by_id_.size())
      return false;
    // The cost table read directly, not through cost_of(): its lookup of a
    // class not seen yet is a call, and this runs on every poll.
    const Tick cost = cost_by_id_[cost_class.id()];
    return cost != kTickMax && cost != 0 && Calendar::try_run_ahead(cost);
  }

  // The state layer T keeps on this node, or nullptr (one per layer type).
  template <class T>
  T* software() const {
    for (const auto& [key, state] : software_)
      if (key == &software_key<T>) return static_cast<T*>(state.get());
    return nullptr;
  }
  template <class T>
  T& add_software(std::unique_ptr<T> state) {
    T& ref = *state;
    software_.emplace_back(&software_key<T>, std::move(state));
    return ref;
  }
  // Destroys every layer's state, newest first (a layer built on another
  // goes before it). Its node calls this before the NIC goes, since a
  // driver may still address its device while it goes; ~Host at the latest.
  void release_software();

  InterruptController& irq() { return *irq_; }
  HostMemory& memory() { return *memory_; }
  // The node's host bus (set by the bus itself), or nullptr.
  HostBus* bus() const { return bus_; }
  std::uint32_t cpus() const { return cpus_; }
  std::uint32_t cpus_busy() const { return cpus_ - cpus_free_; }

 private:
  friend class InterruptController;
  friend class BlockScope;
  friend class Timer;
  friend class HostBus;
  struct CpuWaiter {
    sc_core::sc_event* wake;
    bool granted;
  };
  static void timer_expired(void* host, std::uint64_t timer_id);
  // The running process, or nullptr outside the simulation. During
  // elaboration sc_get_current_process_handle() returns the most recently
  // created process, which is not "the caller", hence the status check.
  // Calendar events fired inline by a thread run as hardware, as they would
  // in the calendar's method: not as that thread.
  static const sc_core::sc_object* running_process() {
    if (sc_core::sc_get_status() != sc_core::SC_RUNNING || Calendar::dispatching()) return nullptr;
    return sc_core::sc_get_current_process_b();
  }
  static Host* current_host_slow(const sc_core::sc_object* p);
  static void forget_process(const sc_core::sc_object* p);
  // The last answer of current_host(): a thread asks again and again.
  static inline const sc_core::sc_object* last_process_ = nullptr;
  static inline Host* last_process_host_ = nullptr;
  // Inline: the busy-polling path charges on every call. The thread that
  // charged last is one of this node's and not its interrupt thread: it may
  // block. Anyone else is checked in full.
  bool charge_time(Tick cost, const std::source_location& where) {
    return charge_time_as(running_process(), cost, where);
  }
  bool charge_time_as(const sc_core::sc_object* p, Tick cost, const std::source_location& where) {
    if (!(p && p == last_thread_process_) && !may_block("charge", where)) return false;
    if (cost == 0) return true;
    if (cpus_free_ > 0 && cpu_waiters_.empty())
      --cpus_free_;
    else
      wait_for_cpu();
    // Usually returns without a context switch (Calendar::thread_wait_until).
    calendar_->thread_wait_until(Calendar::now() + cost);
    if (cpu_waiters_.empty())
      ++cpus_free_;
    else
      hand_cpu_over();
    return true;
  }
  void wait_for_cpu();    // all CPUs busy: queue FIFO for one
  void hand_cpu_over();   // to the longest waiter
  void stall(Tick cost);  // the running handler's CPU is busy for `cost`
  Tick cost_of_slow(const CostClass& cost_class, std::uint64_t bytes) const;
  void thread_main(HostThread* t, const std::function<void()>& body, bool pay_spawn);
  // The end of a thread's body, returned or unwound by end_threads.
  void thread_exited(HostThread* t, bool unwound);
  // Drops every record of this host's processes (for ended ones).
  void forget_processes();
  void trace(const char* event, const std::string& name);
  static inline std::uint64_t next_serial_ = 0;
  const std::uint64_t serial_ = ++next_serial_;
  std::uint32_t node_id_;
  std::uint32_t block_ = 0;
  std::vector<std::uint32_t> ipv4_;
  ParamSet params_;
  Calendar* calendar_;
  std::vector<std::unique_ptr<HostThread>> threads_;
  std::unordered_map<const sc_core::sc_object*, HostThread*> by_process_;
  bool in_interrupt_ = false;
  const sc_core::sc_object* irq_process_ = nullptr;
  std::uint32_t cpus_;
  std::uint32_t cpus_free_;
  std::deque<CpuWaiter*> cpu_waiters_;
  int stack_bytes_;
  std::uint64_t copy_bandwidth_;
  // "cost.<class>" values, looked up on every charge: hashed, and found by
  // string_view without building a string.
  struct CostHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  mutable std::unordered_map<std::string, Tick, CostHash, std::equal_to<>> cost_cache_;
  struct RecentCost {
    const char* chars = nullptr;        // where the caller's name was
    const std::string* name = nullptr;  // the key in cost_cache_ (stable)
    Tick cost = 0;
  };
  mutable std::array<RecentCost, 32> recent_costs_{};
  mutable std::vector<Tick> cost_by_id_;  // CostClass ids; kTickMax: not looked up yet
  // The last answer of current().
  mutable const sc_core::sc_object* last_thread_process_ = nullptr;
  mutable HostThread* last_thread_ = nullptr;
  std::map<std::uint64_t, Timer*> timers_;  // armed timers by arming id
  std::uint64_t next_timer_id_ = 1;
  std::unique_ptr<InterruptController> irq_;
  std::unique_ptr<HostMemory> memory_;
  HostBus* bus_ = nullptr;
  template <class T>
  static inline const char software_key = 0;
  std::vector<std::pair<const void*, std::unique_ptr<HostSoftware>>> software_;
};

}  // namespace nicsim::host
