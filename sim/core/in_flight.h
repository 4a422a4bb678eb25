// Objects a hardware model hands to the calendar or the host bus as the
// context of a callback (a continuation, the data of a DMA, a queued job):
// the callback deletes its object once it has run. While pending, each
// object is also on its model's InFlightList, so that those still pending
// when the model goes (its world ended with them on the calendar or the
// bus) are deleted with it rather than leaked. Deleting one takes it off
// the list; the list never fires anything.
//
// The object keeps the link as a member named `in_flight`, last and with a
// default initialiser, so that aggregate initialisation of the other
// members stays as it was:
//   struct Job { Model* m; int x; InFlight in_flight{}; };
//   calendar.at(t, &fire, list.add(new Job{this, 3}));
#pragma once

namespace nicsim {

class InFlight {
 public:
  InFlight() = default;
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
  ~InFlight() {
    if (prev_) {
      prev_->next_ = next_;
      next_->prev_ = prev_;
    }
  }

 private:
  friend class InFlightList;
  InFlight* prev_ = nullptr;
  InFlight* next_ = nullptr;
  void* object_ = nullptr;         // the object this link is a member of
  void (*drop_)(void*) = nullptr;  // deletes it as its own type
};

class InFlightList {
 public:
  InFlightList() { head_.prev_ = head_.next_ = &head_; }
  InFlightList(const InFlightList&) = delete;
  InFlightList& operator=(const InFlightList&) = delete;
  ~InFlightList() {
    while (head_.next_ != &head_) head_.next_->drop_(head_.next_->object_);
  }
  template <class T>
  T* add(T* object) {
    InFlight& l = object->in_flight;
    l.object_ = object;
    l.drop_ = [](void* o) { delete static_cast<T*>(o); };
    l.prev_ = head_.prev_;
    l.next_ = &head_;
    head_.prev_->next_ = &l;
    head_.prev_ = &l;
    return object;
  }
  bool empty() const { return head_.next_ == &head_; }

 private:
  InFlight head_;
};

}  // namespace nicsim
