// The Elan3 device: command port (MMIO), host bus helpers, the interrupt
// queue, the network port, and the wiring of the engines.
#include "elan_model/elan3.h"

#include <fmt/format.h>

#include <cstring>

#include "core/sim.h"
#include "trace/stats.h"

namespace nicsim::elan3 {

namespace {

// The data of a bus write: most are a few words (events, PTEs, queue
// pointers, interrupt entries) and stay in the object itself.
class BusData {
 public:
  void assign(const void* from, std::uint32_t len) {
    len_ = len;
    if (len > kInline)
      large_.assign(static_cast<const std::uint8_t*>(from), static_cast<const std::uint8_t*>(from) + len);
    else if (len)
      std::memcpy(inline_.data(), from, len);
  }
  std::uint8_t* data() { return len_ > kInline ? large_.data() : inline_.data(); }

 private:
  static constexpr std::uint32_t kInline = 64;
  std::uint32_t len_ = 0;
  std::array<std::uint8_t, kInline> inline_;
  std::vector<std::uint8_t> large_;
};

}  // namespace

struct Elan3::Staged {
  BusData buf;
  Then done;
  std::uint32_t parts = 0;  // SDRAM and mirror writes still to land
  bool failed = false;
  std::uint64_t done_off = 0;  // a card write: where it lands in SDRAM
  std::uint32_t done_len = 0;
};

Elan3::Elan3(fabric::Fabric& fabric, std::uint32_t device_id, std::string name, host::Host& host, host::HostBus& bus,
             const ParamSet& params)
    : Device(fabric, device_id, std::move(name)), p_(elan3_params_from(params)), host_(host), bus_(bus) {
  add_ports(1);
  obj_ = this->name() + ".elan3";
  Sim::get().fsm().declare<DmaMachine>();
  Sim::get().fsm().declare<StreamMachine>();
  bus_.add_function(
      obj_,
      host::pci::Identity{static_cast<std::uint16_t>(reg::kVendorQuadrics),
                          static_cast<std::uint16_t>(reg::kDeviceElan3), static_cast<std::uint8_t>(reg::kRevision),
                          reg::kClassNetworkOther},
      {{obj_, p_.command_port, kCommandPortSize, this}, {obj_ + ".sdram", p_.sdram_bar, p_.sdram_bytes, &card_bar_}});
  sdram_ = std::make_unique<Sdram>(p_.sdram_bytes, cycles(p_.sdram_cycles), p_.sdram_bps);
  mmu_ = std::make_unique<Mmu>(*this);
  dma_ = std::make_unique<DmaEngine>(*this);
  rx_ = std::make_unique<RxEngine>(*this);
  // The receiver does nothing with a packet before its tail is in; all
  // data goes on virtual channel 0 (tokens return as link symbols).
  net_port().deliver_after_tail(rx_after_tail(p_));
  net_port().send_vl0_only();
  events_ = std::make_unique<EventEngine>(*this);
  auto& st = Sim::get().stats();
  auto c = [&](const char* n, const char* unit, const std::uint64_t* v, const char* doc = "") {
    st.counter(obj_, n, unit, v, doc);
  };
  c("commands", "commands", &stats_.commands);
  c("dmas", "descriptors", &stats_.dmas, "descriptors queued (fetched or from read requests)");
  c("dmas_done", "descriptors", &stats_.dmas_done);
  c("dmas_failed", "descriptors", &stats_.dmas_failed, "network errors and local faults");
  c("dma_requeues", "descriptors", &stats_.dma_requeues, "re-queued after a test-fail token");
  c("conditions_false", "descriptors", &stats_.conditions_false,
    "network conditionals some node of the range answered false");
  c("dmas_trapped", "descriptors", &stats_.dmas_trapped,
    "handed back to the driver after a test-fail at failCount 0 (DmaTrap)");
  c("tx_packets", "packets", &stats_.tx_packets);
  c("tx_bytes", "bytes", &stats_.tx_bytes, "payload bytes sent");
  c("rx_packets", "packets", &stats_.rx_packets);
  c("rx_bytes", "bytes", &stats_.rx_bytes, "payload bytes executed");
  c("retransmits", "packets", &stats_.retransmits);
  c("ack_timeouts", "packets", &stats_.ack_timeouts);
  c("acks_sent", "tokens", &stats_.acks_sent);
  c("acks_received", "tokens", &stats_.acks_received);
  c("stale_acks", "tokens", &stats_.stale_acks, "tokens for no packet awaiting one");
  c("rx_bad_crc", "packets", &stats_.rx_bad_crc, "packets and tokens dropped for a bad CRC");
  c("tokens_testfail", "tokens", &stats_.tokens_testfail, "test-fail tokens sent");
  c("tokens_discard", "tokens", &stats_.tokens_discard, "discard tokens sent");
  c("tokens_error", "tokens", &stats_.tokens_error, "error tokens sent");
  c("tlb_hits", "lookups", &stats_.tlb_hits);
  c("tlb_misses", "lookups", &stats_.tlb_misses);
  c("translation_faults", "faults", &stats_.translation_faults);
  c("permission_faults", "faults", &stats_.permission_faults);
  c("events_set", "events", &stats_.events_set);
  c("events_fired", "events", &stats_.events_fired);
  c("events_held_sets", "events", &stats_.events_held_sets);
  c("interrupts", "interrupts", &stats_.interrupts);
  c("queue_messages", "messages", &stats_.queue_messages, "messages written into input queues");
}

Elan3::~Elan3() = default;

bool Elan3::link_up() {
  fabric::Port& p = net_port();
  return p.connected() && p.up();
}

void Elan3::trace(const char* event, std::initializer_list<TraceField> fields) {
  if (tracing()) Sim::get().tracer().record(now(), device_id(), Component::nic, event, fields);
}

// ---- calendar and bus helpers ------------------------------------------------

void Elan3::bus_read(std::uint64_t addr, void* to, std::uint32_t len, Then done) {
  if (is_card(addr))
    card_read(card_offset(addr), to, len, done);
  else
    bus_.dma_read(obj_.c_str(), addr, to, len, done);
}

void Elan3::bus_write(std::uint64_t addr, const void* data, std::uint32_t len, Then done) {
  Staged* w;
  if (free_staged_.empty()) {
    staged_.push_back(std::make_unique<Staged>());
    w = staged_.back().get();
  } else {
    w = free_staged_.back();
    free_staged_.pop_back();
  }
  w->buf.assign(data, len);
  w->done = done;
  w->parts = 1;
  w->failed = false;
  if (is_card(addr)) {
    card_write(w, card_offset(addr), len);
    return;
  }
  bus_.dma_write(obj_.c_str(), addr, w->buf.data(), len,
                 {member_fn<&Elan3::staged_written>(), this, reinterpret_cast<std::uint64_t>(w)});
}

void Elan3::write_from(std::uint64_t addr, const std::uint8_t* data, std::uint32_t len, Then done) {
  if (is_card(addr))
    bus_write(addr, data, len, done);
  else
    bus_.dma_write(obj_.c_str(), addr, data, len, done);
}

void Elan3::staged_written(std::uint64_t arg) {
  auto* w = reinterpret_cast<Staged*>(arg & ~host::kDmaFailedBit);
  w->failed = w->failed || (arg & host::kDmaFailedBit);
  if (--w->parts) return;
  const Then done = w->done;
  const std::uint64_t failed = w->failed ? host::kDmaFailedBit : 0;
  free_staged_.push_back(w);
  if (done.fn) done.fn(done.obj, done.arg | failed);
}

// ---- SDRAM -------------------------------------------------------------------------

void Elan3::card_fault(const char* what, std::uint64_t off, std::uint32_t len, Then done) {
  Sim::get().error(obj_, fmt::format("SDRAM {} of {} bytes at offset {:#x}: beyond the card's {} bytes", what, len, off,
                                     sdram_->size()));
  if (done.fn) Sim::get().calendar().at(now(), done.fn, done.obj, done.arg | host::kDmaFailedBit);
}

void Elan3::card_read(std::uint64_t off, void* to, std::uint32_t len, Then done) {
  if (!sdram_->contains(off, len)) {
    card_fault("read", off, len, done);
    return;
  }
  std::uint32_t slot;
  if (free_card_reads_.empty()) {
    slot = static_cast<std::uint32_t>(card_reads_.size());
    card_reads_.emplace_back();
  } else {
    slot = free_card_reads_.back();
    free_card_reads_.pop_back();
  }
  card_reads_[slot] = CardRead{off, to, len, done};
  Sim::get().calendar().at_member<&Elan3::card_read_done>(sdram_->access(now(), len), this, slot);
}

// The data is taken when the read completes, so it sees every write that
// completed before it.
void Elan3::card_read_done(std::uint64_t slot) {
  const CardRead r = card_reads_[slot];
  free_card_reads_.push_back(static_cast<std::uint32_t>(slot));
  sdram_->read(r.off, r.to, r.len);
  if (r.done.fn) r.done.fn(r.done.obj, r.done.arg);
}

// A write into SDRAM lands when the SDRAM access completes; inside the
// mirrored window it is posted to host memory at the same time, and the
// write is over when both have landed.
void Elan3::card_write(Staged* w, std::uint64_t off, std::uint32_t len) {
  if (!sdram_->contains(off, len)) {
    const Then done = w->done;
    free_staged_.push_back(w);
    card_fault("write", off, len, done);
    return;
  }
  const auto arg = reinterpret_cast<std::uint64_t>(w);
  w->done_off = off;
  w->done_len = len;
  const bool mirrored =
      mirror_bytes_ && off >= mirror_base_ && off + len <= static_cast<std::uint64_t>(mirror_base_) + mirror_bytes_;
  if (mirrored) {
    ++w->parts;
    bus_.dma_write(obj_.c_str(), mirror_host_ + (off - mirror_base_), w->buf.data(), len,
                   {member_fn<&Elan3::staged_written>(), this, arg});
  }
  Sim::get().calendar().at_member<&Elan3::card_written>(sdram_->access(now(), len), this, arg);
}

void Elan3::card_written(std::uint64_t arg) {
  auto* w = reinterpret_cast<Staged*>(arg);
  sdram_->write(w->done_off, w->buf.data(), w->done_len);
  staged_written(arg);
}

// The host's loads and stores through BAR 1: the bus has timed them (a
// store is posted, a load waits for the round trip); here they take effect.
void Elan3::pio(tlm::tlm_generic_payload& gp) {
  const std::uint64_t off = gp.get_address();
  const unsigned len = gp.get_data_length();
  if (!sdram_->contains(off, len)) {
    Sim::get().error(obj_, fmt::format("SDRAM window: {} of {} bytes at offset {:#x} beyond the card's {} bytes",
                                       gp.is_write() ? "store" : "load", len, off, sdram_->size()));
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (gp.is_write())
    sdram_->write(off, gp.get_data_ptr(), len);
  else
    sdram_->read(off, gp.get_data_ptr(), len);
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

Then Elan3::group(std::size_t pieces, Then done) {
  if (pieces == 1 || !done.fn) return done;
  std::uint32_t slot;
  if (free_groups_.empty()) {
    slot = static_cast<std::uint32_t>(groups_.size());
    groups_.emplace_back();
  } else {
    slot = free_groups_.back();
    free_groups_.pop_back();
  }
  groups_[slot] = Group{static_cast<std::uint32_t>(pieces), false, done};
  return {member_fn<&Elan3::piece_done>(), this, slot};
}

void Elan3::piece_done(std::uint64_t arg) {
  const auto slot = static_cast<std::uint32_t>(arg & ~host::kDmaFailedBit);
  Group& g = groups_[slot];
  g.failed = g.failed || (arg & host::kDmaFailedBit);
  if (--g.left) return;
  const Then done = g.done;
  const std::uint64_t failed = g.failed ? host::kDmaFailedBit : 0;
  free_groups_.push_back(slot);
  done.fn(done.obj, done.arg | failed);
}

void Elan3::read_pieces(const std::vector<HostPiece>& pieces, std::uint8_t* to, Then done) {
  if (pieces.empty()) {
    done.fn(done.obj, done.arg);
    return;
  }
  const Then each = group(pieces.size(), done);
  for (const HostPiece& p : pieces) {
    bus_read(p.addr, to, p.len, each);
    to += p.len;
  }
}

void Elan3::write_pieces(const std::vector<HostPiece>& pieces, const std::uint8_t* data, Then done) {
  if (pieces.empty()) {
    if (done.fn) done.fn(done.obj, done.arg);
    return;
  }
  const Then each = group(pieces.size(), done);
  for (const HostPiece& p : pieces) {
    bus_write(p.addr, data, p.len, each);
    data += p.len;
  }
}

// ---- command port --------------------------------------------------------------

namespace {
struct RegInfo {
  Field f;
  reg::Access access;
};
constexpr RegInfo kRegs[] = {
#define NICSIM_X(name, offset, width, access, doc) {reg::name, reg::Access::access},
    NICSIM_ELAN3_REGS(NICSIM_X)
#undef NICSIM_X
};
const RegInfo* find_reg(std::uint64_t off, unsigned len) {
  for (const RegInfo& r : kRegs)
    if (r.f.offset == off && r.f.width == len) return &r;
  return nullptr;
}
}  // namespace

void Elan3::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time&) {
  const std::uint64_t off = gp.get_address();
  const unsigned len = gp.get_data_length();
  std::uint8_t* data = gp.get_data_ptr();
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  const RegInfo* r = find_reg(off, len);
  const bool write = gp.is_write();
  if (!r || (write && r->access == reg::Access::R) || (!write && r->access == reg::Access::W)) {
    Sim::get().error(
        obj_, fmt::format("command port: {} of {} bytes at offset {:#x} ({})", write ? "write" : "read", len, off,
                          !r      ? "no register of that offset and width"
                          : write ? fmt::format("{} is read-only", r->f.name)
                                  : fmt::format("{} is write-only", r->f.name)));
    post_interrupt(intq::Cause::CommandError, 0, node_id_, 0, static_cast<std::uint32_t>(off));
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (write) {
    std::uint64_t v = 0;
    std::memcpy(&v, data, len);
    ++stats_.commands;
    command(off, v);
    return;
  }
  const std::uint64_t v = read_register(off);
  std::memcpy(data, &v, len);
}

// The value of a readable register (b_transport has checked the access).
std::uint64_t Elan3::read_register(std::uint64_t off) {
  std::uint64_t v = 0;
  if (off == reg::id_vendor.offset)
    v = reg::kVendorQuadrics;
  else if (off == reg::id_device.offset)
    v = reg::kDeviceElan3;
  else if (off == reg::id_revision.offset)
    v = reg::kRevision;
  else if (off == reg::node_id.offset)
    v = node_id_;
  else if (off == reg::machine_size.offset)
    v = machine_size_;
  else if (off == reg::link_state.offset)
    v = link_up() ? 1 : 0;
  else if (off == reg::dma_fetched.offset)
    v = dma_->fetched();
  else if (off == reg::control.offset)
    v = control_;
  else if (off == reg::max_payload.offset)
    v = p_.max_payload;
  else if (off == reg::pt_base.offset)
    v = pt_base_;
  else if (off == reg::pt_entries.offset)
    v = pt_entries_;
  else if (off == reg::intq_base.offset)
    v = intq_base_;
  else if (off == reg::intq_entries.offset)
    v = intq_entries_;
  else if (off == reg::intq_consumer.offset)
    v = intq_consumer_;
  else if (off == reg::irq_vector.offset)
    v = static_cast<std::uint32_t>(irq_vector_);
  else if (off == reg::sdram_bytes.offset)
    v = sdram_->size();
  else if (off == reg::mirror_host.offset)
    v = mirror_host_;
  else if (off == reg::mirror_base.offset)
    v = mirror_base_;
  else if (off == reg::mirror_bytes.offset)
    v = mirror_bytes_;
  else if (off == reg::int_status.offset) {
    v = int_status_;
    int_status_ = 0;
  }
  return v;
}

void Elan3::command(std::uint64_t off, std::uint64_t v) {
  const auto v32 = static_cast<std::uint32_t>(v);
  if (tracing()) {
    // Host addresses are traced as node-memory regions ("r<id>+off"): raw
    // pointers differ from run to run and would make traces differ.
    if (off == reg::intq_base.offset && is_card(v))
      trace("command", {{"reg", off}, {"value", fmt::format("card+{:#x}", card_offset(v))}});
    else if (off == reg::pt_base.offset || off == reg::intq_base.offset || off == reg::mirror_host.offset)
      trace("command", {{"reg", off}, {"value", host_.memory().describe(v)}});
    else
      trace("command", {{"reg", off}, {"value", v}});
  }
  if (off == reg::run_dma.offset) {
    dma_->fetch(v32, true);
  } else if (off == reg::set_event.offset) {
    Sim::get().calendar().at_member<&Elan3::set_event_command>(add_saturating(now(), cycles(p_.command_cycles)), this,
                                                               v32);
  } else if (off == reg::prime_event.offset) {
    Sim::get().calendar().at_member<&Elan3::prime_event_command>(add_saturating(now(), cycles(p_.command_cycles)), this,
                                                                 v);
  } else if (off == reg::event_irq.offset) {
    Sim::get().calendar().at_member<&Elan3::event_irq_command>(add_saturating(now(), cycles(p_.command_cycles)), this,
                                                               v);
  } else if (off == reg::control.offset) {
    control_ = v32;
  } else if (off == reg::pt_base.offset) {
    pt_base_ = v;
    mmu_->set_table(pt_base_, pt_entries_);
  } else if (off == reg::pt_entries.offset) {
    pt_entries_ = v32;
    mmu_->set_table(pt_base_, pt_entries_);
  } else if (off == reg::tlb_flush.offset) {
    mmu_->flush(v32);
  } else if (off == reg::intq_base.offset) {
    intq_base_ = v;
  } else if (off == reg::intq_entries.offset) {
    intq_entries_ = v32;
    intq_producer_ = intq_consumer_ = 0;
    irq_armed_ = true;
  } else if (off == reg::intq_consumer.offset) {
    intq_consumer_ = v32;
    irq_armed_ = true;
    raise_if_pending();
  } else if (off == reg::irq_vector.offset) {
    irq_vector_ = static_cast<std::int32_t>(v32);
  } else if (off == reg::mirror_host.offset) {
    mirror_host_ = v;
  } else if (off == reg::mirror_base.offset) {
    mirror_base_ = v32;
  } else if (off == reg::mirror_bytes.offset) {
    mirror_bytes_ = v32;
  }
}

void Elan3::set_event_command(std::uint64_t ev) { events_->set(static_cast<E3Addr>(ev), perm::kLocalWrite); }

// value: the event's E3_Addr, the count in the high word.
void Elan3::prime_event_command(std::uint64_t value) {
  events_->prime(static_cast<E3Addr>(value), static_cast<std::int32_t>(value >> 32));
}

// value: the event's E3_Addr, the flag and cookie in the high word.
void Elan3::event_irq_command(std::uint64_t value) {
  const auto hi = static_cast<std::uint32_t>(value >> 32);
  events_->interrupt(static_cast<E3Addr>(value), (hi & reg::kEventIrqOn) != 0, hi & event::kCookieMask);
}

// ---- interrupts ------------------------------------------------------------------

void Elan3::post_interrupt(intq::Cause cause, std::uint8_t detail, std::uint32_t node, std::uint32_t cookie,
                           std::uint32_t data) {
  trace("interrupt", {{"cause", intq::cause_name(static_cast<std::uint32_t>(cause))},
                      {"detail", static_cast<unsigned>(detail)},
                      {"node", node},
                      {"cookie", cookie},
                      {"data", data}});
  if (intq_entries_ == 0 || intq_base_ == 0) {
    // No driver has installed the queue yet (a link coming up before the
    // driver loads): latched in int_status, which the driver reads at load.
    int_status_ |= reg::kStatusUnconfigured;
    trace("interrupt_unconfigured", {{"cause", intq::cause_name(static_cast<std::uint32_t>(cause))}});
    return;
  }
  if (intq_producer_ - intq_consumer_ >= intq_entries_) {
    int_status_ |= reg::kStatusIntqOverflow;
    ++stats_.intq_overflows;
    Sim::get().error(
        obj_, fmt::format("interrupt queue overflow: {} lost", intq::cause_name(static_cast<std::uint32_t>(cause))));
    return;
  }
  std::uint8_t e[intq::kSize] = {};
  put(e, intq::seq, intq_producer_ + 1);
  put(e, intq::cause, static_cast<std::uint8_t>(cause));
  put(e, intq::detail, detail);
  put(e, intq::node, node);
  put(e, intq::cookie, cookie);
  put(e, intq::data, data);
  const std::uint64_t at = intq_base_ + static_cast<std::uint64_t>(intq_producer_ % intq_entries_) * intq::kSize;
  ++intq_producer_;
  bus_write(at, e, intq::kSize, {member_fn<&Elan3::raise_if_pending>(), this});
}
TrapResult Elan3::trap_dma(const std::uint8_t* desc, std::uint8_t detail, std::uint32_t node, std::uint32_t cookie,
                           E3Addr addr) {
  if (intq_entries_ == 0 || intq_base_ == 0) return TrapResult::NoTrapArea;
  if (intq_producer_ - intq_consumer_ >= intq_entries_) return TrapResult::QueueFull;
  // The descriptor goes to the trap slot of the interrupt entry posted next;
  // both writes are posted in this order, so the driver that sees the entry
  // sees the descriptor.
  const std::uint64_t at = intq_base_ + static_cast<std::uint64_t>(intq_entries_) * intq::kSize +
                           static_cast<std::uint64_t>(intq_producer_ % intq_entries_) * dma::kSize;
  bus_write(at, desc, dma::kSize);
  post_interrupt(intq::Cause::DmaTrap, detail, node, cookie, addr);
  return TrapResult::Trapped;
}

void Elan3::raise_if_pending() {
  if (!irq_armed_ || irq_vector_ < 0 || intq_producer_ == intq_consumer_) return;
  irq_armed_ = false;
  ++stats_.interrupts;
  host_.irq().raise(irq_vector_);
}

// ---- network ------------------------------------------------------------------------

void Elan3::transmit(fabric::Packet* p) {
  if (p->meta.dlid == node_id_ && p->meta.dlid_hi == 0) {
    // Loopback: the packet turns round inside the Elan, after the time its
    // bytes would take through the link interface.
    Sim::get().calendar().at_member<&Elan3::loop_in>(
        add_saturating(now(), cycles(static_cast<std::uint32_t>((p->bytes.size() + 7) / 8))), this,
        reinterpret_cast<std::uint64_t>(p));
    return;
  }
  net_port().send(p);
}

void Elan3::transmit_at(Tick t, fabric::Packet* p) {
  if (p->meta.dlid != node_id_ || p->meta.dlid_hi != 0) {
    // The port holds it until t (its ready time): no event of our own.
    p->ready_at = t;
    net_port().send(p);
    return;
  }
  Sim::get().calendar().at_member<&Elan3::loop_back>(t, this, reinterpret_cast<std::uint64_t>(p));
}

void Elan3::loop_back(std::uint64_t packet) { transmit(reinterpret_cast<fabric::Packet*>(packet)); }

void Elan3::loop_in(std::uint64_t packet) { rx_->packet(nullptr, reinterpret_cast<fabric::Packet*>(packet)); }

void Elan3::receive(fabric::Port& in, fabric::Packet* p) { rx_->packet(&in, p); }

void Elan3::take_reply(fabric::Port&, fabric::Packet* reply) { rx_->reply(reply, reply->tail_at); }

void Elan3::link_state_changed(fabric::Port&, bool up) {
  trace(up ? "link_up" : "link_down", {});
  post_interrupt(intq::Cause::LinkState, up ? 1 : 0, node_id_, 0, 0);
}

}  // namespace nicsim::elan3
