// The host bus: one FIFO resource shared by MMIO and DMA (timing in bus.h).
#include "host/bus.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "core/sim.h"
#include "trace/trace.h"

namespace nicsim::host {

const BusProfile* find_bus_profile(std::string_view name) {
  for (const BusProfile& p : kBusProfiles)
    if (name == p.name) return &p;
  return nullptr;
}

namespace {

// The profile's text for a field unless the scenario set it; parsed with the
// same parsers as overrides so both mean the same thing.
template <class T>
T profile_value(const ParamSet& params, std::string_view field, const char* profile_text,
                std::optional<T> (*parse)(std::string_view, std::string*), T (ParamSet::*get)(std::string_view) const) {
  if (params.is_set(field)) return (params.*get)(field);
  std::string error;
  std::optional<T> v = parse(profile_text, &error);
  if (!v) throw std::logic_error(fmt::format("bus profile value {}='{}': {}", field, profile_text, error));
  return *v;
}

}  // namespace

HostBus::HostBus(sc_core::sc_module_name name, Host& host, const ParamSet& params)
    : sc_core::sc_module(name), host_(host), memory_(&host.memory()), node_id_(host.node_id()) {
  const std::string& profile_name = params.text("profile");
  const BusProfile* p = find_bus_profile(profile_name);
  // The parameter's choices list the profiles, so this is a table mismatch.
  if (!p) throw std::logic_error("unknown bus profile " + profile_name);
  std::uint64_t width_bits = profile_value<std::uint64_t>(params, "width", p->width, &parse_count, &ParamSet::count);
  if (width_bits % 8 != 0) {
    Sim::get().error(this->name(), fmt::format("bus width {} bits is not a whole number of bytes; "
                                               "using {} bits",
                                               width_bits, (width_bits + 7) / 8 * 8));
  }
  width_bytes_ = std::max<std::uint64_t>(1, (width_bits + 7) / 8);
  clock_hz_ = profile_value<std::uint64_t>(params, "clock", p->clock, &parse_frequency, &ParamSet::frequency);
  double efficiency = profile_value<double>(params, "efficiency", p->efficiency, &parse_ratio, &ParamSet::ratio);
  efficiency_ppm_ = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(efficiency * 1e6)));
  overhead_cycles_ = profile_value<std::uint64_t>(params, "transaction_overhead", p->transaction_overhead, &parse_count,
                                                  &ParamSet::count);
  read_latency_ = profile_value<Tick>(params, "read_latency", p->read_latency, &parse_time, &ParamSet::time);
  write_latency_ = profile_value<Tick>(params, "write_latency", p->write_latency, &parse_time, &ParamSet::time);
  mmio_write_latency_ =
      profile_value<Tick>(params, "mmio_write_latency", p->mmio_write_latency, &parse_time, &ParamSet::time);
  mmio_read_latency_ =
      profile_value<Tick>(params, "mmio_read_latency", p->mmio_read_latency, &parse_time, &ParamSet::time);
  max_read_request_ =
      profile_value<std::uint64_t>(params, "max_read_request", p->max_read_request, &parse_size, &ParamSet::size);
  probe_done_ = std::make_unique<WaitQueue>(host);
  host.bus_ = this;
}

HostBus::~HostBus() {
  bindings_.clear();  // drivers first: they may still use the host through this bus
  if (host_.bus_ == this) host_.bus_ = nullptr;
}

Tick HostBus::read_occupancy(std::size_t bytes) const {
  if (bytes == read_memo_.bytes) return read_memo_.occupancy;
  Tick occ;
  if (bytes <= max_read_request_) {
    occ = occupancy(bytes);
  } else {
    const std::size_t full = bytes / max_read_request_, rest = bytes % max_read_request_;
    occ = full * occupancy(max_read_request_) + (rest ? occupancy(rest) : 0);
  }
  read_memo_ = {bytes, occ};
  return occ;
}

Tick HostBus::occupancy(std::size_t bytes) const {
  if (bytes == memo_.bytes) return memo_.occupancy;
  const Tick occ = compute_occupancy(bytes);
  memo_ = {bytes, occ};
  return occ;
}

Tick HostBus::compute_occupancy(std::size_t bytes) const {
  std::uint64_t cycles = overhead_cycles_ + (bytes + width_bytes_ - 1) / width_bytes_;
  using U128 = unsigned __int128;
  auto held = static_cast<std::uint64_t>((U128(cycles) * 1000000u + efficiency_ppm_ - 1) / efficiency_ppm_);
  return cycles_time(held, clock_hz_);
}

Tick HostBus::grant(Tick occ) {
  Tick start = std::max(now(), free_at_);
  free_at_ = start + occ;
  busy_time_ += occ;
  return start;
}

Tick HostBus::quote(bool is_read, std::size_t bytes) const {
  Tick start = std::max(now(), free_at_);
  Tick occ = is_read ? read_occupancy(bytes) : occupancy(bytes);
  return is_read ? start + read_latency_ + occ : start + occ + write_latency_;
}

// Growing the table is kept out of line: new_txn is on every DMA's path.
[[gnu::noinline]] std::uint32_t HostBus::add_txn() {
  txns_.emplace_back();
  return static_cast<std::uint32_t>(txns_.size() - 1);
}

inline std::uint32_t HostBus::new_txn() {
  ++dmas_in_flight_;
  if (free_txn_ == kNoTxn) [[unlikely]]
    return add_txn();
  const std::uint32_t s = free_txn_;
  free_txn_ = txns_[s].next_free;
  return s;
}

// --- DMA -------------------------------------------------------------------

void HostBus::dma(bool is_read, const char* initiator, std::uint64_t host_addr, void* dst, const void* src,
                  std::size_t bytes, DmaDone done) {
  bool ok = memory_->contains(host_addr, bytes);
  // A master abort ends after the address phase: no data cycles, no latency.
  Tick occ = !ok ? occupancy(0) : is_read ? read_occupancy(bytes) : occupancy(bytes);
  Tick start = grant(occ);
  Tick complete = !ok ? start + occ : is_read ? start + read_latency_ + occ : start + occ + write_latency_;
  std::uint32_t s = new_txn();
  Txn& x = txns_[s];
  x.addr = host_addr;
  x.buf = is_read ? dst : const_cast<void*>(src);
  x.bytes = bytes;
  x.initiator = initiator;
  x.done = done;
  x.is_read = is_read;
  x.aborted = !ok;
  Tracer& tr = Sim::get().tracer();
  if (tr.on(node_id_, Component::bus))
    tr.record(now(), node_id_, Component::bus, is_read ? "dma_read" : "dma_write",
              {{"initiator", initiator ? initiator : "?"},
               {"addr", memory_->describe(host_addr)},
               {"bytes", bytes},
               {"start", start},
               {"complete", complete}});
  Sim::get().calendar().at(complete, &HostBus::dma_complete, this, s);
}

void HostBus::dma_complete(void* bus, std::uint64_t slot) {
  auto* self = static_cast<HostBus*>(bus);
  Txn& x = self->txns_[slot];
  // Checked again now: the memory may have been freed while in flight.
  if (!x.aborted && !self->memory_->contains(x.addr, x.bytes)) x.aborted = true;
  DmaDone done = x.done;
  std::uint64_t arg = done.arg;
  if (x.aborted) {
    Sim::get().error(self->name(), fmt::format("master abort: {} DMA {} of {} bytes at host address {} is outside "
                                               "the node's memory",
                                               x.initiator ? x.initiator : "?", x.is_read ? "read" : "write", x.bytes,
                                               self->memory_->describe(x.addr)));
    Tracer& tr = Sim::get().tracer();
    if (tr.on(self->node_id_, Component::bus))
      tr.record(now(), self->node_id_, Component::bus, "master_abort",
                {{"initiator", x.initiator ? x.initiator : "?"},
                 {"addr", self->memory_->describe(x.addr)},
                 {"bytes", x.bytes}});
    arg |= kDmaFailedBit;
  } else if (x.is_read) {
    std::memcpy(x.buf, reinterpret_cast<const void*>(x.addr), x.bytes);
    self->bytes_read_ += x.bytes;
  } else {
    std::memcpy(reinterpret_cast<void*>(x.addr), x.buf, x.bytes);
    self->bytes_written_ += x.bytes;
  }
  // The slot is free before the callback so that the callback may start the
  // next DMA without growing the table.
  x.next_free = self->free_txn_;
  self->free_txn_ = static_cast<std::uint32_t>(slot);
  --self->dmas_in_flight_;
  if (done.fn) done.fn(done.obj, arg);
}

// --- MMIO ------------------------------------------------------------------

bool HostBus::map_device(std::string name, std::uint64_t base, std::uint64_t size, tlm::tlm_fw_transport_if<>& target) {
  for (const Window& w : windows_) {
    if (base < w.base + w.size && w.base < base + size) {
      Sim::get().error(this->name(), fmt::format("MMIO window {} [{:#x}, +{:#x}) overlaps {} [{:#x}, +{:#x})", name,
                                                 base, size, w.name, w.base, w.size));
      return false;
    }
  }
  windows_.push_back(Window{std::move(name), base, size, &target});
  return true;
}

const HostBus::Window* HostBus::find_window(std::uint64_t addr, std::size_t bytes) const {
  for (const Window& w : windows_)
    if (addr >= w.base && addr - w.base < w.size && bytes <= w.size - (addr - w.base)) return &w;
  return nullptr;
}

bool HostBus::on_thread(const char* what, std::uint64_t addr) const {
  if (sc_core::sc_get_status() == sc_core::SC_RUNNING &&
      sc_core::sc_get_current_process_handle().proc_kind() == sc_core::SC_THREAD_PROC_ && !Calendar::dispatching())
    return true;
  Sim::get().error(name(), fmt::format("{} at {:#x} outside a thread (the caller must wait for the bus)", what, addr));
  return false;
}

bool HostBus::mmio_write(std::uint64_t addr, const void* data, std::size_t bytes) {
  if (!on_thread("mmio_write", addr)) return false;
  const Window* w = find_window(addr, bytes);
  if (!w) {
    Sim::get().error(name(), fmt::format("mmio_write of {} bytes to unmapped address {:#x}", bytes, addr));
    return false;
  }
  Tick occ = occupancy(bytes);
  Tick start = grant(occ);
  Tick arrive = start + occ + mmio_write_latency_;
  std::uint32_t s;
  if (free_posts_.empty()) {
    s = static_cast<std::uint32_t>(posts_.size());
    posts_.emplace_back();
  } else {
    s = free_posts_.back();
    free_posts_.pop_back();
  }
  Post& x = posts_[s];
  x.window = w;
  x.offset = addr - w->base;
  auto* p = static_cast<const unsigned char*>(data);
  x.data.assign(p, p + bytes);
  Tracer& tr = Sim::get().tracer();
  if (tr.on(node_id_, Component::bus))
    tr.record(now(), node_id_, Component::bus, "mmio_write",
              {{"device", w->name}, {"offset", x.offset}, {"bytes", bytes}, {"start", start}, {"arrive", arrive}});
  Sim::get().calendar().at(arrive, &HostBus::mmio_arrive, this, s);
  BlockScope scope(host_, "mmio_write");
  Sim::get().calendar().thread_wait_until(start + occ);
  return true;
}

void HostBus::mmio_arrive(void* bus, std::uint64_t slot) {
  auto* self = static_cast<HostBus*>(bus);
  Post& x = self->posts_[slot];
  tlm::tlm_generic_payload gp;
  gp.set_command(tlm::TLM_WRITE_COMMAND);
  gp.set_address(x.offset);
  gp.set_data_ptr(x.data.data());
  gp.set_data_length(static_cast<unsigned>(x.data.size()));
  gp.set_streaming_width(static_cast<unsigned>(x.data.size()));
  gp.set_byte_enable_ptr(nullptr);
  gp.set_dmi_allowed(false);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  const Window* w = x.window;
  std::uint64_t offset = x.offset;
  // b_transport may post another write (growing posts_), so x is not used
  // after it, and the slot is freed after it (its data is the payload's).
  w->target->b_transport(gp, delay);
  self->free_posts_.push_back(static_cast<std::uint32_t>(slot));
  if (gp.is_response_error())
    Sim::get().error(self->name(), fmt::format("mmio_write to {} offset {:#x} failed: {}", w->name, offset,
                                               gp.get_response_string()));
}

bool HostBus::mmio_read(std::uint64_t addr, void* data, std::size_t bytes) {
  if (!on_thread("mmio_read", addr)) return false;
  const Window* w = find_window(addr, bytes);
  if (!w) {
    Sim::get().error(name(), fmt::format("mmio_read of {} bytes from unmapped address {:#x}", bytes, addr));
    return false;
  }
  Tick occ = occupancy(bytes);
  Tick start = grant(occ);
  Tick arrive = start + occ + std::min(mmio_write_latency_, mmio_read_latency_);
  Tick back = start + occ + mmio_read_latency_;
  std::uint64_t offset = addr - w->base;
  Tracer& tr = Sim::get().tracer();
  if (tr.on(node_id_, Component::bus))
    tr.record(now(), node_id_, Component::bus, "mmio_read",
              {{"device", w->name},
               {"offset", offset},
               {"bytes", bytes},
               {"start", start},
               {"arrive", arrive},
               {"return", back}});
  BlockScope scope(host_, "mmio_read");
  Sim::get().calendar().thread_wait_until(arrive);
  tlm::tlm_generic_payload gp;
  gp.set_command(tlm::TLM_READ_COMMAND);
  gp.set_address(offset);
  gp.set_data_ptr(static_cast<unsigned char*>(data));
  gp.set_data_length(static_cast<unsigned>(bytes));
  gp.set_streaming_width(static_cast<unsigned>(bytes));
  gp.set_byte_enable_ptr(nullptr);
  gp.set_dmi_allowed(false);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  w->target->b_transport(gp, delay);
  Tick n = now();  // a well-behaved target did not wait, but do not underflow if it did
  Sim::get().calendar().thread_wait_until(std::max(back, n) + delay.value());
  if (gp.is_response_error()) {
    Sim::get().error(
        name(), fmt::format("mmio_read from {} offset {:#x} failed: {}", w->name, offset, gp.get_response_string()));
    return false;
  }
  return true;
}

}  // namespace nicsim::host
