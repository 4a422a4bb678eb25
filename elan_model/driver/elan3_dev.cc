// The Elan3 device driver: loading, Elan address space and page tables,
// driver memory pools, events, DMA issue, input queues and the interrupt
// handler. Only the host bus (MMIO) and node memory reach the Elan: the
// driver is bound to the Elan's PCI function when the node probes its bus,
// and knows no more of it than that function's record.
#include "elan_model/driver/elan3_dev.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/sim.h"
#include "host/bus.h"
#include "host/host.h"
#include "host/pci.h"

namespace nicsim::elan3 {

namespace {

// Elan address space the driver manages: 16384 pages (128 MiB) of E3_Addr
// from page 1; the flat page table is 128 KiB of node memory.
constexpr std::uint32_t kPtEntries = 16384;
constexpr std::uint32_t kIntqEntries = 1024;
constexpr std::uint32_t kDescSlots = 256;
constexpr std::uint32_t kPoolPages = 16;
// SDRAM the driver uses, all of it in the mirrored window (elan3_regs.h):
// 2 MiB from offset 0, handed out in pools of at least 4 pages.
constexpr std::uint32_t kMirrorBytes = 2u << 20;
constexpr std::uint32_t kCardPoolPages = 4;
constexpr std::uint32_t kCardPools = 1u << 16;  // pools_ key bit of SDRAM pools
constexpr Tick kSlotPoll = 1 * kUs;
constexpr const char* kDriverName = "elan3";

const bool registered = host::DriverRegistry::instance().add(
    host::Driver{kDriverName,
                 {{static_cast<std::uint16_t>(reg::kVendorQuadrics), static_cast<std::uint16_t>(reg::kDeviceElan3)}},
                 [](const host::DriverContext& c) -> std::unique_ptr<host::BoundDriver> {
                   return std::make_unique<Elan3Dev>(c.host, c.bus, c.function);
                 }});

// Whether `p` is one of the slots the driver set up for `q`. The queue's
// descriptor lives where other nodes' packets may write (the Elan moves
// q_bptr for their queued writes, so it is RemoteWrite), so its pointers
// are used only when they name one of those slots.
bool is_slot(const InputQueue& q, E3Addr p) {
  if (!q.slots || p < q.slots.elan) return false;
  const E3Addr off = p - q.slots.elan;
  return off % q.slot_size == 0 && off / q.slot_size < q.nslots;
}

}  // namespace

const char* dev_status_name(DevStatus s) {
  switch (s) {
    case DevStatus::Ok:
      return "Ok";
    case DevStatus::NoResource:
      return "NoResource";
    case DevStatus::NoMapping:
      return "NoMapping";
    case DevStatus::BadArgument:
      return "BadArgument";
  }
  return "?";
}

// ---- attach ----------------------------------------------------------------------

Elan3Dev* Elan3Dev::current() {
  host::Host* h = host::Host::current_host();
  auto* dev = h ? static_cast<Elan3Dev*>(host::find_bound_driver(*h, kDriverName)) : nullptr;
  return dev && dev->load_ == Load::Ready ? dev : nullptr;
}

Elan3Dev* Elan3Dev::attach() {
  host::Host* h = host::Host::current_host();
  if (!h) return nullptr;
  auto* dev = static_cast<Elan3Dev*>(host::bound_driver(*h, kDriverName));
  if (!dev) return nullptr;
  if (dev->load_ == Load::NotYet && !h->in_interrupt()) {
    dev->load_ = Load::Loading;
    dev->load_ = dev->init() ? Load::Ready : Load::Failed;
  }
  while (dev->load_ == Load::Loading && !h->in_interrupt()) h->sleep(kSlotPoll);
  return current();
}

Elan3Dev::Elan3Dev(host::Host& host, host::HostBus& bus, const host::pci::Function& function)
    : host_(host),
      bus_(bus),
      port_(function.bars[0].base),
      sdram_bar_(function.bars[1].base),
      irq_line_(function.irq_line),
      function_name_(function.name) {
  space_waiters_ = std::make_unique<host::WaitQueue>(host);
  desc_waiters_ = std::make_unique<host::WaitQueue>(host);
  event_waiters_ = std::make_unique<host::WaitQueue>(host);
}

Elan3Dev::~Elan3Dev() = default;

void Elan3Dev::cpu(const char* cls, std::uint64_t bytes) { host_.work(cls, bytes); }

void Elan3Dev::mmio_write32(std::uint64_t off, std::uint32_t v) { bus_.mmio_write(port_ + off, &v, 4); }
void Elan3Dev::mmio_write64(std::uint64_t off, std::uint64_t v) { bus_.mmio_write(port_ + off, &v, 8); }
std::uint32_t Elan3Dev::mmio_read32(std::uint64_t off) {
  std::uint32_t v = 0;
  bus_.mmio_read(port_ + off, &v, 4);
  return v;
}

bool Elan3Dev::init() {
  auto fail = [&](const std::string& why) {
    Sim::get().error(host_.name(), "elan3 driver: " + why);
    return false;
  };
  cpu("elan3_attach");
  // Bound by the ids in configuration space, so the chip is an Elan3; the
  // vendor register tells that BAR 0 really is its command port.
  if (!port_) return fail("BAR 0 (the command port) is not assigned");
  if (irq_line_ == host::pci::kNoLine) return fail("the Elan's interrupt pin is not connected");
  const std::uint32_t vendor = mmio_read32(reg::id_vendor.offset);
  if (vendor != reg::kVendorQuadrics)
    return fail(fmt::format("BAR 0 at {:#x} is no Elan3 command port (vendor register {:#x})", port_, vendor));
  node_id_ = mmio_read32(reg::node_id.offset);
  num_nodes_ = mmio_read32(reg::machine_size.offset);
  max_payload_ = mmio_read32(reg::max_payload.offset);
  link_up_ = mmio_read32(reg::link_state.offset) & 1;
  mmio_read32(reg::int_status.offset);  // clears causes latched before we loaded (link_up_ covers them)

  pt_entries_ = kPtEntries;
  page_table_ = static_cast<std::uint64_t*>(host_.memory().alloc(pt_entries_ * 8ull, kPageSize));
  if (!page_table_) return fail("no node memory for the page table");
  std::memset(page_table_, 0, pt_entries_ * 8ull);
  if (!init_card()) return false;
  const ParamSet& hp = host_.params();
  fail_count_ = static_cast<std::uint32_t>(hp.count("elan3.dma_fail_count"));
  retry_first_ = hp.time("elan3.dma_retry_first");
  retry_max_ = std::max(retry_first_, hp.time("elan3.dma_retry_max"));
  retry_timer_ = std::make_unique<host::Timer>(host_, "elan3.dma_retry", [this] { run_retries(); });
  free_pages_[1] = pt_entries_ - 1;  // page 0 is never mapped: E3_Addr 0 means "none"
  mmio_write32(reg::pt_entries.offset, pt_entries_);
  mmio_write64(reg::pt_base.offset, reinterpret_cast<std::uint64_t>(page_table_));
  if (!host_.irq().request(irq_line_, function_name_, [this] { interrupt(); }))
    return fail(fmt::format("cannot take interrupt line {}", irq_line_));
  irq_vector_ = irq_line_;
  intq_entries_ = kIntqEntries;
  // The DMA trap area follows the interrupt queue (elan3_regs.h intq::).
  const ElanMem intq = alloc_card(intq_entries_ * (intq::kSize + dma::kSize), 64, 0, false);
  if (!intq) return fail("no SDRAM for the interrupt queue");
  intq_ = static_cast<std::uint8_t*>(intq.host);
  trap_area_ = intq_ + intq_entries_ * intq::kSize;
  mmio_write64(reg::intq_base.offset, kCardAddr | static_cast<std::uint64_t>(intq_ - mirror_));
  mmio_write32(reg::intq_entries.offset, intq_entries_);
  mmio_write32(reg::irq_vector.offset, static_cast<std::uint32_t>(irq_vector_));
  desc_slots_ = kDescSlots;
  desc_ring_ = alloc_card(desc_slots_ * dma::kSize, 64, 0, false);
  if (!desc_ring_) return fail("no Elan memory for the DMA descriptor ring");
  mmio_write32(reg::control.offset, reg::kControlEnable);
  return true;
}

// The card's SDRAM: BAR 1, and the window mirrored into node memory.
bool Elan3Dev::init_card() {
  if (!sdram_bar_) {
    Sim::get().error(host_.name(), "elan3 driver: BAR 1 (the SDRAM window) is not assigned");
    return false;
  }
  mirror_bytes_ = std::min(kMirrorBytes, mmio_read32(reg::sdram_bytes.offset)) & ~(kPageSize - 1);
  mirror_ = static_cast<std::uint8_t*>(host_.memory().alloc(mirror_bytes_, kPageSize));
  if (!mirror_ || mirror_bytes_ == 0) {
    Sim::get().error(host_.name(), "elan3 driver: no node memory for the copy of the SDRAM window");
    return false;
  }
  std::memset(mirror_, 0, mirror_bytes_);
  mmio_write64(reg::mirror_host.offset, reinterpret_cast<std::uint64_t>(mirror_));
  mmio_write32(reg::mirror_base.offset, 0);
  mmio_write32(reg::mirror_bytes.offset, mirror_bytes_);
  return true;
}

bool Elan3Dev::alloc_card_pages(std::uint32_t npages, std::uint32_t& first) {
  if (static_cast<std::uint64_t>(card_pages_used_ + npages) * kPageSize > mirror_bytes_) return false;
  first = card_pages_used_;
  card_pages_used_ += npages;
  return true;
}

DevStatus Elan3Dev::map_card(std::uint32_t npages, std::uint32_t perm, std::uint32_t attr, E3Addr want, ElanRange* out,
                             ElanMem* mem) {
  if (!out || !mem || npages == 0) return DevStatus::BadArgument;
  std::uint32_t first_card = 0;
  if (!alloc_card_pages(npages, first_card)) return DevStatus::NoResource;
  DevStatus st = reserve(npages, perm, attr, want, false, out);
  if (st != DevStatus::Ok) return st;
  cpu("elan3_map");
  const std::uint32_t first = out->base >> kPageShift;
  for (std::uint32_t i = 0; i < npages; ++i) {
    cpu("elan3_pte");
    page_table_[first + i] = make_pte(kCardAddr | (static_cast<std::uint64_t>(first_card + i) * kPageSize), perm);
  }
  stats_.pages_loaded += npages;
  *mem = ElanMem{mirror_ + static_cast<std::size_t>(first_card) * kPageSize, out->base, npages * kPageSize,
                 perm | perm::kLocalRead | perm::kLocalWrite, true};
  return DevStatus::Ok;
}

void Elan3Dev::store(const ElanMem& m, std::uint32_t off, const void* data, std::uint32_t len) {
  auto* at = static_cast<std::uint8_t*>(m.host) + off;
  if (at != data) std::memcpy(at, data, len);
  if (m.card) bus_.mmio_write(sdram_bar_ + static_cast<std::uint64_t>(at - mirror_), data, len);
}

// ---- address space ------------------------------------------------------------------

bool Elan3Dev::alloc_pages(std::uint32_t npages, E3Addr want, std::uint32_t& first) {
  if (want) {
    const std::uint32_t page = want >> kPageShift;
    auto it = free_pages_.upper_bound(page);
    if (it == free_pages_.begin()) return false;
    --it;
    if (it->first + it->second < page + static_cast<std::uint64_t>(npages)) return false;
    const std::uint32_t start = it->first, count = it->second;
    free_pages_.erase(it);
    if (page > start) free_pages_[start] = page - start;
    if (start + count > page + npages) free_pages_[page + npages] = start + count - page - npages;
    first = page;
    return true;
  }
  for (auto it = free_pages_.begin(); it != free_pages_.end(); ++it) {
    if (it->second < npages) continue;
    first = it->first;
    const std::uint32_t rest = it->second - npages;
    free_pages_.erase(it);
    if (rest) free_pages_[first + npages] = rest;
    return true;
  }
  return false;
}

bool Elan3Dev::block_for_space(bool wait) {
  if (!wait || host_.in_interrupt()) return false;
  return space_waiters_->wait();
}

DevStatus Elan3Dev::reserve(std::uint32_t npages, std::uint32_t perm, std::uint32_t attr, E3Addr want, bool wait,
                            ElanRange* out) {
  cpu("elan3_reserve");
  if (!out || npages == 0 || npages >= pt_entries_ || (want % kPageSize) != 0 || (perm & ~perm::kAll))
    return DevStatus::BadArgument;
  std::uint32_t first = 0;
  while (!alloc_pages(npages, want, first)) {
    if (!block_for_space(wait)) return DevStatus::NoResource;
  }
  *out = ElanRange{first << kPageShift, npages, perm, attr};
  ranges_[out->base] = *out;
  return DevStatus::Ok;
}

DevStatus Elan3Dev::release(const ElanRange& r) {
  auto it = ranges_.find(r.base);
  if (it == ranges_.end() || it->second.npages != r.npages) {
    Sim::get().error(host_.name(), fmt::format("elan3 driver: release of E3_Addr range {:#x} ({} pages) that is "
                                               "not a live reservation",
                                               r.base, r.npages));
    return DevStatus::BadArgument;
  }
  unload(r, 0, r.npages);
  ranges_.erase(it);
  const std::uint32_t first = r.base >> kPageShift;
  auto [f, _] = free_pages_.emplace(first, r.npages);
  auto next = std::next(f);
  if (next != free_pages_.end() && f->first + f->second == next->first) {
    f->second += next->second;
    free_pages_.erase(next);
  }
  if (f != free_pages_.begin()) {
    auto prev = std::prev(f);
    if (prev->first + prev->second == f->first) {
      prev->second += f->second;
      free_pages_.erase(f);
    }
  }
  space_waiters_->notify_all();
  return DevStatus::Ok;
}

void Elan3Dev::flush_tlb(E3Addr page_addr, std::uint32_t npages) {
  if (npages == 0) return;
  ++stats_.tlb_flushes;
  if (npages > 4) {
    mmio_write32(reg::tlb_flush.offset, reg::kFlushAll);
    return;
  }
  for (std::uint32_t i = 0; i < npages; ++i) mmio_write32(reg::tlb_flush.offset, page_addr + i * kPageSize);
}

DevStatus Elan3Dev::load(const ElanRange& r, std::uint32_t index, const void* host_addr, std::size_t len, E3Addr* out) {
  auto it = ranges_.find(r.base);
  if (it == ranges_.end()) return DevStatus::NoMapping;
  const auto addr = reinterpret_cast<std::uint64_t>(host_addr);
  if (len == 0 || !host_.memory().contains(addr, len)) return DevStatus::NoMapping;
  // Elan pages start at the 64-byte block holding host_addr (elan3_regs.h pte).
  const std::uint64_t first_host_page = addr & pte::kAddrMask;
  const auto npages = static_cast<std::uint32_t>((addr + len - first_host_page + kPageSize - 1) >> kPageShift);
  if (static_cast<std::uint64_t>(index) + npages > it->second.npages) return DevStatus::BadArgument;
  cpu("elan3_map");
  const std::uint32_t first = (r.base >> kPageShift) + index;
  std::uint32_t were_valid = 0;
  for (std::uint32_t i = 0; i < npages; ++i) {
    cpu("elan3_pte");
    if (page_table_[first + i] & pte::kValid) ++were_valid;
    page_table_[first + i] = make_pte(first_host_page + static_cast<std::uint64_t>(i) * kPageSize, it->second.perm);
  }
  stats_.pages_loaded += npages;
  // A page that was valid may sit in the TLB with its old translation.
  if (were_valid) flush_tlb(static_cast<E3Addr>(first) << kPageShift, npages);
  if (out) *out = (static_cast<E3Addr>(first) << kPageShift) + static_cast<E3Addr>(addr - first_host_page);
  return DevStatus::Ok;
}

DevStatus Elan3Dev::unload(const ElanRange& r, std::uint32_t index, std::uint32_t npages) {
  auto it = ranges_.find(r.base);
  if (it == ranges_.end()) return DevStatus::NoMapping;
  if (index >= it->second.npages) return DevStatus::BadArgument;
  npages = std::min(npages, it->second.npages - index);
  cpu("elan3_map");
  const std::uint32_t first = (r.base >> kPageShift) + index;
  std::uint32_t valid = 0;
  for (std::uint32_t i = 0; i < npages; ++i) {
    if (page_table_[first + i] & pte::kValid) {
      ++valid;
      cpu("elan3_pte");
    }
    page_table_[first + i] = 0;
  }
  stats_.pages_unloaded += valid;
  if (valid) flush_tlb(static_cast<E3Addr>(first) << kPageShift, npages);
  return DevStatus::Ok;
}

DevStatus Elan3Dev::map(const void* host_addr, std::size_t len, std::uint32_t perm, std::uint32_t attr, E3Addr want,
                        bool wait, ElanRange* out, E3Addr* addr) {
  const auto a = reinterpret_cast<std::uint64_t>(host_addr);
  if (!out || len == 0) return DevStatus::BadArgument;
  if (!host_.memory().contains(a, len)) return DevStatus::NoMapping;
  const std::uint64_t first_page = a & pte::kAddrMask;
  const auto npages = static_cast<std::uint32_t>((a + len - first_page + kPageSize - 1) >> kPageShift);
  DevStatus s = reserve(npages, perm, attr, want, wait, out);
  if (s != DevStatus::Ok) return s;
  s = load(*out, 0, host_addr, len, addr);
  if (s != DevStatus::Ok) release(*out);
  return s;
}

// ---- driver memory -------------------------------------------------------------------

ElanMem Elan3Dev::alloc_mem(std::uint32_t bytes, std::uint32_t align, std::uint32_t perm, bool wait) {
  cpu("elan3_alloc");
  return alloc_from_pools(bytes, align, perm, false, wait);
}

ElanMem Elan3Dev::alloc_card(std::uint32_t bytes, std::uint32_t align, std::uint32_t perm, bool wait) {
  cpu("elan3_alloc");
  return alloc_from_pools(bytes, align, perm, true, wait);
}

ElanMem Elan3Dev::alloc_from_pools(std::uint32_t bytes, std::uint32_t align, std::uint32_t perm, bool card, bool wait) {
  if (bytes == 0 || align == 0 || (align & (align - 1)) || align > kPageSize) return {};
  perm |= perm::kLocalRead | perm::kLocalWrite;
  const std::uint32_t size = (bytes + 7) & ~7u;
  auto& pools = pools_[perm | (card ? kCardPools : 0)];
  auto carve = [&](Pool& p) -> ElanMem {
    for (auto it = p.free.begin(); it != p.free.end(); ++it) {
      const std::uint32_t start = (it->first + align - 1) & ~(align - 1);
      if (start + static_cast<std::uint64_t>(size) > it->first + static_cast<std::uint64_t>(it->second)) continue;
      const std::uint32_t off = it->first, len = it->second;
      p.free.erase(it);
      if (start > off) p.free[off] = start - off;
      if (off + len > start + size) p.free[start + size] = off + len - start - size;
      std::memset(p.host + start, 0, size);
      ElanMem m{p.host + start, p.elan + start, size, perm, card};
      // SDRAM never handed out is still zero; memory given back may hold
      // old bytes: zeroed on the card too.
      if (card && start < p.fresh_from) {
        const std::uint32_t used = std::min(size, p.fresh_from - start);
        const std::vector<std::uint8_t> zero(used, 0);
        store(m, 0, zero.data(), used);
      }
      p.fresh_from = std::max(p.fresh_from, start + size);
      return m;
    }
    return {};
  };
  for (auto& p : pools)
    if (ElanMem m = carve(*p)) return m;
  if (card) {
    const std::uint32_t npages = std::max(kCardPoolPages, (size + kPageSize - 1) / kPageSize);
    auto pool = std::make_unique<Pool>();
    ElanMem all;
    if (map_card(npages, perm, 0, 0, &pool->range, &all) != DevStatus::Ok) return {};
    pool->card = true;
    pool->host = static_cast<std::uint8_t*>(all.host);
    pool->elan = all.elan;
    pool->bytes = all.bytes;
    pool->free[0] = pool->bytes;
    pools.push_back(std::move(pool));
    return carve(*pools.back());
  }
  auto pool = std::make_unique<Pool>();
  pool->bytes = std::max<std::uint32_t>(kPoolPages, (size + kPageSize - 1) / kPageSize) * kPageSize;
  pool->host = static_cast<std::uint8_t*>(host_.memory().alloc(pool->bytes, kPageSize));
  if (!pool->host) return {};
  if (map(pool->host, pool->bytes, perm, 0, 0, wait, &pool->range, &pool->elan) != DevStatus::Ok) {
    host_.memory().free(pool->host);
    return {};
  }
  pool->free[0] = pool->bytes;
  pools.push_back(std::move(pool));
  return carve(*pools.back());
}

void Elan3Dev::free_mem(const ElanMem& m) {
  if (!m) return;
  auto& pools = pools_[m.perm | (m.card ? kCardPools : 0)];
  for (auto& p : pools) {
    auto* h = static_cast<std::uint8_t*>(m.host);
    if (h < p->host || h >= p->host + p->bytes) continue;
    const auto off = static_cast<std::uint32_t>(h - p->host);
    auto [it, _] = p->free.emplace(off, m.bytes);
    auto next = std::next(it);
    if (next != p->free.end() && it->first + it->second == next->first) {
      it->second += next->second;
      p->free.erase(next);
    }
    if (it != p->free.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        p->free.erase(it);
      }
    }
    return;
  }
  Sim::get().error(host_.name(), fmt::format("elan3 driver: free_mem of {} bytes at E3_Addr {:#x} not allocated here",
                                             m.bytes, m.elan));
}

// ---- events ------------------------------------------------------------------------------

void Elan3Dev::prime_event(const ElanMem& ev, std::int32_t count, event::Type type, E3Addr source, E3Addr dest,
                           bool irq, std::uint32_t cookie) {
  cpu("elan3_event");
  std::uint8_t b[event::kSize] = {};
  put(b, event::ev_Type, event::make_type(type, irq, cookie));
  put(b, event::ev_Source, source);
  put(b, event::ev_Dest, dest);
  put(b, event::ev_Count, static_cast<std::uint32_t>(count));
  // The store makes the count visible to the CPU at once (its copy) and
  // reaches the card before the command, which makes it stick against a
  // set the Elan has in flight on this event.
  store(ev, 0, b, event::kSize);
  mmio_write64(reg::prime_event.offset, static_cast<std::uint64_t>(ev.elan) |
                                            (static_cast<std::uint64_t>(static_cast<std::uint32_t>(count)) << 32));
}

void Elan3Dev::event_interrupt(const ElanMem& ev, bool irq, std::uint32_t cookie) {
  cpu("elan3_event");
  const std::uint32_t hi = (irq ? reg::kEventIrqOn : 0u) | (cookie & event::kCookieMask);
  mmio_write64(reg::event_irq.offset, static_cast<std::uint64_t>(ev.elan) | (static_cast<std::uint64_t>(hi) << 32));
}

std::int32_t Elan3Dev::event_count(const ElanMem& ev) {
  cpu("elan3_poll");
  return static_cast<std::int32_t>(get(static_cast<const std::uint8_t*>(ev.host), event::ev_Count));
}

void Elan3Dev::set_event(E3Addr ev) {
  cpu("elan3_event");
  mmio_write32(reg::set_event.offset, ev);
}

bool Elan3Dev::wait_event(const ElanMem& ev, Tick timeout) {
  if (!host_.may_block("elan3 wait_event", std::source_location::current())) return false;
  const Tick deadline = timeout ? add_saturating(Calendar::now(), timeout) : kTickMax;
  while (!event_fired(ev)) {
    if (timeout ? !event_waiters_->wait_until(deadline) : !event_waiters_->wait()) return event_fired(ev);
  }
  return true;
}

// ---- DMA ------------------------------------------------------------------------------------

bool Elan3Dev::encode(const DmaRequest& r, std::uint8_t* d, const char* who) {
  auto bad = [&](const char* why) {
    Sim::get().error(host_.name(), fmt::format("elan3 driver: {}: {}", who, why));
    return false;
  };
  const bool bcast = dma::is_broadcast(r.opcode);
  if (r.size > dma::kMaxSize) return bad("dma size above the limit");
  if (r.dest_node >= num_nodes_) return bad("destination node id beyond the network");
  if (bcast &&
      (r.dest_node_last <= r.dest_node || r.dest_node_last >= num_nodes_ || r.direction != dma::Direction::Write))
    return bad("a broadcast is a write to a range of at least two nodes of the network");
  if ((r.opcode == dma::OpCode::Queued || r.opcode == dma::OpCode::QueuedBroadcast) &&
      (r.size == 0 || r.size > max_payload_))
    return bad("a queued DMA must carry 1 to max_packet_payload bytes");
  if (r.direction == dma::Direction::Read && r.opcode != dma::OpCode::Normal) return bad("a read DMA must be Normal");
  if (r.opcode == dma::OpCode::ConditionalBroadcast && r.size != dma::kTestSize)
    return bad("a network conditional carries one 16-byte test");
  if (r.direction == dma::Direction::ReadRequeue) return bad("ReadRequeue is set by the hardware only");
  dma::Type t;
  t.data_type = static_cast<std::uint32_t>(r.data_type);
  t.direction = static_cast<std::uint32_t>(r.direction);
  t.opcode = static_cast<std::uint32_t>(r.opcode);
  t.fail_count = fail_count_;
  t.priority = r.priority ? 1 : 0;
  std::memset(d, 0, dma::kSize);
  put(d, dma::dma_type, t.encode());
  put(d, dma::dma_size, r.size);
  put(d, dma::dma_source, r.source);
  put(d, dma::dma_dest, r.dest);
  put(d, dma::dma_destEvent, r.dest_event);
  put(d, dma::dma_destCookieVProc, dma::cookie_vproc(bcast ? r.dest_node_last : r.dest_cookie, r.dest_node));
  put(d, dma::dma_srcEvent, r.src_event);
  put(d, dma::dma_srcCookieVProc, dma::cookie_vproc(r.src_cookie, node_id_));
  return true;
}

DevStatus Elan3Dev::issue_dma(const DmaRequest& req, E3Addr* desc) {
  cpu("elan3_dma", dma::kSize);
  std::uint8_t d[dma::kSize];
  if (!encode(req, d, "issue_dma")) return DevStatus::BadArgument;
  while (desc_issued_ - desc_fetched_ >= desc_slots_) {
    desc_fetched_ = mmio_read32(reg::dma_fetched.offset);
    if (desc_issued_ - desc_fetched_ < desc_slots_) break;
    if (host_.in_interrupt()) return DevStatus::NoResource;
    host_.sleep(kSlotPoll);
  }
  const E3Addr at = desc_ring_.elan + (desc_issued_ % desc_slots_) * dma::kSize;
  run_descriptor(d);
  if (desc) *desc = at;
  return DevStatus::Ok;
}

// Puts a descriptor into the next ring slot and runs it; false if every
// slot still waits to be fetched.
bool Elan3Dev::run_descriptor(const std::uint8_t* d) {
  if (desc_issued_ - desc_fetched_ >= desc_slots_) {
    desc_fetched_ = mmio_read32(reg::dma_fetched.offset);
    if (desc_issued_ - desc_fetched_ >= desc_slots_) return false;
  }
  // The slot is taken before the store: the PIO write waits for the bus,
  // and an interrupt handler issuing meanwhile must take the next one.
  const std::uint32_t slot = desc_issued_++ % desc_slots_;
  ++stats_.dmas;
  store(desc_ring_, slot * dma::kSize, d, dma::kSize);
  mmio_write32(reg::run_dma.offset, desc_ring_.elan + slot * dma::kSize);
  return true;
}

// ---- DMA retry list -------------------------------------------------------------------------

// A DMA the Elan trapped (a full queue refused it failCount + 1 times):
// onto the retry list, due after its back-off.
void Elan3Dev::trapped(const std::uint8_t* e, std::uint32_t index) {
  ++stats_.dma_traps;
  Retry r;
  r.what = DmaFailure{intq::Cause::DmaTrap, static_cast<std::uint8_t>(get(e, intq::detail)),
                      static_cast<std::uint32_t>(get(e, intq::node)), static_cast<std::uint16_t>(get(e, intq::cookie)),
                      static_cast<E3Addr>(get(e, intq::data))};
  std::memcpy(r.desc.data(), trap_area_ + static_cast<std::size_t>(index % intq_entries_) * dma::kSize, dma::kSize);
  const auto op =
      static_cast<dma::OpCode>(dma::Type::decode(static_cast<std::uint32_t>(get(r.desc.data(), dma::dma_type))).opcode);
  if (op == dma::OpCode::Normal || op == dma::OpCode::Queued)
    r.what.dest_cookie = static_cast<std::uint16_t>(
        dma::cookie_of(static_cast<std::uint32_t>(get(r.desc.data(), dma::dma_destCookieVProc))));
  if (retry_filter_ && !retry_filter_(r.what)) {
    ++stats_.dma_retries_dropped;
    return;
  }
  // The same descriptor trapping again soon after its retry backs off
  // further; one that has been quiet for the longest back-off starts over.
  const Tick now = Calendar::now();
  for (auto it = backoff_.begin(); it != backoff_.end();)
    it = now - it->second.last > 2 * retry_max_ ? backoff_.erase(it) : std::next(it);
  Backoff& b = backoff_[r.desc];
  b.delay = b.delay == 0 ? retry_first_ : std::min(retry_max_, 2 * b.delay);
  b.last = now;
  r.due = now + b.delay;
  const bool first = retries_.empty() || r.due < retries_.front().due;
  retries_.push_back(r);
  std::stable_sort(retries_.begin(), retries_.end(), [](const Retry& a, const Retry& b) { return a.due < b.due; });
  if (first) retry_timer_->start(retries_.front().due - now);
}

void Elan3Dev::run_retries() {
  const Tick now = Calendar::now();
  while (!retries_.empty() && retries_.front().due <= now) {
    Retry& r = retries_.front();
    if (retry_filter_ && !retry_filter_(r.what)) {
      ++stats_.dma_retries_dropped;
      retries_.pop_front();
      continue;
    }
    // The descriptor goes out with its failCount restored.
    dma::Type t = dma::Type::decode(static_cast<std::uint32_t>(get(r.desc.data(), dma::dma_type)));
    t.fail_count = fail_count_;
    std::uint8_t d[dma::kSize];
    std::memcpy(d, r.desc.data(), dma::kSize);
    put(d, dma::dma_type, t.encode());
    cpu("elan3_dma", dma::kSize);
    if (!run_descriptor(d)) {
      // Every descriptor slot is waiting to be fetched: try again shortly.
      retry_timer_->start(kSlotPoll);
      return;
    }
    ++stats_.dma_retries;
    retries_.pop_front();
  }
  if (!retries_.empty()) retry_timer_->start(retries_.front().due - now);
}

DevStatus Elan3Dev::write_descriptor(const ElanMem& where, const DmaRequest& req) {
  cpu("elan3_dma", dma::kSize);
  if (!where || where.bytes < dma::kSize || where.elan % 8) return DevStatus::BadArgument;
  std::uint8_t d[dma::kSize];
  if (!encode(req, d, "write_descriptor")) return DevStatus::BadArgument;
  store(where, 0, d, dma::kSize);
  return DevStatus::Ok;
}

// ---- input queues ------------------------------------------------------------------------------

DevStatus Elan3Dev::init_queue(const ElanMem& desc, std::uint32_t nslots, std::uint32_t slot_size, E3Addr event,
                               InputQueue* out, bool wait) {
  if (!out || !desc || desc.bytes < queue::kSize || desc.elan % 8 || nslots == 1 ||
      (nslots && (slot_size == 0 || slot_size % 8 || slot_size > max_payload_)))
    return DevStatus::BadArgument;
  InputQueue q;
  q.desc = desc;
  q.slot_size = slot_size;
  q.nslots = nslots;
  if (nslots) {
    q.slots = alloc_card(nslots * slot_size, 64, perm::kRemoteWrite, wait);
    if (!q.slots) return DevStatus::NoResource;
  }
  cpu("elan3_queue", queue::kSize);
  std::uint8_t b[queue::kSize] = {};
  const E3Addr base = nslots ? q.slots.elan : 0;
  put(b, queue::q_state, nslots ? 0 : queue::kStateLocked);
  put(b, queue::q_bptr, base);
  put(b, queue::q_fptr, base);
  put(b, queue::q_size, slot_size);
  put(b, queue::q_base, base);
  put(b, queue::q_top, nslots ? base + (nslots - 1) * slot_size : 0);
  put(b, queue::q_event, event);
  store(desc, 0, b, queue::kSize);
  *out = q;
  return DevStatus::Ok;
}

DevStatus Elan3Dev::alloc_queue(std::uint32_t nslots, std::uint32_t slot_size, E3Addr event, InputQueue* out,
                                bool wait) {
  if (!out || nslots < 2) return DevStatus::BadArgument;
  ElanMem desc = alloc_mem(queue::kSize, 32, perm::kRemoteWrite, wait);
  if (!desc) return DevStatus::NoResource;
  DevStatus s = init_queue(desc, nslots, slot_size, event, out, wait);
  if (s != DevStatus::Ok) {
    free_mem(desc);
    return s;
  }
  out->own_desc = true;
  return s;
}

void Elan3Dev::free_queue(InputQueue& q) {
  if (q.slots) free_mem(q.slots);
  if (q.own_desc) free_mem(q.desc);
  q = InputQueue{};
}

const void* Elan3Dev::queue_peek(const InputQueue& q) {
  cpu("elan3_queue");
  const auto* b = static_cast<const std::uint8_t*>(q.desc.host);
  const auto fptr = static_cast<E3Addr>(get(b, queue::q_fptr));
  const auto bptr = static_cast<E3Addr>(get(b, queue::q_bptr));
  if (!q.slots || fptr == bptr) return nullptr;
  if (!is_slot(q, fptr) || !is_slot(q, bptr)) {
    Sim::get().error(host_.name(),
                     fmt::format("elan3 driver: input queue {:#x}: its pointers (front {:#x}, back {:#x}) "
                                 "are not both among its slots (the descriptor was overwritten): "
                                 "taken as empty",
                                 q.desc.elan, fptr, bptr));
    return nullptr;
  }
  return static_cast<const std::uint8_t*>(q.slots.host) + (fptr - q.slots.elan);
}

void Elan3Dev::queue_consume(const InputQueue& q) {
  cpu("elan3_queue");
  const auto* b = static_cast<const std::uint8_t*>(q.desc.host);
  const auto fptr = static_cast<E3Addr>(get(b, queue::q_fptr));
  const auto bptr = static_cast<E3Addr>(get(b, queue::q_bptr));
  if (!q.slots || fptr == bptr || !is_slot(q, fptr) || !is_slot(q, bptr)) {
    Sim::get().error(host_.name(), "elan3 driver: queue_consume on an empty input queue");
    return;
  }
  const E3Addr next = queue::next_slot(fptr, q.slots.elan, q.slots.elan + (q.nslots - 1) * q.slot_size, q.slot_size);
  store(q.desc, queue::q_fptr.offset, &next, 4);
}

void Elan3Dev::queue_lock(const InputQueue& q, bool locked) {
  cpu("elan3_queue");
  const auto* b = static_cast<const std::uint8_t*>(q.desc.host);
  const auto s = static_cast<std::uint32_t>(get(b, queue::q_state));
  const std::uint32_t v = locked ? s | queue::kStateLocked : s & ~queue::kStateLocked;
  store(q.desc, queue::q_state.offset, &v, 4);
}

// ---- interrupts ------------------------------------------------------------------------------

std::uint32_t Elan3Dev::add_event_handler(std::function<void(std::uint32_t, E3Addr)> fn) {
  for (std::uint32_t tries = 0; tries < event::kCookieMask; ++tries) {
    const std::uint32_t c = next_cookie_;
    next_cookie_ = next_cookie_ >= event::kCookieMask ? 1 : next_cookie_ + 1;
    if (!event_handlers_.count(c)) {
      event_handlers_[c] = std::move(fn);
      return c;
    }
  }
  return 0;
}

void Elan3Dev::remove_event_handler(std::uint32_t cookie) { event_handlers_.erase(cookie); }

int Elan3Dev::add_error_handler(std::function<void(const DmaFailure&)> fn) {
  error_handlers_[next_handler_] = std::move(fn);
  return next_handler_++;
}

int Elan3Dev::add_link_handler(std::function<void(bool)> fn) {
  link_handlers_[next_handler_] = std::move(fn);
  return next_handler_++;
}

void Elan3Dev::remove_handler(int id) {
  error_handlers_.erase(id);
  link_handlers_.erase(id);
}

void Elan3Dev::interrupt() {
  ++stats_.interrupts;
  for (;;) {
    const std::uint8_t* e = intq_ + static_cast<std::size_t>(intq_consumed_ % intq_entries_) * intq::kSize;
    if (get(e, intq::seq) != static_cast<std::uint32_t>(intq_consumed_ + 1)) break;
    cpu("elan3_intr");
    std::uint8_t copy[intq::kSize];
    std::memcpy(copy, e, intq::kSize);
    const std::uint32_t index = intq_consumed_++;
    dispatch(copy, index);
  }
  // Re-arms the line; the Elan raises it again if entries came meanwhile.
  mmio_write32(reg::intq_consumer.offset, intq_consumed_);
}

void Elan3Dev::dispatch(const std::uint8_t* e, std::uint32_t index) {
  const auto cause = static_cast<intq::Cause>(get(e, intq::cause));
  const auto detail = static_cast<std::uint8_t>(get(e, intq::detail));
  const auto cookie = static_cast<std::uint32_t>(get(e, intq::cookie));
  const auto data = static_cast<std::uint32_t>(get(e, intq::data));
  switch (cause) {
    case intq::Cause::Event: {
      ++stats_.event_irqs;
      event_waiters_->notify_all();
      if (cookie == kWaitCookie) return;
      auto it = event_handlers_.find(cookie);
      if (it == event_handlers_.end()) {
        Sim::get().error(host_.name(), fmt::format("elan3 driver: event interrupt with cookie {:#x} (event {:#x}) "
                                                   "that no handler registered",
                                                   cookie, data));
        return;
      }
      auto fn = it->second;
      fn(cookie, data);
      return;
    }
    case intq::Cause::NetworkError:
    case intq::Cause::DmaError: {
      ++(cause == intq::Cause::NetworkError ? stats_.network_errors : stats_.dma_errors);
      DmaFailure f{cause, detail, static_cast<std::uint32_t>(get(e, intq::node)), static_cast<std::uint16_t>(cookie),
                   data};
      event_waiters_->notify_all();
      auto handlers = error_handlers_;
      for (auto& [_, fn] : handlers) fn(f);
      return;
    }
    case intq::Cause::LinkState: {
      link_up_ = detail != 0;
      auto handlers = link_handlers_;
      for (auto& [_, fn] : handlers) fn(link_up_);
      return;
    }
    case intq::Cause::DmaTrap:
      trapped(e, index);
      return;
    case intq::Cause::CommandError:
      Sim::get().error(host_.name(), fmt::format("elan3 driver: the Elan refused a command port access at "
                                                 "offset {:#x}",
                                                 data));
      return;
  }
  Sim::get().error(host_.name(), fmt::format("elan3 driver: interrupt queue entry with unknown cause {}",
                                             static_cast<unsigned>(cause)));
}

}  // namespace nicsim::elan3
