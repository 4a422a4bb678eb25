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
  constexpr std::uint32_t kIrqBits = event::kEvIrq | event::kCookieMask;
  auto write = [this, op, host](std::uint32_t type, std::int32_t count) {
    elan_.after(elan_.cycles(elan_.params().event_cycles), [this, op, host, type, count] {
      std::uint8_t w[4];
      std::memcpy(w, &type, 4);
      elan_.bus_write(host + event::ev_Type.offset, w, 4);
      elan_.trace("event_irq", {{"event", static_cast<unsigned>(op.ev)}, {"irq", (type & event::kEvIrq) ? 1u : 0u}});
      // Already fired: the interrupt it would have raised is raised now, so
      // software arming it races with nothing.
      if (count <= 0 && (type & event::kEvIrq))
        elan_.post_interrupt(intq::Cause::Event, 0, elan_.node_id(), type & event::kCookieMask, op.ev);
      next();
    });
  };
  if (Held* h = held(op.ev)) {
    h->type = (h->type & ~kIrqBits) | op.irq_word;
    write(h->type, h->count);
    return;
  }
  elan_.bus_read(host, event::kSize, [this, op, write](bool ok, const std::uint8_t* d) {
    if (!ok) {
      fault(Fault::BusError, op.ev);
      return;
    }
    write((static_cast<std::uint32_t>(get(d, event::ev_Type)) & ~kIrqBits) | op.irq_word,
          static_cast<std::int32_t>(get(d, event::ev_Count)));
  });
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
  const Op op = queue_.front();
  if (op.ev % 8 != 0) {
    fault(Fault::BadEvent, op.ev);
    return;
  }
  if (op.retype) {
    elan_.mmu().translate(op.ev, event::kSize, perm::kLocalRead | perm::kLocalWrite, [this, op](Translation& t) {
      if (t.fault != Fault::None) {
        fault(t.fault, t.fault_addr);
        return;
      }
      retype(op, t.pieces.front().addr);
    });
    return;
  }
  if (op.prime) {
    elan_.mmu().translate(op.ev, event::kSize, perm::kLocalWrite, [this, op](Translation& t) {
      if (t.fault != Fault::None) {
        fault(t.fault, t.fault_addr);
        return;
      }
      std::uint8_t c[4];
      std::memcpy(c, &op.count, 4);
      const std::uint64_t host = t.pieces.front().addr;
      elan_.bus_write(host + event::ev_Count.offset, c, 4);
      elan_.trace("event_primed", {{"event", static_cast<unsigned>(op.ev)}, {"count", op.count}});
      if (elan_.params().event_cache_entries == 0) {
        next();
        return;
      }
      // Take the action words the driver stored before the command (the
      // read follows the count's write on the bus; the count is the
      // command's, whatever the read returns for it).
      elan_.bus_read(host, event::kSize, [this, op](bool ok, const std::uint8_t* d) {
        if (!ok) {
          fault(Fault::BusError, op.ev);
          return;
        }
        hold(op.ev, op.count, d);
        next();
      });
    });
    return;
  }
  ++elan_.mutable_stats().events_set;
  // The event's page must allow the setter's access and our own update.
  elan_.mmu().translate(
      op.ev, event::kSize, op.need | perm::kLocalRead | perm::kLocalWrite, [this, op](Translation& t) {
        if (t.fault != Fault::None) {
          fault(t.fault, t.fault_addr);
          return;
        }
        const std::uint64_t host = t.pieces.front().addr;
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
          update(host, e.count - 1, e.type, e.src, e.dst);
          return;
        }
        elan_.bus_read(host, event::kSize, [this, op, host](bool ok, const std::uint8_t* d) {
          if (!ok) {
            fault(Fault::BusError, op.ev);
            return;
          }
          update(host, static_cast<std::int32_t>(get(d, event::ev_Count)) - 1,
                 static_cast<std::uint32_t>(get(d, event::ev_Type)), static_cast<E3Addr>(get(d, event::ev_Source)),
                 static_cast<E3Addr>(get(d, event::ev_Dest)));
        });
      });
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
  auto irq = [this, ev, type] {
    if (type & event::kEvIrq)
      elan_.post_interrupt(intq::Cause::Event, 0, elan_.node_id(), type & event::kCookieMask, ev);
  };
  switch (static_cast<event::Type>(action)) {
    case event::Type::None:
      irq();
      next();
      return;
    case event::Type::Chain:
      irq();
      // The chained event is set after this one (queued behind what waits).
      queue_.push_back({src, perm::kLocalWrite});
      next();
      return;
    case event::Type::Dma:
      irq();
      elan_.dma().fetch(src, false);
      next();
      return;
    case event::Type::DoneWord:
      elan_.mmu().translate(dst, 4, perm::kLocalWrite, [this, src, irq](Translation& t) {
        if (t.fault != Fault::None) {
          fault(t.fault, t.fault_addr);
          return;
        }
        std::uint8_t w[4];
        std::memcpy(w, &src, 4);
        // The interrupt follows the word's write on the bus, so the driver
        // that takes it sees the word.
        elan_.write_pieces(t.pieces, w, [irq](bool) { irq(); });
        next();
      });
      return;
    case event::Type::BlockCopy:
      elan_.mmu().translate(src, kBlockSize, perm::kLocalRead, [this, dst, irq](Translation& from) {
        if (from.fault != Fault::None) {
          fault(from.fault, from.fault_addr);
          return;
        }
        elan_.read_pieces(from.pieces, [this, dst, irq](bool ok, std::vector<std::uint8_t>& block) {
          if (!ok) {
            fault(Fault::BusError, dst);
            return;
          }
          auto data = std::make_shared<std::vector<std::uint8_t>>(std::move(block));
          elan_.mmu().translate(dst, kBlockSize, perm::kLocalWrite, [this, data, irq](Translation& to) {
            if (to.fault != Fault::None) {
              fault(to.fault, to.fault_addr);
              return;
            }
            elan_.write_pieces(to.pieces, data->data(), [irq](bool) { irq(); });
            next();
          });
        });
      });
      return;
  }
  fault(Fault::BadEvent, ev);
}

}  // namespace nicsim::elan3
