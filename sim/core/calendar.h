// The event calendar that drives every hardware model.
//
// Hardware blocks schedule plain callbacks at absolute simulated times; the
// calendar keeps them ordered by (time, insertion sequence), those due soon
// in a short sorted run and the rest in a binary heap, and wakes one
// SC_METHOD at the earliest time. This is how nicsim follows
// DESIGN rule 4 (event-driven, idle hardware costs nothing) while keeping the
// per-packet cost far below one SystemC event notification each (a plain
// heap beats the kernel's own queue under load, docs/calendar.md). Software threads remain ordinary SC_THREADs; both
// meet in simulated time because the calendar's SC_METHOD runs inside the SystemC scheduler.
//
// Order is deterministic: equal times fire in the order of their places
// (time, block, the block's own scheduling sequence). A world split into
// partition blocks (docs/partition.md) gives each block its own sequence, so
// where an event of a block was scheduled (which process, which other
// blocks exist) never changes its place; with one block this is the order
// of scheduling.
//
// Run-ahead: when the next calendar event comes before any pending SystemC
// activity (no thread or SystemC event is due earlier), the calendar fires it
// at once instead of returning to the kernel for one timed notification per
// distinct time. While it does, now() is the calendar's time, ahead of
// sc_time_stamp(). A handler that wakes SystemC processes must therefore
// notify through notify_now(), which places the notification at now(); that
// new activity ends the run-ahead, so no thread ever observes the calendar
// ahead of its own time.
//
// Threads run ahead too. A software thread that only computes and charges
// CPU time (a busy-polling loop) would cost one SystemC context switch per
// charge. thread_wait_until() instead fires, on the thread's own stack, the
// calendar events that come before the thread's wake-up time (with the same
// run-ahead rule as the calendar's own method, so in the same order and at
// the same times), and when nothing else at all is due up to that time it
// returns at once with now() moved there: the thread is then "ahead" of
// SystemC's clock. Whatever it does next that another process could see
// first brings SystemC's clock to it (sync_thread(): one wait in which
// nothing else can run): scheduling a calendar event, notifying, spawning,
// stopping, blocking. Code that runs on SystemC threads must therefore wait
// through thread_wait_until() or call sync_thread() before sc_core::wait();
// the calendar's method reports a thread left running ahead as an error.
//
// Threads' timed waits go through the calendar too. A thread that must really
// wait until t gets a calendar event at t that wakes it (thread_sleep_until),
// so threads due at the same picosecond resume in (time, sequence) order: the
// order they went to sleep, after every hardware event due at or before t
// that was scheduled before they slept. SystemC's own timed queue is a heap
// that is not stable for equal times (its order depends on its whole
// history), so leaving those waits to it would make the order of same-instant
// wake-ups, and with it multi-node results, depend on unrelated events.
#pragma once
#include <systemc>

#include <atomic>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "core/units.h"

namespace nicsim {

class BlockExchange;

// A callback with no allocation: a function pointer, an object and a word.
using EventFn = void (*)(void* obj, std::uint64_t arg);

namespace detail {
template <class M>
struct MemberOf;
template <class R, class C, class... A>
struct MemberOf<R (C::*)(A...)> {
  using type = C;
};
}  // namespace detail

// The EventFn that calls obj->Method(arg), or obj->Method() for a method
// without arguments: how hardware models name their calendar callbacks,
// typed and without a thunk of their own, e.g.
// calendar.at(t, member_fn<&Link::arrive>(), link, arg).
template <auto Method>
constexpr EventFn member_fn() {
  using T = typename detail::MemberOf<decltype(Method)>::type;
  return [](void* o, std::uint64_t a) {
    if constexpr (std::is_invocable_v<decltype(Method), T*, std::uint64_t>)
      (static_cast<T*>(o)->*Method)(a);
    else
      (static_cast<T*>(o)->*Method)();
  };
}

class Calendar : public sc_core::sc_module {
 public:
  explicit Calendar(sc_core::sc_module_name name);
  ~Calendar() override;

  // SystemC's clock, read inline: sc_time_stamp() is an out-of-line call,
  // and now() is asked on every charge and by every handler.
  static Tick sc_clock() { return sc_core::sc_get_curr_simcontext()->time_stamp().value(); }
  // Current simulated time in picoseconds.
  static Tick now() { return ahead_ ? ahead_now_ : sc_clock(); }
  // Notifies `e` at now() (a delta notification when not running ahead).
  // With several blocks, through a calendar event at now() that notifies it
  // at once (wake_thread): the woken thread then runs in that event's place.
  // A delta or timed notification's release order depends on the kernel's
  // history (delta ones come out reversed, timed ones from an unstable
  // heap), and with it on which other blocks share the process.
  static void notify_now(sc_core::sc_event& e) {
    sync_thread();
    ++activity_epoch_;
    if (placing_) [[unlikely]] {
      placing_->at(now(), &Calendar::wake_thread, &e);
      return;
    }
    e.notify(sc_core::sc_time::from_value(now() - sc_clock()));
  }
  // For SystemC threads: returns at absolute time `t` (>= now()), running
  // ahead when it can (see above). t == now() is a delta-cycle yield.
  void thread_wait_until(Tick t) {
    // The common case of a thread already running ahead with nothing due up
    // to `t`: the check advance_thread() would make, without the call.
    if (t > ahead_now_ && t < ahead_until_) {
      ahead_now_ = t;
      return;
    }
    thread_wait_until_slow(t);
  }
  // For SystemC threads: a real wait until absolute time `t` (> SystemC's
  // clock), woken by a calendar event at `t` (see above); no run-ahead.
  void thread_sleep_until(Tick t);
  // For SystemC threads: waits for `e` or until `t`, whichever comes first,
  // with the timeout through the calendar. False when the timeout woke it.
  bool thread_wait_event_until(sc_core::sc_event& e, Tick t);
  // For a SystemC thread running ahead: moves its now() on by `cost` when
  // nothing at all is due before then (thread_wait_until's fast path);
  // false, with nothing done, otherwise. ahead_until_ is 0 unless the
  // calling thread runs ahead.
  static bool try_run_ahead(Tick cost) {
    const Tick t = ahead_now_ + cost;
    if (t >= ahead_until_) return false;
    ahead_now_ = t;
    return true;
  }
  // For SystemC threads, before anything another process could see: brings
  // SystemC's clock to the calling thread's now() if it ran ahead.
  static void sync_thread() {
    if (thread_ahead_ && !dispatching_) sync_thread_slow();
  }
  // True while calendar events are being fired (by the calendar's method or
  // inline by a thread's thread_wait_until): code then runs as hardware, not
  // as the thread whose stack it may be on.
  static bool dispatching() { return dispatching_; }
  // Code that makes SystemC activity other than through notify_now() (a
  // process spawned from a handler) says so: the run-ahead rule then asks
  // the kernel again for its next activity instead of using the last answer.
  static void activity_changed() { ++activity_epoch_; }
  // No run-ahead beyond this time (the end of sc_start's run).
  // After sc_start returns: a thread left running ahead (it blocked without
  // syncing, and the calendar's wake-up was parked for it) is an error.
  static void check_threads_synced();
  static void set_horizon(Tick t) {
    horizon_ = t;
    ahead_until_ = 0;
  }
  // Ends the simulation at now() (calendar time): sc_pause() once SystemC's
  // clock has caught up. Events still pending are not fired. A pause, not
  // sc_stop(): the world's teardown still needs the kernel to unwind the
  // threads left blocked (Host::end_threads).
  void request_stop();
  bool stop_requested() const { return stop_at_ != kTickMax; }
  static sc_core::sc_time to_sc(Tick t) { return sc_core::sc_time::from_value(t); }

  // Schedule fn(obj, arg) at absolute time `at` (>= now()), run as the
  // current block.
  void at(Tick at, EventFn fn, void* obj, std::uint64_t arg = 0);
  // The same, run as block `block` (the handler's block): how an event
  // crosses from one partition block to another. Its place is the
  // scheduling block's.
  void at_on(std::uint32_t block, Tick at, EventFn fn, void* obj, std::uint64_t arg = 0);

  // Partition blocks. A world split into `count` blocks (at most
  // kMaxBlocks) numbers them from 0; the block `count` is the world's own
  // (faults, setup). Each block orders its events by its own sequence.
  static constexpr std::uint32_t kMaxBlocks = 4095;
  void set_blocks(std::uint32_t count);
  std::uint32_t blocks() const { return static_cast<std::uint32_t>(counters_.size()) - 1; }
  std::uint32_t world_block() const { return blocks(); }
  // The block the running code belongs to: the firing event's, else the
  // calling SystemC thread's (thread_block_fn), else the context block set
  // by a BlockScope (the world's by default).
  std::uint32_t current_block() const {
    if (dispatching_ || !multi_block_) return cur_block_;
    return context_block();
  }
  // A run over several processes: this one runs the blocks marked in
  // `local_blocks` (the world's block last). Events scheduled as another
  // block are that process's to schedule and are dropped here; at_on to
  // another process's block goes to `exchange` (core/block_exchange.h).
  void set_exchange(BlockExchange* exchange, const std::vector<bool>& local_blocks);
  bool distributed() const { return distributed_; }
  bool local(std::uint32_t block) const { return !distributed_ || local_[block]; }
  // The earliest pending event's time (kTickMax: none).
  Tick next_time() const { return time_of(next_key()); }
  // The host layer tells which block a SystemC thread runs in (0 for none
  // of its threads: the context block then).
  using ThreadBlockFn = bool (*)(std::uint32_t& block);
  static void set_thread_block_fn(ThreadBlockFn fn) { thread_block_fn_ = fn; }
  // Code outside events and threads (set-up, a link's state change applied
  // to each end) runs as `block` for the scope's lifetime.
  class BlockScope {
   public:
    BlockScope(Calendar& c, std::uint32_t block) : c_(c), was_cur_(cur_block_), was_context_(c.context_block_) {
      cur_block_ = block;
      c.context_block_ = block;
    }
    ~BlockScope() {
      cur_block_ = was_cur_;
      c_.context_block_ = was_context_;
    }
    BlockScope(const BlockScope&) = delete;
    BlockScope& operator=(const BlockScope&) = delete;

   private:
    Calendar& c_;
    std::uint32_t was_cur_, was_context_;
  };
  // A place's block (Place::seq) and the order within it.
  std::uint32_t block_of_seq(std::uint64_t seq) const { return static_cast<std::uint32_t>(seq >> counter_bits_); }
  // Lazy timers: reserve_seq() takes the tie-break place an event scheduled
  // now would get; at_reserved() later schedules an event in that place
  // (run as the block that took it). A
  // timer re-armed again and again can then keep one event in the calendar
  // (moving it to the latest deadline when it fires early) and still fire in
  // exactly the order a fresh event per arming would have (see Timer).
  std::uint64_t reserve_seq();
  // A place in the calendar's order: a time, and the tie-break sequence that
  // an event scheduled when the place was taken would have had.
  struct Place {
    Tick at = kTickMax;
    std::uint64_t seq = 0;
    friend bool operator==(const Place&, const Place&) = default;
    friend bool operator<(const Place& a, const Place& b) { return a.at != b.at ? a.at < b.at : a.seq < b.seq; }
  };
  // The place of an event at `t` scheduled now (a thread running ahead is
  // brought to SystemC's clock first, as at() does).
  Place place(Tick t) {
    if (thread_ahead_ && !running_) sync_thread_slow();
    return Place{t, reserve_seq()};
  }
  // Schedules fn(obj, arg) at a place taken elsewhere (another process's
  // block scheduled it: the partition engine), run as `block`.
  void at_place(Place place, std::uint32_t block, EventFn fn, void* obj, std::uint64_t arg = 0);
  // An event that may be withdrawn before it fires: at_cancellable returns a
  // handle for cancel(), which does nothing once the event has fired. Meant
  // for timeouts that usually do not expire (cancel scans the heap).
  std::uint64_t at_cancellable(Tick at, EventFn fn, void* obj, std::uint64_t arg = 0);
  void cancel(std::uint64_t handle);
  void at_reserved(Tick at, std::uint64_t seq, EventFn fn, void* obj, std::uint64_t arg = 0);
  void after(Tick delay, EventFn fn, void* obj, std::uint64_t arg = 0) {
    at(add_saturating(now(), delay), fn, obj, arg);
  }
  // Member-function convenience: calendar.at_member<&Link::arrive>(t, link, arg)
  template <auto Method, class T>
  void at_member(Tick t, T* obj, std::uint64_t arg = 0) {
    at(t, member_fn<Method>(), obj, arg);
  }

  std::uint64_t events_fired() const { return fired_; }
  // The debugger's pause point. After an event that brings events_fired()
  // to pause_after() or beyond, hook(ctx) runs, as hardware, before the next
  // event; the simulation stands still for as long as it does. With the
  // default kNoPause there is no pause point, and each event costs one
  // compare more.
  using PauseHook = void (*)(void* ctx);
  static constexpr std::uint64_t kNoPause = ~std::uint64_t{0};
  void set_pause_hook(PauseHook hook, void* ctx) {
    pause_hook_ = hook;
    pause_ctx_ = ctx;
  }
  // Pause after event `n` (1-based: the n-th event fired); kNoPause: never;
  // 0: after every event.
  void set_pause_after(std::uint64_t n) { pause_after_ = hook_set() ? n : kNoPause; }
  std::uint64_t pause_after() const { return pause_after_; }
  // Progress for a watcher on another OS thread (the CLI's progress line).
  static inline std::atomic<std::uint64_t> progress_ps{0};
  static inline std::atomic<std::uint64_t> progress_events{0};
  std::size_t pending() const { return near_.size() + far_.size(); }
  // Every pending event, in no particular order: for inspection (the
  // debugger's packets in flight), not for the hot path.
  template <class F>
  void for_each_pending(F&& f) const {
    for (std::uint32_t i = near_.head; i < near_.tail; ++i) visit(near_.keys[i], f);
    for (const Key k : far_.keys) visit(k, f);
  }

 private:
  // The calendar orders 16-byte keys: time in the high word; in the low
  // word the place's sequence (40 bits: the block in its top bits, as many
  // as the blocks need, then the block's own count) above the index of the
  // callback's slot (24 bits).
  using Key = unsigned __int128;
  static constexpr int kSlotBits = 24;
  static constexpr int kSeqBits = 64 - kSlotBits;
  struct Callback {
    EventFn fn;
    void* obj;
    std::uint64_t arg;
    std::uint32_t block;  // the block the handler runs as
  };
  // No event: later than any key (events at kTickMax are never scheduled).
  static constexpr Key kNoKey = ~static_cast<Key>(0);
  // Events due soon, in key order: keys[head, tail) ascending, with kNoKey
  // at keys[tail], so the earliest is keys[head] without an emptiness test.
  // A new event is usually due after most of the few pending ones (they were
  // scheduled earlier, about as far ahead), so inserting it from the back
  // moves only those due after it, and taking the earliest moves nothing:
  // cheaper than a heap's sift-down through a few levels. At most kMaxSize
  // are held so that no insertion moves many; push() declines the rest.
  struct SortedRun {
    // The buffer; the keys move back to its start when the tail reaches its end.
    static constexpr std::uint32_t kCapacity = 256;
    static constexpr std::uint32_t kMaxSize = 32;
    Key keys[kCapacity];
    std::uint32_t head = 0;
    std::uint32_t tail = 0;
    SortedRun() { keys[0] = kNoKey; }
    std::size_t size() const { return tail - head; }
    Key front() const { return keys[head]; }
    void pop_front() { ++head; }
    bool push(Key k);                   // false, with nothing done, when full
    Key remove_seq(std::uint64_t seq);  // takes the key of sequence `seq`; kNoKey if none
  };
  // A binary min-heap of keys. push and take are inlined into their few
  // callers: the heap is small, so a call's own cost is a large share.
  struct Heap {
    std::vector<Key> keys;
    bool empty() const { return keys.empty(); }
    std::size_t size() const { return keys.size(); }
    Key front() const { return keys.front(); }
    void push(Key k);
    Key take(std::size_t i);  // removes and returns keys[i]
  };
  // The earliest pending event's key, kNoKey when none.
  Key next_key() const {
    const Key near = near_.front();
    return near < far_next_ ? near : far_next_;
  }
  static Tick time_of(Key k) { return static_cast<Tick>(k >> 64); }
  static std::uint64_t seq_of(Key k) { return static_cast<std::uint64_t>(k) >> kSlotBits; }
  template <class F>
  void visit(Key k, F& f) const {
    const Callback& cb = slots_[slot_of(k)];
    f(time_of(k), cb.fn, cb.obj, cb.arg);
  }
  static std::uint32_t slot_of(Key k) { return static_cast<std::uint32_t>(k) & ((1u << kSlotBits) - 1); }
  void run();
  // Fires events in order while each is at SystemC's time `n`, or later but
  // strictly before `cap`, the horizon and every pending SystemC activity.
  void fire_ahead(Tick n, Tick cap);
  bool advance_thread(Tick t);
  // The kernel's next activity after SystemC time `n` (absolute), asked
  // again only when the activity epoch changed or other processes ran.
  Tick activity_limit(Tick n);
  // While a thread runs (ahead) the calendar's own wake-up is cancelled
  // (parked) so that it does not count as other activity; it is re-armed
  // before the thread really waits.
  void park_wake();
  static void unpark_wake();
  void thread_wait_until_slow(Tick t);
  sc_core::sc_event& wake_event_of_current_thread();
  // Notifies *event; sets the bool at `fired_flag` when that is not 0.
  static void wake_thread(void* event, std::uint64_t fired_flag);
  static void sync_thread_slow();
  void insert(Tick t, std::uint64_t seq, EventFn fn, void* obj, std::uint64_t arg, std::uint32_t block);
  std::uint64_t next_seq(std::uint32_t& block);
  [[noreturn, gnu::cold]] void sequence_exhausted(std::uint32_t block) const;
  std::uint32_t context_block() const;
  void arm();

  // Events due far ahead (kFarDistance in calendar.cc) wait in the heap
  // far_, the rest in near_ (or in far_ when near_ is full); the next event
  // is the smaller of the two fronts, so where an event waits never changes
  // the order.
  SortedRun near_;
  Heap far_;
  Key far_next_ = kNoKey;  // far_.front(), kNoKey when far_ is empty
  std::vector<Callback> slots_;
  // Free slots form a list through their `arg` words, most recently freed
  // first; kNoSlot ends it.
  static constexpr std::uint32_t kNoSlot = ~0u;
  std::uint32_t free_slot_ = kNoSlot;
  // Each block's scheduling count (the last entry is the world's block),
  // with several blocks.
  std::vector<std::uint64_t> counters_ = std::vector<std::uint64_t>(1, 0);
  std::uint32_t context_block_ = 0;
  bool multi_block_ = false;
  bool distributed_ = false;
  std::vector<bool> local_;  // by block, in a run over several processes
  BlockExchange* exchange_ = nullptr;
  std::uint64_t seq_ = 0;                      // the one block's count, with one block
  int counter_bits_ = kSeqBits;                // of a sequence, below the block's number
  static inline std::uint32_t cur_block_ = 0;  // the firing event's block
  static inline Calendar* placing_ = nullptr;  // with several blocks: notify_now's calendar
  static inline ThreadBlockFn thread_block_fn_ = nullptr;
  std::uint64_t fired_ = 0;
  std::uint64_t pause_after_ = kNoPause;
  PauseHook pause_hook_ = nullptr;
  void* pause_ctx_ = nullptr;
  bool hook_set() const { return pause_hook_ != nullptr; }
  Tick armed_for_ = kTickMax;  // time the wake event is notified for
  Tick stop_at_ = kTickMax;
  bool running_ = false;
  sc_core::sc_event wake_;
  // Each SystemC thread's own wake-up event for thread_sleep_until, made on
  // its first real wait (a process's address is reused only after it ended,
  // and an ended process waits no more). The last one found is remembered.
  std::unordered_map<const sc_core::sc_process_b*, std::unique_ptr<sc_core::sc_event>> thread_wakes_;
  const sc_core::sc_process_b* last_waker_process_ = nullptr;
  sc_core::sc_event* last_waker_ = nullptr;
  static inline bool ahead_ = false;
  static inline bool thread_ahead_ = false;  // a thread returned from thread_wait_until ahead of SystemC
  static inline bool dispatching_ = false;
  static inline std::uint64_t activity_epoch_ = 0;  // bumped whenever SystemC activity may have changed
  static inline Tick ahead_now_ = 0;
  static inline Tick horizon_ = kTickMax;
  // While a thread runs ahead and nothing changed since advance_thread let it
  // (no event fired or scheduled, no stop, no new horizon): the earliest of
  // the next SystemC activity, the horizon and the next calendar event. A
  // wait before it is a run-ahead with nothing to fire. 0 otherwise.
  static inline Tick ahead_until_ = 0;
  // The next SystemC activity (absolute time) other than the calendar's
  // parked wake-up, as of activity epoch limit_epoch_; not valid once other
  // processes ran (invalidate_limit: an epoch that has passed).
  Tick limit_ = 0;
  std::uint64_t limit_epoch_ = ~std::uint64_t{0};
  void invalidate_limit() { limit_epoch_ = activity_epoch_ - 1; }
  static inline Calendar* parked_ = nullptr;  // whose wake-up is parked
};

// A re-armable timer on the calendar: fn(obj, arg) runs once at each
// deadline the timer reaches while armed, at the place in the calendar's
// order that an event scheduled at its arming would have had. Cancelled or
// superseded armings never run it.
//
// Timers are re-armed far more often than they expire (an ACK timer moves on
// every acknowledgement), so a re-arming to a later place keeps the one
// calendar event the timer has: when that fires before the deadline it moves
// on to the deadline's place, and one left behind by a cancel fires and does
// nothing (or moves on, if the timer was armed again meanwhile). Only a
// re-arming to an earlier place withdraws the event (Calendar::cancel). So a
// timer has at most one event in the calendar whatever its callers do.
//
// A timer refers to itself from the calendar: it is neither copied nor
// moved, and its destructor withdraws its event.
class Timer {
 public:
  using Place = Calendar::Place;
  Timer(Calendar& calendar, EventFn fn, void* obj, std::uint64_t arg = 0)
      : calendar_(&calendar), fn_(fn), obj_(obj), arg_(arg) {}
  ~Timer() {
    if (live_) calendar_->cancel(live_.seq);
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // Arms the timer for `deadline` unless it is armed already (then the
  // earlier arming stands).
  void arm(Tick deadline) {
    if (!armed_) rearm(calendar_->place(deadline));
  }
  // Arms it for `deadline` in any case, replacing a current arming.
  void rearm(Tick deadline) { rearm(calendar_->place(deadline)); }
  // The same at a place taken earlier (Calendar::place): the callback then
  // runs where an event scheduled when the place was taken would have. A
  // place at kTickMax is never reached.
  void rearm(Place p) {
    armed_ = true;
    place_ = p;
    if (live_ && !(p < live_)) return;  // the live event moves on when it fires
    if (live_) calendar_->cancel(live_.seq);
    schedule();
  }
  // Disarms it; the callback does not run for the current arming.
  void cancel() { armed_ = false; }
  bool armed() const { return armed_; }
  // The current (or last) arming's deadline.
  Tick deadline() const { return place_.at; }
  Place place() const { return place_; }
  // Whether the timer has an event in the calendar (armed or not).
  bool has_event() const { return static_cast<bool>(live_); }

 private:
  // The place of the timer's calendar event; at kTickMax when it has none.
  struct Live : Place {
    explicit operator bool() const { return at != kTickMax; }
  };
  void schedule() {
    live_.at = place_.at;
    live_.seq = place_.seq;
    if (live_) calendar_->at_reserved(live_.at, live_.seq, &Timer::fire, this);
  }
  static void fire(void* self, std::uint64_t) {
    auto* t = static_cast<Timer*>(self);
    const Place was = t->live_;
    t->live_.at = kTickMax;
    if (!t->armed_) return;
    if (!(was == t->place_)) {
      t->schedule();  // re-armed since it was scheduled: on to the current place
      return;
    }
    t->armed_ = false;
    t->fn_(t->obj_, t->arg_);
  }
  Calendar* calendar_;
  EventFn fn_;
  void* obj_;
  std::uint64_t arg_;
  Place place_;  // of the current arming
  Live live_;
  bool armed_ = false;
};

}  // namespace nicsim
