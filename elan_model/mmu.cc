// The Elan3 MMU: E3_Addr -> host address, page by page, through a small
// fully associative TLB; misses read the PTE from the page table in host
// memory over the bus. Permissions are checked on every page; a fault names
// the first address that failed and translates nothing.
#include <fmt/format.h>

#include <algorithm>

#include "core/sim.h"
#include "elan_model/elan3.h"

namespace nicsim::elan3 {

struct Mmu::Walk {
  E3Addr va = 0;
  std::uint32_t len = 0;
  std::uint32_t need = 0;
  std::uint64_t pos = 0;  // bytes translated so far
  Tick cost = 0;          // lookup time accumulated and not yet waited for
  std::uint64_t generation = 0;
  bool refilled = false;  // the next lookup is the refilled page: already paid for
  std::uint64_t pte = 0;  // a miss's PTE, read by DMA
  Translation* out = nullptr;
  Then done;
};

Mmu::Mmu(Elan3& elan)
    : elan_(elan),
      tlb_(elan.params().tlb_entries),
      inspectable_("elan3.mmu", elan.obj() + ".mmu", &Mmu::inspect, this) {}

// The page table's place, the translation counters, then each TLB entry in
// use (page, host or SDRAM address, permissions), most recently used first.
void Mmu::inspect(const void* self, InspectRows& rows) {
  const Mmu& m = *static_cast<const Mmu*>(self);
  const Elan3Stats& st = m.elan_.stats();
  add_row(rows, "page_table",
          fmt::format("{:#x}, {} entries of {} KiB pages", m.pt_base_, m.pt_entries_, kPageSize / 1024));
  add_row(rows, "tlb_entries", std::to_string(m.tlb_.size()));
  add_row(rows, "tlb_hits", std::to_string(st.tlb_hits));
  add_row(rows, "tlb_misses", std::to_string(st.tlb_misses));
  add_row(rows, "translation_faults", std::to_string(st.translation_faults));
  add_row(rows, "permission_faults", std::to_string(st.permission_faults));
  add_row(rows, "walks_under_way", std::to_string(m.walks_.size() - m.free_walks_.size()));
  std::vector<const Entry*> used;
  for (const Entry& e : m.tlb_)
    if (e.used) used.push_back(&e);
  std::sort(used.begin(), used.end(), [](const Entry* a, const Entry* b) { return a->used > b->used; });
  add_row(rows, "tlb_in_use", std::to_string(used.size()));
  for (const Entry* e : used)
    add_row(rows, fmt::format("tlb[{:#x}]", static_cast<std::uint64_t>(e->vpn) << kPageShift),
            fmt::format("-> {} {:#x} {}", is_card(e->pte) ? "sdram" : "host", card_offset(e->pte & pte::kAddrMask),
                        perm::names(static_cast<std::uint32_t>(e->pte >> pte::kPermShift) & perm::kAll)));
}
Mmu::~Mmu() = default;

void Mmu::set_table(std::uint64_t base, std::uint32_t entries) {
  pt_base_ = base;
  pt_entries_ = entries;
  flush(reg::kFlushAll);
}

void Mmu::flush(E3Addr va) {
  ++generation_;
  for (Entry& e : tlb_)
    if (va == reg::kFlushAll || (e.used && e.vpn == (va >> kPageShift))) e = Entry{};
  if (va == reg::kFlushAll)
    may_hold_twice_ = false;
  else if (may_hold_twice_)
    recount_twice();
}

Mmu::Entry* Mmu::remembered(std::uint32_t vpn) {
  Entry& e = tlb_[where_[vpn % kHints]];
  return e.used && e.vpn == vpn ? &e : nullptr;
}

Mmu::Entry* Mmu::first_entry(std::uint32_t vpn) {
  if (!may_hold_twice_)
    if (Entry* e = remembered(vpn)) return e;
  for (std::size_t k = 0; k < tlb_.size(); ++k)
    if (tlb_[k].used && tlb_[k].vpn == vpn) {
      where_[vpn % kHints] = static_cast<std::uint16_t>(k);
      return &tlb_[k];
    }
  return nullptr;
}

Mmu::Entry* Mmu::last_entry(std::uint32_t vpn) {
  if (!may_hold_twice_)
    if (Entry* e = remembered(vpn)) return e;
  for (std::size_t k = tlb_.size(); k-- > 0;)
    if (tlb_[k].used && tlb_[k].vpn == vpn) {
      where_[vpn % kHints] = static_cast<std::uint16_t>(k);
      return &tlb_[k];
    }
  return nullptr;
}

Mmu::Entry* Mmu::lookup(std::uint32_t vpn) {
  Entry* e = first_entry(vpn);
  if (e) e->used = ++stamp_;
  return e;
}

void Mmu::insert(std::uint32_t vpn, std::uint64_t pte) {
  Entry* victim = &tlb_.front();
  for (Entry& e : tlb_) {
    if (!e.used) {
      victim = &e;
      break;
    }
    if (e.used < victim->used) victim = &e;
  }
  // Two walks for one page ran at once: the page is in twice from here.
  bool twice = false;
  for (const Entry& e : tlb_)
    if (&e != victim && e.used && e.vpn == vpn) twice = true;
  victim->vpn = vpn;
  victim->pte = pte;
  victim->used = ++stamp_;
  where_[vpn % kHints] = static_cast<std::uint16_t>(victim - tlb_.data());
  if (twice)
    may_hold_twice_ = true;
  else if (may_hold_twice_)
    recount_twice();  // the victim may have been a page's second entry
}

void Mmu::recount_twice() {
  vpns_.clear();
  for (const Entry& e : tlb_)
    if (e.used) vpns_.push_back(e.vpn);
  std::sort(vpns_.begin(), vpns_.end());
  may_hold_twice_ = std::adjacent_find(vpns_.begin(), vpns_.end()) != vpns_.end();
}

bool Mmu::translate_cached(E3Addr va, std::uint32_t len, std::uint32_t need, Translation& out, Tick& cost) {
  if (static_cast<std::uint64_t>(va) + len > (1ull << 32)) return false;
  Entry* found[8];
  const std::uint32_t first = va >> kPageShift;
  const std::uint32_t pages = len ? ((va + len - 1) >> kPageShift) - first + 1 : 0;
  if (pages > 8) return false;
  for (std::uint32_t i = 0; i < pages; ++i) {
    // The last entry holding the page (a page can be in twice when two
    // walks for it ran at once): searched from the end.
    found[i] = last_entry(first + i);
    if (!found[i]) return false;
  }
  out.fault = Fault::None;
  out.pieces.clear();
  cost = 0;
  std::uint64_t pos = 0;
  const Tick lookup = elan_.cycles(elan_.params().tlb_cycles);
  for (std::uint32_t i = 0; i < pages; ++i) {
    Entry* e = found[i];
    e->used = ++stamp_;
    ++elan_.mutable_stats().tlb_hits;
    cost += lookup;
    const E3Addr a = static_cast<E3Addr>(va + pos);
    const std::uint32_t in_page = kPageSize - (a & (kPageSize - 1));
    const auto chunk = static_cast<std::uint32_t>(std::min<std::uint64_t>(in_page, len - pos));
    const std::uint32_t have = static_cast<std::uint32_t>((e->pte >> pte::kPermShift) & perm::kAll);
    if ((have & need) != need) {
      out.fault = Fault::Permission;
      out.fault_addr = a;
      out.pieces.clear();
      ++elan_.mutable_stats().permission_faults;
      elan_.trace("mmu_fault", {{"fault", fault_name(static_cast<std::uint32_t>(Fault::Permission))},
                                {"addr", static_cast<unsigned>(a)},
                                {"need", perm::names(need)}});
      return true;
    }
    const std::uint64_t host = (e->pte & pte::kAddrMask) + (a & (kPageSize - 1));
    if (!out.pieces.empty() && out.pieces.back().addr + out.pieces.back().len == host)
      out.pieces.back().len += chunk;
    else
      out.pieces.push_back({host, chunk});
    pos += chunk;
  }
  return true;
}

Mmu::Walk* Mmu::new_walk() {
  if (free_walks_.empty()) {
    walks_.push_back(std::make_unique<Walk>());
    return walks_.back().get();
  }
  Walk* w = free_walks_.back();
  free_walks_.pop_back();
  *w = Walk{};
  return w;
}

void Mmu::translate(E3Addr va, std::uint32_t len, std::uint32_t need, Translation& out, Then done) {
  Walk* w = new_walk();
  w->va = va;
  w->len = len;
  w->need = need;
  w->out = &out;
  w->done = done;
  w->generation = generation_;
  out.fault = Fault::None;
  out.fault_addr = 0;
  out.pieces.clear();
  if (static_cast<std::uint64_t>(va) + len > (1ull << 32)) {
    out.fault = Fault::Translation;
    out.fault_addr = va;
    w->pos = len;
  }
  step(w);
}

void Mmu::step(Walk* w) {
  Translation& r = *w->out;
  auto fault = [&](Fault f, E3Addr at) {
    r.fault = f;
    r.fault_addr = at;
    r.pieces.clear();
    w->pos = w->len;
    auto& st = elan_.mutable_stats();
    ++(f == Fault::Permission ? st.permission_faults : st.translation_faults);
    elan_.trace("mmu_fault", {{"fault", fault_name(static_cast<std::uint32_t>(f))},
                              {"addr", static_cast<unsigned>(at)},
                              {"need", perm::names(w->need)}});
  };
  while (w->pos < w->len) {
    const E3Addr a = static_cast<E3Addr>(w->va + w->pos);
    const std::uint32_t vpn = a >> kPageShift;
    const std::uint32_t in_page = kPageSize - (a & (kPageSize - 1));
    const auto chunk = static_cast<std::uint32_t>(std::min<std::uint64_t>(in_page, w->len - w->pos));
    const bool paid = w->refilled;
    w->refilled = false;
    if (!paid) w->cost += elan_.cycles(elan_.params().tlb_cycles);
    Entry* e = lookup(vpn);
    if (!e) {
      ++elan_.mutable_stats().tlb_misses;
      if (vpn == 0 || vpn >= pt_entries_ || pt_base_ == 0) {
        fault(Fault::Translation, a);
        break;
      }
      // The walk: wait out the lookups so far, read the PTE, then refill.
      const Tick start = add_saturating(Elan3::now(), w->cost);
      w->cost = 0;
      Sim::get().calendar().at_member<&Mmu::read_pte>(start, this, reinterpret_cast<std::uint64_t>(w));
      return;
    }
    if (!paid) ++elan_.mutable_stats().tlb_hits;
    const std::uint32_t have = static_cast<std::uint32_t>((e->pte >> pte::kPermShift) & perm::kAll);
    if ((have & w->need) != w->need) {
      fault(Fault::Permission, a);
      break;
    }
    const std::uint64_t host = (e->pte & pte::kAddrMask) + (a & (kPageSize - 1));
    if (!r.pieces.empty() && r.pieces.back().addr + r.pieces.back().len == host)
      r.pieces.back().len += chunk;
    else
      r.pieces.push_back({host, chunk});
    w->pos += chunk;
  }
  Sim::get().calendar().at_member<&Mmu::finish>(add_saturating(Elan3::now(), w->cost), this,
                                                reinterpret_cast<std::uint64_t>(w));
}

void Mmu::finish(std::uint64_t walk) {
  auto* w = reinterpret_cast<Walk*>(walk);
  const Then done = w->done;
  free_walks_.push_back(w);
  done.fn(done.obj, done.arg);
}

// The walk of a miss: the PTE of the page the walk is on, from the page table
// in host memory.
void Mmu::read_pte(std::uint64_t walk) {
  auto* w = reinterpret_cast<Walk*>(walk);
  const std::uint32_t vpn = static_cast<E3Addr>(w->va + w->pos) >> kPageShift;
  w->pte = 0;
  elan_.bus().dma_read(elan_.obj().c_str(), pt_base_ + static_cast<std::uint64_t>(vpn) * 8, &w->pte, 8,
                       host::DmaDone{member_fn<&Mmu::pte_read>(), this, walk});
}

void Mmu::pte_read(std::uint64_t arg) {
  auto* w = reinterpret_cast<Walk*>(arg & ~host::kDmaFailedBit);
  const bool ok = !(arg & host::kDmaFailedBit);
  const std::uint64_t pte = w->pte;
  const E3Addr a = static_cast<E3Addr>(w->va + w->pos);
  const std::uint32_t vpn = a >> kPageShift;
  Translation& r = *w->out;
  w->cost += elan_.cycles(elan_.params().walk_cycles);
  if (!ok || !(pte & pte::kValid)) {
    r.fault = ok ? Fault::Translation : Fault::BusError;
    r.fault_addr = a;
    r.pieces.clear();
    w->pos = w->len;
    ++elan_.mutable_stats().translation_faults;
    elan_.trace("mmu_fault", {{"fault", fault_name(static_cast<std::uint32_t>(r.fault))},
                              {"addr", static_cast<unsigned>(a)},
                              {"need", perm::names(w->need)}});
  } else if (w->generation == generation_) {
    // A flush while the PTE was in flight makes the PTE stale: use it for
    // this access (it was valid when read) but do not cache it.
    insert(vpn, pte);
  }
  if (w->pos < w->len) {
    // Re-run this page: it now hits (or is used from the fresh PTE).
    if (w->generation != generation_) {
      const std::uint32_t in_page = kPageSize - (a & (kPageSize - 1));
      const auto chunk = static_cast<std::uint32_t>(std::min<std::uint64_t>(in_page, w->len - w->pos));
      const std::uint32_t have = static_cast<std::uint32_t>((pte >> pte::kPermShift) & perm::kAll);
      if ((have & w->need) != w->need) {
        r.fault = Fault::Permission;
        r.fault_addr = a;
        r.pieces.clear();
        w->pos = w->len;
        ++elan_.mutable_stats().permission_faults;
      } else {
        r.pieces.push_back({(pte & pte::kAddrMask) + (a & (kPageSize - 1)), chunk});
        w->pos += chunk;
      }
      w->generation = generation_;
    } else {
      w->refilled = true;
    }
  }
  step(w);
}

}  // namespace nicsim::elan3
