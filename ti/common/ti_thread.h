// The transport's system thread, as both providers keep one per node: it
// runs, in order, the work the provider hands it (connection request
// callbacks, destroy_ti's and disconnect's context callbacks, events),
// outside interrupt context, charging each item's CPU time.
#pragma once
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "host/host.h"

namespace nicsim::ti_core {

class SystemThread {
 public:
  SystemThread(host::Host& h, std::string name) : host_(h), name_(std::move(name)), wake_(new host::WaitQueue(h)) {}
  // Queues fn; it runs once the thread has started.
  void post(std::function<void()> fn) {
    work_.push_back(std::move(fn));
    wake_->notify_one();
  }
  void start() {
    if (started_) return;
    started_ = true;
    host_.spawn(name_, [this] { run(); });
  }

 private:
  void run() {
    for (;;) {
      while (work_.empty()) wake_->wait();
      auto fn = std::move(work_.front());
      work_.pop_front();
      host_.work("ti_op");
      fn();
    }
  }
  host::Host& host_;
  std::string name_;
  std::unique_ptr<host::WaitQueue> wake_;
  std::deque<std::function<void()>> work_;
  bool started_ = false;
};

}  // namespace nicsim::ti_core
