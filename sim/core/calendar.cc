#include "core/calendar.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "core/block_exchange.h"

namespace nicsim {

namespace {
constexpr const char* kBlockedAhead =
    "calendar: a SystemC thread blocked while running ahead of SystemC time "
    "(it waited without Calendar::thread_wait_until or sync_thread)";

// Events due this far ahead of now() or more wait in the heap, the rest in
// the sorted run (until it is full). Most events are fabric hops and engine
// steps due within a few hundred nanoseconds, and each is pushed and popped
// once; a 64-node run also holds about a hundred host timers (heartbeats
// 1 ms ahead), ack timeouts (20 us) and bus completions (microseconds) for
// a few dozen near events. Kept apart, the far ones no longer slow every
// near event down. 250 ns is the best distance on the 64-node multicast
// (docs/calendar.md).
constexpr Tick kFarDistance = 250 * kNs;
}  // namespace

Calendar::Calendar(sc_core::sc_module_name name) : sc_core::sc_module(name) {
  ahead_until_ = 0;  // a thread of an earlier calendar's run may have ended ahead
  cur_block_ = 0;    // an earlier calendar's run may have left another block
  far_.keys.reserve(256);
  SC_HAS_PROCESS(Calendar);
  SC_METHOD(run);
  sensitive << wake_;
  dont_initialize();
}

[[gnu::always_inline]] inline bool Calendar::SortedRun::push(Key k) {
  if (tail + 1 == kCapacity || tail - head >= kMaxSize) [[unlikely]] {
    if (tail - head >= kMaxSize) return false;
    std::copy(keys + head, keys + tail + 1, keys);
    tail -= head;
    head = 0;
  }
  Key* p = keys + tail;
  Key* const first = keys + head;
  p[1] = kNoKey;
  while (p != first && k < p[-1]) {
    *p = p[-1];
    --p;
  }
  *p = k;
  ++tail;
  return true;
}

Calendar::Key Calendar::SortedRun::remove_seq(std::uint64_t seq) {
  for (std::uint32_t i = head; i < tail; ++i) {
    const Key k = keys[i];
    if (seq_of(k) != seq) continue;
    std::copy(keys + i + 1, keys + tail + 1, keys + i);
    --tail;
    return k;
  }
  return kNoKey;
}

[[gnu::always_inline]] inline void Calendar::Heap::push(Key k) {
  std::size_t i = keys.size();
  keys.push_back(k);
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!(k < keys[parent])) break;
    keys[i] = keys[parent];
    i = parent;
  }
  keys[i] = k;
}

[[gnu::always_inline]] inline Calendar::Key Calendar::Heap::take(std::size_t i) {
  // The last entry fills the hole at i. For the top (a pop) the hole first
  // walks to a leaf along the smaller child (Floyd: one compare per level)
  // and the last entry, usually large, sifts up from there and rarely moves;
  // elsewhere (a cancel) the hole moves down while a child is smaller.
  const Key taken = keys[i];
  const Key last = keys.back();
  keys.pop_back();
  const std::size_t n = keys.size();
  if (i == n) return taken;
  std::size_t hole = i;
  for (std::size_t child = 2 * hole + 1; child < n; child = 2 * hole + 1) {
    if (child + 1 < n && keys[child + 1] < keys[child]) ++child;
    if (i != 0 && !(keys[child] < last)) break;
    keys[hole] = keys[child];
    hole = child;
  }
  while (hole > 0) {
    const std::size_t parent = (hole - 1) / 2;
    if (!(last < keys[parent])) break;
    keys[hole] = keys[parent];
    hole = parent;
  }
  keys[hole] = last;
  return taken;
}

// Inlined into at() and at_reserved(): one call per scheduled event.
[[gnu::always_inline]] inline void Calendar::insert(Tick t, std::uint64_t seq, EventFn fn, void* obj, std::uint64_t arg,
                                                    std::uint32_t block) {
  ahead_until_ = 0;
  Tick n = now();
  if (t < n) t = n;  // the past is now: callers computing max() get it for free
  std::uint32_t slot = free_slot_;
  if (slot == kNoSlot) {
    slot = static_cast<std::uint32_t>(slots_.size());
    if (slot >> kSlotBits) throw std::length_error("calendar: more than 2^24 pending events");
    slots_.push_back(Callback{fn, obj, arg, block});
  } else {
    free_slot_ = static_cast<std::uint32_t>(slots_[slot].arg);
    slots_[slot] = Callback{fn, obj, arg, block};
  }
  const Key k = (static_cast<Key>(t) << 64) | (static_cast<Key>(seq) << kSlotBits) | slot;
  if (t - n >= kFarDistance || !near_.push(k)) {
    far_.push(k);
    far_next_ = far_.front();
  }
  if (!running_ && t < armed_for_) arm();
}

// Inlined into at() and reserve_seq(): one call per scheduled event. With
// one block the sequence is a single count, as cheap as it can be.
[[gnu::always_inline]] inline std::uint64_t Calendar::next_seq(std::uint32_t& block) {
  if (!multi_block_) [[likely]] {
    block = 0;
    if (seq_ >> kSeqBits) [[unlikely]]
      sequence_exhausted(0);
    return seq_++;
  }
  block = current_block();
  std::uint64_t& count = counters_[block];
  if (count >> counter_bits_) [[unlikely]]
    sequence_exhausted(block);
  return std::uint64_t{block} << counter_bits_ | count++;
}

void Calendar::sequence_exhausted(std::uint32_t block) const {
  throw std::overflow_error(
      fmt::format("calendar: block {} scheduled 2^{} events, all its sequence holds with {} "
                  "block(s) (fewer blocks leave each more)",
                  block, counter_bits_, blocks()));
}

void Calendar::at(Tick t, EventFn fn, void* obj, std::uint64_t arg) {
  if (thread_ahead_ && !running_) sync_thread_slow();
  // kTickMax means "never": such an event would only keep the run alive.
  if (t == kTickMax) return;
  std::uint32_t block;
  const std::uint64_t seq = next_seq(block);
  // A block another process runs: that process schedules its own events
  // (the set-up of a link or fault that reaches its devices runs in both
  // processes); only at_on sends one there.
  if (distributed_ && !local_[block]) [[unlikely]]
    return;
  insert(t, seq, fn, obj, arg, block);
}

void Calendar::at_on(std::uint32_t block, Tick t, EventFn fn, void* obj, std::uint64_t arg) {
  if (thread_ahead_ && !running_) sync_thread_slow();
  if (t == kTickMax) return;
  if (block > blocks()) throw std::logic_error(fmt::format("calendar: no block {} of {}", block, blocks()));
  std::uint32_t from;
  const std::uint64_t seq = next_seq(from);
  if (distributed_) [[unlikely]] {
    if (!local_[from]) return;
    if (!local_[block]) {
      exchange_->send(Place{t < now() ? now() : t, seq}, block, fn, obj, arg);
      return;
    }
  }
  insert(t, seq, fn, obj, arg, block);
}

void Calendar::set_exchange(BlockExchange* exchange, const std::vector<bool>& local_blocks) {
  if (local_blocks.size() != counters_.size())
    throw std::logic_error(
        fmt::format("calendar: {} local-block flags for {} blocks", local_blocks.size(), counters_.size()));
  exchange_ = exchange;
  distributed_ = exchange != nullptr;
  local_ = local_blocks;
}

void Calendar::at_place(Place place, std::uint32_t block, EventFn fn, void* obj, std::uint64_t arg) {
  if (thread_ahead_ && !running_) sync_thread_slow();
  if (place.at == kTickMax) return;
  if (block > blocks() || block_of_seq(place.seq) > blocks())
    throw std::logic_error(fmt::format("calendar: a place of block {} run as block {}, of {} blocks",
                                       block_of_seq(place.seq), block, blocks()));
  insert(place.at, place.seq, fn, obj, arg, block);
}

std::uint64_t Calendar::reserve_seq() {
  std::uint32_t block;
  return next_seq(block);
}

void Calendar::at_reserved(Tick t, std::uint64_t seq, EventFn fn, void* obj, std::uint64_t arg) {
  if (thread_ahead_ && !running_) sync_thread_slow();
  if (t == kTickMax) return;
  const std::uint32_t b = block_of_seq(seq);
  const std::uint64_t count = seq & ((std::uint64_t{1} << counter_bits_) - 1);
  if (b > blocks() || count >= (multi_block_ ? counters_[b] : seq_))
    throw std::logic_error("calendar: at_reserved with a sequence number never reserved");
  if (distributed_ && !local_[b]) [[unlikely]]
    return;
  insert(t, seq, fn, obj, arg, b);
}

Calendar::~Calendar() {
  if (placing_ == this) placing_ = nullptr;
}

void Calendar::set_blocks(std::uint32_t count) {
  if (count == 0 || count > kMaxBlocks)
    throw std::invalid_argument(fmt::format("calendar: {} partition blocks (1 to {})", count, kMaxBlocks));
  if (fired_ != 0 || pending() != 0 || seq_ != 0)
    throw std::logic_error("calendar: partition blocks are set before anything is scheduled");
  // One block needs no world block of its own: everything is block 0.
  counters_.assign(count == 1 ? 1 : count + 1, 0);
  multi_block_ = count > 1;
  placing_ = multi_block_ ? this : nullptr;
  // The block numbers (world's included) take the top bits of a sequence.
  counter_bits_ = kSeqBits - (count == 1 ? 0 : std::bit_width(count));
  context_block_ = world_block();
  cur_block_ = context_block_;
}

std::uint32_t Calendar::context_block() const {
  std::uint32_t b;
  if (thread_block_fn_ && sc_core::sc_get_current_process_b() && thread_block_fn_(b)) return b;
  return context_block_;
}

void Calendar::arm() {
  const Key next = next_key();
  if (next == kNoKey) {
    armed_for_ = kTickMax;
    return;
  }
  Tick t = time_of(next);
  // Relative to SystemC's clock: a thread may be ahead of it (advance_thread).
  Tick n = sc_clock();
  // An earlier notification overrides a pending later one (IEEE 1666 5.10.8).
  if (t <= n)
    wake_.notify(sc_core::SC_ZERO_TIME);
  else
    wake_.notify(to_sc(t - n));
  armed_for_ = t;
}

void Calendar::request_stop() {
  if (stop_at_ != kTickMax) return;
  ahead_until_ = 0;
  if (!running_) sync_thread();
  stop_at_ = now();
  if (!running_) {
    const Tick sc_now = sc_clock();
    if (stop_at_ <= sc_now) {
      sc_core::sc_pause();
    } else {
      wake_.notify(to_sc(stop_at_ - sc_now));
      armed_for_ = stop_at_;
    }
  }
}

inline Tick Calendar::activity_limit(Tick n) {
  // Asked again only when a handler may have changed it (notify_now,
  // activity_changed) or other processes ran (invalidate_limit): nothing
  // else runs meanwhile.
  if (limit_epoch_ != activity_epoch_) [[unlikely]] {
    limit_ = n + sc_core::sc_time_to_pending_activity().value();
    limit_epoch_ = activity_epoch_;
  }
  return limit_;
}

void Calendar::fire_ahead(Tick n, Tick cap) {
  // The horizon changes only between runs (set_horizon), never in a handler.
  cap = std::min(cap, horizon_);
  while (stop_at_ == kTickMax) {
    // next_key(), remembering where the key is.
    const Key near = near_.front();
    const bool is_near = near < far_next_;
    const Key top = is_near ? near : far_next_;
    const Tick t = time_of(top);
    if (t > n && t >= cap) break;  // no event at all is a key at kTickMax, never before `cap`
    const std::uint32_t slot = slot_of(top);
    Callback& cb = slots_[slot];
    const EventFn fn = cb.fn;
    if (t > n) {
      // A thread's wake-up fires at SystemC's time, never ahead, so that the
      // thread resumes at once, in its event's place among those at t.
      if (fn == &Calendar::wake_thread) break;
      // Run ahead only strictly before every pending SystemC activity.
      if (t >= activity_limit(n)) break;
      ahead_ = true;
      ahead_now_ = t;
    }
    if (is_near) {
      near_.pop_front();
    } else {
      far_.take(0);
      far_next_ = far_.empty() ? kNoKey : far_.front();
    }
    void* const obj = cb.obj;
    const std::uint64_t arg = cb.arg;
    cur_block_ = cb.block;
    cb.arg = free_slot_;
    free_slot_ = slot;
    ++fired_;
    fn(obj, arg);
    if (fired_ >= pause_after_) [[unlikely]]
      pause_hook_(pause_ctx_);
  }
}

void Calendar::park_wake() {
  if (parked_) return;
  wake_.cancel();
  armed_for_ = kTickMax;
  parked_ = this;
}

void Calendar::unpark_wake() {
  Calendar* c = parked_;
  parked_ = nullptr;
  if (c->armed_for_ == kTickMax) c->arm();
}

void Calendar::check_threads_synced() {
  if (thread_ahead_ || parked_) throw std::logic_error(kBlockedAhead);
}

void Calendar::run() {
  if (thread_ahead_ || parked_) throw std::logic_error(kBlockedAhead);
  running_ = true;
  dispatching_ = true;
  invalidate_limit();  // other processes ran since it was last asked
  const Tick n = now();
  if (stop_at_ != kTickMax) {
    running_ = false;
    dispatching_ = false;
    if (n >= stop_at_) sc_core::sc_pause();
    return;
  }
  fire_ahead(n, kTickMax);
  const Tick reached = ahead_ ? ahead_now_ : n;
  ahead_ = false;
  running_ = false;
  dispatching_ = false;
  progress_ps.store(reached, std::memory_order_relaxed);
  progress_events.store(fired_, std::memory_order_relaxed);
  armed_for_ = kTickMax;
  if (stop_at_ != kTickMax) {
    // Stop requested from a handler: at its (possibly run-ahead) time.
    if (stop_at_ <= n) {
      sc_core::sc_pause();
    } else {
      wake_.notify(to_sc(stop_at_ - n));
      armed_for_ = stop_at_;
    }
    return;
  }
  if (reached > n) {
    // Bring SystemC's clock to where the calendar got to (one wake per
    // run-ahead batch), so the run ends at the last event's time.
    wake_.notify(to_sc(reached - n));
    armed_for_ = reached;
    return;
  }
  arm();
}

// The thread's wait, had it really waited, would end at `t`; until then the
// calendar's method would fire the events before `t` under the run-ahead
// rule, and at `t` (methods run before threads) any events at `t` before the
// thread. So the thread may fire those before `t` itself, the same way, as
// long as nothing else is runnable now; and it may skip the wait when after
// that nothing at all (calendar event or SystemC activity) is due at or
// before `t`.
//
// The calendar's own wake-up is not other activity: it is parked (cancelled)
// from the thread's first advance until the thread really waits or syncs
// (unpark_wake re-arms it before anything else can run), so the kernel's
// next activity, asked once, stays valid until a handler changes it.
bool Calendar::advance_thread(Tick t) {
  ahead_until_ = 0;
  // With several blocks a thread always really waits: whether it could run
  // ahead depends on every other block's events, and a real wait takes a
  // place in its block's order, so running ahead would make its block's
  // order depend on the others (docs/partition.md).
  if (running_ || stop_at_ != kTickMax || t >= horizon_ || multi_block_) return false;
  if (!thread_ahead_) {
    // A new run of this thread: others may have run since its last one.
    if (sc_core::sc_pending_activity_at_current_time()) return false;
    invalidate_limit();
  }
  const Tick n = sc_clock();
  park_wake();
  Tick next = time_of(next_key());
  if (next < t) {
    const bool was_ahead = ahead_;
    const Tick was_now = ahead_now_;
    running_ = true;
    dispatching_ = true;
    fire_ahead(n, t);
    running_ = false;
    dispatching_ = false;
    ahead_ = was_ahead;
    ahead_now_ = was_now;
    if (stop_at_ != kTickMax) {
      // A handler asked to stop (at its time, after n): the method stops there.
      parked_ = nullptr;
      wake_.notify(to_sc(stop_at_ - n));
      armed_for_ = stop_at_;
      return false;
    }
    next = time_of(next_key());
  }
  if (next <= t) return false;
  // While this thread runs ahead nothing else runs and it changes nothing
  // the kernel sees (that would sync it first), so the next activity stays
  // valid until a handler changes it.
  const Tick limit = activity_limit(n);
  if (limit <= t) return false;
  ahead_ = true;
  ahead_now_ = t;
  thread_ahead_ = true;
  ahead_until_ = std::min({limit, horizon_, next});
  return true;
}

void Calendar::thread_wait_until_slow(Tick t) {
  ahead_until_ = 0;
  const Tick n = now();
  if (t > n && advance_thread(t)) return;
  if (t > sc_clock()) {
    thread_sleep_until(t);
    return;
  }
  if (parked_) unpark_wake();
  sc_core::wait(sc_core::SC_ZERO_TIME);
}

sc_core::sc_event& Calendar::wake_event_of_current_thread() {
  const sc_core::sc_process_b* p = sc_core::sc_get_current_process_b();
  if (p != last_waker_process_) {
    std::unique_ptr<sc_core::sc_event>& e = thread_wakes_[p];
    if (!e) e = std::make_unique<sc_core::sc_event>();
    last_waker_process_ = p;
    last_waker_ = e.get();
  }
  return *last_waker_;
}

// Immediate: the thread becomes runnable in this evaluation phase, after the
// threads woken by earlier events at this time and before those of later ones
// (delta notifications would be released in reverse order). fire_ahead never
// fires this ahead of SystemC's clock.
void Calendar::wake_thread(void* event, std::uint64_t fired_flag) {
  if (fired_flag) *reinterpret_cast<bool*>(fired_flag) = true;
  ++activity_epoch_;
  static_cast<sc_core::sc_event*>(event)->notify();
}

void Calendar::thread_sleep_until(Tick t) {
  // A thread that ran ahead and now really waits: its wait from SystemC's
  // clock to `t` covers the time it was ahead (nobody saw it meanwhile).
  ahead_until_ = 0;
  ahead_ = false;
  thread_ahead_ = false;
  sc_core::sc_event& e = wake_event_of_current_thread();
  at(t, &Calendar::wake_thread, &e);
  if (parked_) unpark_wake();
  sc_core::wait(e);
}

bool Calendar::thread_wait_event_until(sc_core::sc_event& e, Tick t) {
  sync_thread();
  bool timed_out = false;
  const std::uint64_t timeout =
      at_cancellable(t, &Calendar::wake_thread, &e, reinterpret_cast<std::uintptr_t>(&timed_out));
  sc_core::wait(e);
  if (!timed_out) cancel(timeout);
  return !timed_out;
}

std::uint64_t Calendar::at_cancellable(Tick t, EventFn fn, void* obj, std::uint64_t arg) {
  if (thread_ahead_ && !running_) sync_thread_slow();
  const std::uint64_t seq = reserve_seq();
  if (distributed_ && !local_[block_of_seq(seq)]) [[unlikely]]
    return seq;
  insert(t, seq, fn, obj, arg, block_of_seq(seq));
  return seq;
}

void Calendar::cancel(std::uint64_t handle) {
  const Key was_next = next_key();
  Key k = near_.remove_seq(handle);
  for (std::size_t i = 0; k == kNoKey && i < far_.size(); ++i) {
    if (seq_of(far_.keys[i]) == handle) {
      k = far_.take(i);
      far_next_ = far_.empty() ? kNoKey : far_.front();
    }
  }
  if (k == kNoKey) return;  // fired already
  ahead_until_ = 0;
  const std::uint32_t slot = slot_of(k);
  slots_[slot].arg = free_slot_;
  free_slot_ = slot;
  if (k == was_next && !running_ && stop_at_ == kTickMax) {
    // The wake-up was for the withdrawn event: none is due then any more.
    wake_.cancel();
    armed_for_ = kTickMax;
    arm();
  }
}

void Calendar::sync_thread_slow() {
  ahead_until_ = 0;
  const Tick t = ahead_now_;
  ahead_ = false;
  thread_ahead_ = false;
  if (parked_) unpark_wake();
  sc_core::wait(to_sc(t - sc_clock()));
}

}  // namespace nicsim
