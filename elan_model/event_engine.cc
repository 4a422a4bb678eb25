// The Elan3 event engine: sets are queued and done one at a time. An event
// fires when its decremented count is exactly 0; then its action runs
// (block copy, done word, chained DMA, chained event) and, with kEvIrq, an
// interrupt carries its cookie to the driver.
//
// Events live in node memory (the driver writes them), but the engine holds
// the events it was primed with (event_cache_entries, LRU): prime_event
// gives the count, and the action words are read once then, off the
// message's path. A set of a held event decrements the card's count and
// writes it through to node memory (a posted write, so the CPU's polls see
// it); only a set of an event not held is a read-modify-write over the
// bus. An event is held while armed (count above 0); once it fires it is
// let go until primed again. The real Elan3 keeps events in the card's own
// memory, so setting one costs no PCI read; holding the primed ones keeps
// that property while this model's driver keeps events in node memory
// (DESIGN rule 3). The driver changes an event only through prime_event
// (driver/elan3_dev.h), which refreshes the held copy; re-priming an event
// that has not fired races with a set in flight as it does on the card.
#include "elan_model/elan3.h"

namespace nicsim::elan3 {

namespace {
constexpr std::uint32_t kIrqBits = event::kEvIrq | event::kCookieMask;
}  // namespace

EventEngine::EventEngine(Elan3& elan) : elan_(elan) {}

void EventEngine::set(E3Addr ev, std::uint32_t need) {
  queue_.push_back({ev, need});
  if (!busy_) run();
}

void EventEngine::prime(E3Addr ev, std::int32_t count) {
  queue_.push_back({ev, perm::kLocalWrite, true, count});
  if (!busy_) run();
}

void EventEngine::interrupt(E3Addr ev, bool on, std::uint32_t cookie) {
  Op op{ev, perm::kLocalWrite};
  op.retype = true;
  op.irq_word = (on ? event::kEvIrq : 0u) | (cookie & event::kCookieMask);
  queue_.push_back(op);
  if (!busy_) run();
}

// event_irq: the type word keeps its action and gets the new flag and
// cookie (written through to node memory); a held event changes on the
// card, one not held is read and written over the bus.
void EventEngine::retype(const Op& op, std::uint64_t host) {
  if (Held* h = held(op.ev)) {
    h->type = (h->type & ~kIrqBits) | op.irq_word;
    retype_write(h->type, h->count);
    return;
  }
  elan_.bus_read(host, ev_.data(), event::kSize, {member_fn<&EventEngine::retype_read>(), this});
}

void EventEngine::retype_read(std::uint64_t arg) {
  const Op& op = queue_.front();
  if (arg & host::kDmaFailedBit) {
    fault(Fault::BusError, op.ev);
    return;
  }
  retype_write((static_cast<std::uint32_t>(get(ev_.data(), event::ev_Type)) & ~kIrqBits) | op.irq_word,
               static_cast<std::int32_t>(get(ev_.data(), event::ev_Count)));
}

// The new type word goes out after event_cycles.
void EventEngine::retype_write(std::uint32_t type, std::int32_t count) {
  update_ = Update{host_, count, type, 0, 0};
  Sim::get().calendar().at_member<&EventEngine::retype_written>(
      add_saturating(Elan3::now(), elan_.cycles(elan_.params().event_cycles)), this);
}

void EventEngine::retype_written() {
  const E3Addr ev = queue_.front().ev;
  const Update u = update_;
  elan_.bus_write(u.host + event::ev_Type.offset, &u.type, 4);
  elan_.trace("event_irq", {{"event", static_cast<unsigned>(ev)}, {"irq", (u.type & event::kEvIrq) ? 1u : 0u}});
  // Already fired: the interrupt it would have raised is raised now, so
  // software arming it races with nothing.
  if (u.count <= 0 && (u.type & event::kEvIrq))
    elan_.post_interrupt(intq::Cause::Event, 0, elan_.node_id(), u.type & event::kCookieMask, ev);
  next();
}

void EventEngine::next() {
  queue_.pop_front();
  busy_ = false;
  if (!queue_.empty()) run();
}

void EventEngine::fault(Fault f, E3Addr at) {
  elan_.post_interrupt(intq::Cause::DmaError, static_cast<std::uint8_t>(f), elan_.node_id(), 0, at);
  next();
}

EventEngine::Held* EventEngine::held(E3Addr ev) {
  for (Held& h : held_)
    if (h.used && h.ev == ev) {
      h.used = ++stamp_;
      return &h;
    }
  return nullptr;
}

void EventEngine::hold(E3Addr ev, std::int32_t count, const std::uint8_t* words) {
  if (elan_.params().event_cache_entries == 0) return;
  if (held_.empty()) held_.resize(elan_.params().event_cache_entries);
  Held* h = held(ev);
  if (count <= 0) {  // primed spent: sets read node memory (see run())
    if (h) *h = Held{};
    return;
  }
  if (!h) {
    h = &held_.front();
    for (Held& e : held_) {
      if (!e.used) {
        h = &e;
        break;
      }
      if (e.used < h->used) h = &e;
    }
  }
  h->ev = ev;
  h->count = count;
  h->type = static_cast<std::uint32_t>(get(words, event::ev_Type));
  h->src = static_cast<E3Addr>(get(words, event::ev_Source));
  h->dst = static_cast<E3Addr>(get(words, event::ev_Dest));
  h->used = ++stamp_;
}

void EventEngine::run() {
  busy_ = true;
  const Op& op = queue_.front();
  if (op.ev % 8 != 0) {
    fault(Fault::BadEvent, op.ev);
    return;
  }
  // A set: the event's page must allow the setter's access and our own
  // update.
  std::uint32_t need = op.need | perm::kLocalRead | perm::kLocalWrite;
  if (op.retype)
    need = perm::kLocalRead | perm::kLocalWrite;
  else if (op.prime)
    need = perm::kLocalWrite;
  else
    ++elan_.mutable_stats().events_set;
  elan_.mmu().translate(op.ev, event::kSize, need, t_, {member_fn<&EventEngine::translated>(), this});
}

void EventEngine::translated() {
  const Op op = queue_.front();
  if (t_.fault != Fault::None) {
    fault(t_.fault, t_.fault_addr);
    return;
  }
  host_ = t_.pieces.front().addr;
  if (op.retype) {
    retype(op, host_);
    return;
  }
  if (op.prime) {
    elan_.bus_write(host_ + event::ev_Count.offset, &op.count, 4);
    elan_.trace("event_primed", {{"event", static_cast<unsigned>(op.ev)}, {"count", op.count}});
    if (elan_.params().event_cache_entries == 0) {
      next();
      return;
    }
    // Take the action words the driver stored before the command (the
    // read follows the count's write on the bus; the count is the
    // command's, whatever the read returns for it).
    elan_.bus_read(host_, ev_.data(), event::kSize, {member_fn<&EventEngine::prime_read>(), this});
    return;
  }
  if (Held* h = held(op.ev)) {
    ++elan_.mutable_stats().events_held_sets;
    const Held e = *h;
    // A fired event is let go: the driver re-primes it by storing into
    // node memory before its command reaches the Elan, so a set arriving
    // in between must see that store (a read-modify-write, as without the
    // hold) or the arrival would go unsignalled.
    if (e.count - 1 <= 0)
      *h = Held{};
    else
      h->count = e.count - 1;
    update(host_, e.count - 1, e.type, e.src, e.dst);
    return;
  }
  elan_.bus_read(host_, ev_.data(), event::kSize, {member_fn<&EventEngine::set_read>(), this});
}

void EventEngine::prime_read(std::uint64_t arg) {
  const Op& op = queue_.front();
  if (arg & host::kDmaFailedBit) {
    fault(Fault::BusError, op.ev);
    return;
  }
  hold(op.ev, op.count, ev_.data());
  next();
}

void EventEngine::set_read(std::uint64_t arg) {
  if (arg & host::kDmaFailedBit) {
    fault(Fault::BusError, queue_.front().ev);
    return;
  }
  const std::uint8_t* d = ev_.data();
  update(host_, static_cast<std::int32_t>(get(d, event::ev_Count)) - 1,
         static_cast<std::uint32_t>(get(d, event::ev_Type)), static_cast<E3Addr>(get(d, event::ev_Source)),
         static_cast<E3Addr>(get(d, event::ev_Dest)));
}

// The set at the head of the queue takes event_cycles, then writes the new
// count; the engine works on it alone meanwhile.
void EventEngine::update(std::uint64_t host, std::int32_t count, std::uint32_t type, E3Addr src, E3Addr dst) {
  update_ = Update{host, count, type, src, dst};
  Sim::get().calendar().at_member<&EventEngine::write_count>(
      add_saturating(Elan3::now(), elan_.cycles(elan_.params().event_cycles)), this);
}

void EventEngine::write_count() {
  const E3Addr ev = queue_.front().ev;
  const Update u = update_;
  std::uint8_t c[4];
  std::memcpy(c, &u.count, 4);
  elan_.bus_write(u.host + event::ev_Count.offset, c, 4);
  elan_.trace("event_set", {{"event", static_cast<unsigned>(ev)}, {"count", u.count}});
  if (u.count == 0) {
    fired(ev, u.type, u.src, u.dst);
    return;
  }
  next();
}

void EventEngine::fired(E3Addr ev, std::uint32_t type, E3Addr src, E3Addr dst) {
  ++elan_.mutable_stats().events_fired;
  const std::uint32_t action = type >> event::kTypeShift;
  elan_.trace("event_fired", {{"event", static_cast<unsigned>(ev)}, {"type", event::type_name(action)}});
  fired_ = Fired{ev, type, src, dst};
  switch (static_cast<event::Type>(action)) {
    case event::Type::None:
      raise(ev, type);
      next();
      return;
    case event::Type::Chain:
      raise(ev, type);
      // The chained event is set after this one (queued behind what waits).
      queue_.push_back({src, perm::kLocalWrite});
      next();
      return;
    case event::Type::Dma:
      raise(ev, type);
      elan_.dma().fetch(src, false);
      next();
      return;
    case event::Type::DoneWord:
      elan_.mmu().translate(dst, 4, perm::kLocalWrite, t_, {member_fn<&EventEngine::done_word_translated>(), this});
      return;
    case event::Type::BlockCopy:
      elan_.mmu().translate(src, kBlockSize, perm::kLocalRead, t_,
                            {member_fn<&EventEngine::copy_from_translated>(), this});
      return;
  }
  fault(Fault::BadEvent, ev);
}

void EventEngine::done_word_translated() {
  if (t_.fault != Fault::None) {
    fault(t_.fault, t_.fault_addr);
    return;
  }
  // The interrupt follows the word's write on the bus, so the driver that
  // takes it sees the word.
  elan_.write_pieces(t_.pieces, reinterpret_cast<const std::uint8_t*>(&fired_.src), irq_after(fired_));
  next();
}

void EventEngine::copy_from_translated() {
  if (t_.fault != Fault::None) {
    fault(t_.fault, t_.fault_addr);
    return;
  }
  elan_.read_pieces(t_.pieces, block_.data(), {member_fn<&EventEngine::copy_read>(), this});
}

void EventEngine::copy_read(std::uint64_t arg) {
  if (arg & host::kDmaFailedBit) {
    fault(Fault::BusError, fired_.dst);
    return;
  }
  elan_.mmu().translate(fired_.dst, kBlockSize, perm::kLocalWrite, t_,
                        {member_fn<&EventEngine::copy_to_translated>(), this});
}

void EventEngine::copy_to_translated() {
  if (t_.fault != Fault::None) {
    fault(t_.fault, t_.fault_addr);
    return;
  }
  elan_.write_pieces(t_.pieces, block_.data(), irq_after(fired_));
  next();
}

void EventEngine::raise(E3Addr ev, std::uint32_t type) {
  if (type & event::kEvIrq) elan_.post_interrupt(intq::Cause::Event, 0, elan_.node_id(), type & event::kCookieMask, ev);
}

Then EventEngine::irq_after(const Fired& f) {
  if (!(f.type & event::kEvIrq)) return {};
  std::uint32_t slot;
  if (free_irqs_.empty()) {
    slot = static_cast<std::uint32_t>(irqs_.size());
    irqs_.emplace_back();
  } else {
    slot = free_irqs_.back();
    free_irqs_.pop_back();
  }
  irqs_[slot] = Irq{f.ev, f.type};
  return {member_fn<&EventEngine::irq_written>(), this, slot};
}

void EventEngine::irq_written(std::uint64_t arg) {
  const auto slot = static_cast<std::uint32_t>(arg & ~host::kDmaFailedBit);
  const Irq irq = irqs_[slot];
  free_irqs_.push_back(slot);
  raise(irq.ev, irq.type);
}

}  // namespace nicsim::elan3
