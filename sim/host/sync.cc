// Synchronisation in simulated time: BlockScope, Mutex, WaitQueue, Timer.
#include <fmt/format.h>

#include <algorithm>

#include "core/sim.h"
#include "host/host.h"

namespace nicsim::host {

BlockScope::BlockScope(Host& host, const char* what) : thread_(host.current()), previous_(nullptr) {
  if (!thread_) return;
  previous_ = thread_->blocked_in_;
  if (!previous_) thread_->blocked_in_ = what;
}

BlockScope::~BlockScope() {
  if (thread_) thread_->blocked_in_ = previous_;
}

// --- Mutex -----------------------------------------------------------------

bool Mutex::lock(std::source_location where) {
  if (!host_.may_block("mutex_lock", where)) return false;
  HostThread* me = host_.current();
  if (owner_ == me) {
    Sim::get().error(host_.name(),
                     fmt::format("mutex_lock of a mutex thread '{}' already holds (self-deadlock) at {}:{}", me->name(),
                                 where.file_name(), where.line()));
    return false;
  }
  if (!owner_) {
    owner_ = me;
    return true;
  }
  waiters_.push_back(me);
  // Still waiting: the thread is being unwound (Host::end_threads).
  struct Leave {
    Mutex& m;
    HostThread* me;
    ~Leave() {
      if (m.owner_ != me) m.waiters_.erase(std::find(m.waiters_.begin(), m.waiters_.end(), me));
    }
  } leave{*this, me};
  BlockScope scope(host_, "mutex_lock");
  Calendar::sync_thread();
  while (owner_ != me) sc_core::wait(me->wake_);
  return true;
}

bool Mutex::try_lock() {
  HostThread* me = host_.current();
  if (!me) {
    // The owner must be a thread that can later unlock; an interrupt
    // handler or a hardware callback cannot own a sleeping mutex.
    Sim::get().error(host_.name(), "mutex try_lock outside a host thread");
    return false;
  }
  if (owner_) return false;
  owner_ = me;
  return true;
}

void Mutex::unlock() {
  HostThread* me = host_.current();
  if (!me || owner_ != me) {
    Sim::get().error(host_.name(),
                     fmt::format("mutex unlock by {} which does not hold it",
                                 me ? fmt::format("thread '{}'", me->name()) : std::string("a non-thread context")));
    return;
  }
  if (waiters_.empty()) {
    owner_ = nullptr;
    return;
  }
  // Hand ownership to the longest waiter now, so that nobody can barge in
  // before it runs.
  owner_ = waiters_.front();
  waiters_.pop_front();
  Calendar::notify_now(owner_->wake_);
}

// --- WaitQueue -------------------------------------------------------------

bool WaitQueue::wait(Mutex& m, std::source_location where) { return block(&m, kTickMax, where); }

bool WaitQueue::wait_until(Mutex& m, Tick deadline, std::source_location where) { return block(&m, deadline, where); }

bool WaitQueue::wait(std::source_location where) { return block(nullptr, kTickMax, where); }

bool WaitQueue::wait_until(Tick deadline, std::source_location where) { return block(nullptr, deadline, where); }

bool WaitQueue::block(Mutex* m, Tick deadline, const std::source_location& where) {
  if (!host_.may_block("wait_queue_wait", where)) return false;
  HostThread* me = host_.current();
  if (m && m->owner_ != me) {
    Sim::get().error(host_.name(), fmt::format("wait_queue_wait by thread '{}' without holding the mutex at {}:{}",
                                               me->name(), where.file_name(), where.line()));
    return false;
  }
  if (deadline <= now()) return false;
  bool notified;
  {
    Waiter w{me, &me->wake_, false};
    waiters_.push_back(&w);
    // A waiter not notified leaves the queue however the wait ends: at its
    // deadline, or unwound by Host::end_threads.
    struct Leave {
      std::deque<Waiter*>& waiters;
      Waiter& w;
      ~Leave() {
        if (!w.notified) waiters.erase(std::find(waiters.begin(), waiters.end(), &w));
      }
    } leave{waiters_, w};
    if (m) m->unlock();
    BlockScope scope(host_, "wait_queue");
    Calendar::sync_thread();
    while (!w.notified) {
      if (deadline == kTickMax) {
        sc_core::wait(me->wake_);
        continue;
      }
      Tick n = now();
      if (n >= deadline) break;
      Sim::get().calendar().thread_wait_event_until(me->wake_, deadline);
    }
    notified = w.notified;
  }
  if (m) m->lock(where);
  return notified;
}

void WaitQueue::notify_one() {
  if (waiters_.empty()) return;
  Waiter* w = waiters_.front();
  waiters_.pop_front();
  w->notified = true;
  Calendar::notify_now(*w->wake);
}

void WaitQueue::notify_all() {
  while (!waiters_.empty()) notify_one();
}

// --- Timer -----------------------------------------------------------------

Timer::Timer(Host& host, std::string name, std::function<void()> callback)
    : host_(host), name_(std::move(name)), callback_(std::move(callback)) {}

Timer::~Timer() { cancel(); }

void Timer::start(Tick delay) {
  cancel();
  generation_ = host_.next_timer_id_++;
  host_.timers_[generation_] = this;
  armed_ = true;
  Sim::get().calendar().at(add_saturating(now(), delay), &Host::timer_expired, &host_, generation_);
}

void Timer::cancel() {
  if (!armed_) return;
  host_.timers_.erase(generation_);
  armed_ = false;
}

}  // namespace nicsim::host
