// Memory regions (virtual, physical, shared; re-registration) and memory
// windows. A region is an MPT entry over a page list in the MTT: the driver
// pins the consumer's pages (when they are not node memory), writes their
// addresses with WRITE_MTT, then hands the MPT entry over with SW2HW_MPT.
// Host addresses are process addresses, identity-mapped, in 4 KiB pages.
#include <algorithm>
#include <cstring>

#include "verbs/driver/driver.h"

namespace nicsim::verbs {

namespace {

constexpr std::uint64_t kPage = 4096;
constexpr unsigned kPageLog = 12;

constexpr ib_access_t kAllAccess =
    IB_AC_RDMA_READ | IB_AC_RDMA_WRITE | IB_AC_ATOMIC | IB_AC_LOCAL_WRITE | IB_AC_MW_BIND;
constexpr ib_access_t kWindowAccess = IB_AC_RDMA_READ | IB_AC_RDMA_WRITE | IB_AC_ATOMIC;

// IBA 10.6.3.1: remote write and atomic access need local write access.
ib_api_status_t check_access(ib_access_t a) {
  if (a & ~kAllAccess) return IB_INVALID_PERMISSION;
  if ((a & (IB_AC_RDMA_WRITE | IB_AC_ATOMIC)) && !(a & IB_AC_LOCAL_WRITE)) return IB_INVALID_PERMISSION;
  return IB_SUCCESS;
}

// Where a region's bytes are: its virtual range and the page addresses.
struct Layout {
  std::uint64_t start = 0, length = 0;
  std::vector<std::uint64_t> pages;
  const void* pin = nullptr;  // the pin taken for it, if any
  bool newly_pinned = false;
};

void unpin(Device& d, const void* pin) {
  if (!pin) return;
  auto it = d.pins.find(reinterpret_cast<std::uint64_t>(pin));
  if (it == d.pins.end() || --it->second.refs) return;
  d.host().memory().unpin(pin);
  d.pins.erase(it);
}

// A consumer buffer: node memory as it is, anything else pinned (shared
// with other regions over the same pinned range).
ib_api_status_t prepare_virtual(Device& d, const void* vaddr, std::uint64_t length, Layout& l) {
  const auto va = reinterpret_cast<std::uint64_t>(vaddr);
  if (!vaddr || !length || va + length < va) return IB_INVALID_PARAMETER;
  auto it = d.pins.upper_bound(va);
  if (it != d.pins.begin()) {
    --it;
    if (va >= it->first && va + length <= it->first + it->second.bytes) {
      ++it->second.refs;
      l.pin = reinterpret_cast<const void*>(it->first);
    }
  }
  if (!l.pin && !d.host().memory().contains(va, length)) {
    if (!d.host().memory().pin(vaddr, length)) return IB_INVALID_PARAMETER;
    d.pins[va] = Device::Pin{length, 1};
    l.pin = vaddr;
    l.newly_pinned = true;
  }
  l.start = va;
  l.length = length;
  for (std::uint64_t p = va & ~(kPage - 1); p < va + length; p += kPage) l.pages.push_back(p);
  return IB_SUCCESS;
}

// A physical buffer list: one page-aligned page address per entry, the
// region starting buf_offset into the first. Physical memory is the node's.
ib_api_status_t prepare_physical(Device& d, const ib_phys_create_t& c, std::uint64_t want_va, Layout& l) {
  if (c.page_size != kPage) return IB_INVALID_PARAMETER;  // the only size query_ca lists
  if (!c.length || !c.num_bufs || !c.buf_array || c.buf_offset >= kPage) return IB_INVALID_PARAMETER;
  const std::uint64_t span = c.buf_offset + c.length;
  if (span < c.length) return IB_INVALID_PARAMETER;
  const std::uint64_t npages = (span + kPage - 1) / kPage;
  if (npages > c.num_bufs) return IB_INVALID_PARAMETER;
  for (std::uint64_t i = 0; i < npages; ++i) {
    const std::uint64_t page = c.buf_array[i];
    if (page & (kPage - 1)) return IB_INVALID_PARAMETER;
    const std::uint64_t from = i == 0 ? c.buf_offset : 0;
    const std::uint64_t to = i + 1 == npages ? span - i * kPage : kPage;
    if (!d.host().memory().contains(page + from, to - from)) return IB_INVALID_PARAMETER;
    l.pages.push_back(page);
  }
  // The virtual address must have the buffer's offset within its page;
  // otherwise the driver picks the nearest that does (the seed allows it).
  l.start = (want_va & ~(kPage - 1)) | c.buf_offset;
  l.length = c.length;
  return IB_SUCCESS;
}

void cancel(Device& d, Layout& l) {
  unpin(d, l.pin);
  l.pin = nullptr;
}

// Charges the CPU for building a page list: pinning each page of a user
// buffer (get_user_pages) and writing the translation entries.
void charge_pages(Device& d, const Layout& l, std::string_view cls) {
  d.cpu(cls, l.pages.size() * 8);
  if (l.newly_pinned)
    for (std::size_t i = 0; i < l.pages.size(); ++i) d.cpu("verbs_pin_page");
}

ib_api_status_t write_mtt(Device& d, std::uint32_t first, const std::vector<std::uint64_t>& pages) {
  std::vector<std::uint8_t> box(8 + 8 * static_cast<std::size_t>(hca::kMttPerCommand));
  for (std::size_t done = 0; done < pages.size();) {
    const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(hca::kMttPerCommand, pages.size() - done));
    std::memset(box.data(), 0, 8);
    std::memcpy(box.data(), &n, 4);
    std::memcpy(box.data() + 8, pages.data() + done, 8ull * n);
    const CmdResult r =
        d.command(hca::Command::WRITE_MTT, first + static_cast<std::uint32_t>(done), box.data(), 8 + 8ull * n);
    if (!r.ok()) return status_of(r);
    done += n;
  }
  return IB_SUCCESS;
}

ib_api_status_t sw2hw_mpt(Device& d, std::uint32_t key, std::uint32_t flags, std::uint32_t pdn, std::uint64_t start,
                          std::uint64_t length, std::uint32_t mtt_first) {
  std::uint8_t m[hca::mpt::kSize] = {};
  hca::put(m, hca::mpt::flags, flags | hca::mpt::kValid);
  hca::put(m, hca::mpt::pd, pdn);
  hca::put(m, hca::mpt::key, key);
  hca::put(m, hca::mpt::start, start);
  hca::put(m, hca::mpt::length, length);
  hca::put(m, hca::mpt::mtt_first, mtt_first);
  hca::put(m, hca::mpt::page_size_log, kPageLog);
  const CmdResult r = d.command(hca::Command::SW2HW_MPT, hca::mpt_index(key), m, sizeof m);
  return r.ok() ? IB_SUCCESS : status_of(r);
}

CmdResult hw2sw_mpt(Device& d, std::uint32_t key) { return d.command(hca::Command::HW2SW_MPT, hca::mpt_index(key)); }

// A new region over `l` (its pages written to fresh MTT entries), or over
// the pages of `share` (register_smr).
ib_api_status_t create_region(Pd* pd, Layout& l, ib_access_t access, Mr* share, uint32_t* p_lkey, uint32_t* p_rkey,
                              ib_mr_handle_t* ph_mr) {
  Device& d = *pd->dev;
  std::uint32_t index, mtt_first = 0;
  const auto count = static_cast<std::uint32_t>(l.pages.size());
  if (!d.mpts.alloc(index)) {
    cancel(d, l);
    return IB_INSUFFICIENT_RESOURCES;
  }
  if (share) {
    mtt_first = share->mtt_first;
  } else if (!d.mtts.alloc(count, mtt_first)) {
    d.mpts.release(index);
    cancel(d, l);
    return IB_INSUFFICIENT_RESOURCES;
  }
  charge_pages(d, l, "verbs_reg_mr");
  const std::uint32_t key = d.new_key(index);
  ib_api_status_t s = share ? IB_SUCCESS : write_mtt(d, mtt_first, l.pages);
  if (s == IB_SUCCESS) s = sw2hw_mpt(d, key, mpt_access(access), pd->pdn, l.start, l.length, mtt_first);
  if (s != IB_SUCCESS) {
    if (!share) d.mtts.release(mtt_first, count);
    d.mpts.release(index);
    cancel(d, l);
    return s;
  }
  Mr* mr = d.make<Mr>();
  mr->pd = pd;
  mr->start = l.start;
  mr->length = l.length;
  mr->access = access;
  mr->key = key;
  mr->mtt_first = mtt_first;
  mr->mtt_count = share ? 0 : count;
  mr->parent = share;
  mr->pinned = l.pin;
  if (share) ++share->sharers;
  ++pd->users;
  *p_lkey = key;
  *p_rkey = cl_hton32(key);  // rkeys go to consumers in wire order (seed)
  *ph_mr = mr->handle();
  return IB_SUCCESS;
}

// Re-registration: a deregistration and registration in one, keeping the
// handle. `l` (may be null) is the new layout, already prepared.
ib_api_status_t reregister(Mr* mr, Pd* pd, ib_access_t access, Layout* l, uint32_t* p_lkey, uint32_t* p_rkey) {
  Device& d = *mr->dev;
  std::uint32_t mtt_first = mr->mtt_first, count = mr->mtt_count;
  if (l) {
    count = static_cast<std::uint32_t>(l->pages.size());
    if (!d.mtts.alloc(count, mtt_first)) {
      cancel(d, *l);
      return IB_INSUFFICIENT_RESOURCES;
    }
  }
  auto undo_new = [&] {
    if (!l) return;
    d.mtts.release(mtt_first, count);
    cancel(d, *l);
  };
  if (l)
    charge_pages(d, *l, "verbs_reg_mr");
  else
    d.cpu("verbs_reg_mr");
  const CmdResult r = hw2sw_mpt(d, mr->key);
  if (!r.ok()) {
    undo_new();
    return r.issued && r.status == hca::CmdStatus::RESOURCE_BUSY ? IB_RESOURCE_BUSY : status_of(r);
  }
  const std::uint64_t start = l ? l->start : mr->start, length = l ? l->length : mr->length;
  const std::uint32_t key = d.new_key(hca::mpt_index(mr->key));
  ib_api_status_t s = l ? write_mtt(d, mtt_first, l->pages) : IB_SUCCESS;
  if (s == IB_SUCCESS) s = sw2hw_mpt(d, key, mpt_access(access), pd->pdn, start, length, mtt_first);
  if (s != IB_SUCCESS) {
    // Put the old registration back (under a fresh tag) and report.
    undo_new();
    mr->key = d.new_key(hca::mpt_index(mr->key));
    sw2hw_mpt(d, mr->key, mpt_access(mr->access), mr->pd->pdn, mr->start, mr->length, mr->mtt_first);
    return s;
  }
  if (l) {
    d.mtts.release(mr->mtt_first, mr->mtt_count);
    unpin(d, mr->pinned);
    mr->pinned = l->pin;
    mr->mtt_first = mtt_first;
    mr->mtt_count = count;
    mr->start = start;
    mr->length = length;
  }
  if (pd != mr->pd) {
    --mr->pd->users;
    ++pd->users;
    mr->pd = pd;
  }
  mr->access = access;
  mr->key = key;
  *p_lkey = key;
  *p_rkey = cl_hton32(key);
  return IB_SUCCESS;
}

// Shared checks of modify_mr / modify_pmr: handles, mask, permissions.
// `bad_pd` is the verb's answer to a bad new PD: modify_mr's seed list has
// IB_INVALID_PD_HANDLE, modify_pmr's none, so there it is one of "the
// pointers was not valid" (IB_INVALID_PARAMETER).
ib_api_status_t check_modify(Mr*& mr, const ib_mr_handle_t h_mr, ib_mr_mod_t mask, bool has_create,
                             ib_access_t new_access, const ib_pd_handle_t h_pd, ib_api_status_t bad_pd,
                             uint32_t* p_lkey, uint32_t* p_rkey, Pd*& pd) {
  mr = lookup<Mr>(h_mr);
  if (!mr) return IB_INVALID_MR_HANDLE;
  if (!mask || (mask & ~(IB_MR_MOD_ADDR | IB_MR_MOD_PD | IB_MR_MOD_ACCESS)) || !p_lkey || !p_rkey)
    return IB_INVALID_PARAMETER;
  if ((mask & (IB_MR_MOD_ADDR | IB_MR_MOD_ACCESS)) && !has_create) return IB_INVALID_PARAMETER;
  pd = mr->pd;
  if (mask & IB_MR_MOD_PD) {
    pd = lookup<Pd>(h_pd);
    if (!pd) return bad_pd;
  }
  if ((mask & IB_MR_MOD_ACCESS) && check_access(new_access) != IB_SUCCESS) return IB_INVALID_PERMISSION;
  if (mask & IB_MR_MOD_ADDR) {
    // The pages of a shared region belong to another; and pages others
    // share cannot be swapped underneath them.
    if (mr->parent) return IB_INVALID_PARAMETER;
    if (mr->sharers) return IB_RESOURCE_BUSY;
  }
  return IB_SUCCESS;
}

}  // namespace

// ---- regions -------------------------------------------------------------------------

ib_api_status_t register_mr(const ib_pd_handle_t h_pd, const ib_mr_create_t* const p_mr_create, uint32_t* const p_lkey,
                            uint32_t* const p_rkey, ib_mr_handle_t* const ph_mr, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_register_mr");
  Pd* pd = lookup<Pd>(h_pd);
  if (!pd) return IB_INVALID_PD_HANDLE;
  if (!p_mr_create || !p_lkey || !p_rkey || !ph_mr) return IB_INVALID_PARAMETER;
  if (ib_api_status_t s = check_access(p_mr_create->access_ctrl); s != IB_SUCCESS) return s;
  Layout l;
  if (ib_api_status_t s = prepare_virtual(*pd->dev, p_mr_create->vaddr, p_mr_create->length, l); s != IB_SUCCESS)
    return s;
  return create_region(pd, l, p_mr_create->access_ctrl, nullptr, p_lkey, p_rkey, ph_mr);
}

ib_api_status_t register_pmr(const ib_pd_handle_t h_pd, const ib_phys_create_t* const p_pmr_create,
                             void** const p_vaddr, uint32_t* const p_lkey, uint32_t* const p_rkey,
                             ib_mr_handle_t* const ph_mr, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_register_pmr");
  Pd* pd = lookup<Pd>(h_pd);
  if (!pd) return IB_INVALID_PD_HANDLE;
  if (!p_pmr_create || !p_vaddr || !p_lkey || !p_rkey || !ph_mr) return IB_INVALID_PARAMETER;
  if (ib_api_status_t s = check_access(p_pmr_create->access_ctrl); s != IB_SUCCESS) return s;
  Layout l;
  if (ib_api_status_t s = prepare_physical(*pd->dev, *p_pmr_create, reinterpret_cast<std::uint64_t>(*p_vaddr), l);
      s != IB_SUCCESS)
    return s;
  const ib_api_status_t s = create_region(pd, l, p_pmr_create->access_ctrl, nullptr, p_lkey, p_rkey, ph_mr);
  if (s == IB_SUCCESS) *p_vaddr = reinterpret_cast<void*>(l.start);
  return s;
}

ib_api_status_t register_smr(const ib_mr_handle_t h_mr, const ib_pd_handle_t h_pd, const ib_access_t access_ctrl,
                             void** const p_vaddr, uint32_t* const p_lkey, uint32_t* const p_rkey,
                             ib_mr_handle_t* const ph_mr, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_register_smr");
  Mr* mr = lookup<Mr>(h_mr);
  if (!mr) return IB_INVALID_MR_HANDLE;
  Pd* pd = lookup<Pd>(h_pd);
  if (!pd) return IB_INVALID_PD_HANDLE;
  if (!p_vaddr || !p_lkey || !p_rkey || !ph_mr) return IB_INVALID_PARAMETER;
  if (ib_api_status_t s = check_access(access_ctrl); s != IB_SUCCESS) return s;
  Mr* owner = mr->parent ? mr->parent : mr;  // the region that owns the pages
  Layout l;
  l.start = (reinterpret_cast<std::uint64_t>(*p_vaddr) & ~(kPage - 1)) | (mr->start & (kPage - 1));
  l.length = mr->length;
  l.pages.resize(owner->mtt_count);
  const ib_api_status_t s = create_region(pd, l, access_ctrl, owner, p_lkey, p_rkey, ph_mr);
  if (s == IB_SUCCESS) *p_vaddr = reinterpret_cast<void*>(l.start);
  return s;
}

ib_api_status_t query_mr(const ib_mr_handle_t h_mr, ib_mr_attr_t* const p_mr_query) {
  NICSIM_API_CALL_NAMED("ci_query_mr");
  Mr* mr = lookup<Mr>(h_mr);
  if (!mr) return IB_INVALID_MR_HANDLE;
  if (!p_mr_query) return IB_INVALID_PARAMETER;
  mr->dev->cpu("verbs_query_mr");
  ib_mr_attr_t& a = *p_mr_query;
  std::memset(&a, 0, sizeof a);
  a.h_pd = mr->pd->handle();
  a.local_lb = reinterpret_cast<void*>(mr->start);
  a.local_ub = reinterpret_cast<void*>(mr->start + mr->length);
  if (mr->access & (IB_AC_RDMA_READ | IB_AC_RDMA_WRITE | IB_AC_ATOMIC)) {
    a.remote_lb = a.local_lb;
    a.remote_ub = a.local_ub;
  }
  a.access_ctrl = mr->access;
  a.lkey = mr->key;
  a.rkey = cl_hton32(mr->key);
  return IB_SUCCESS;
}

ib_api_status_t modify_mr(const ib_mr_handle_t h_mr, const ib_mr_mod_t mr_modify_mask,
                          const ib_mr_create_t* const p_mr_create, uint32_t* const p_lkey, uint32_t* const p_rkey,
                          const ib_pd_handle_t h_pd, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_modify_mr");
  Mr* mr;
  Pd* pd;
  const ib_access_t access = p_mr_create ? p_mr_create->access_ctrl : 0;
  if (ib_api_status_t s = check_modify(mr, h_mr, mr_modify_mask, p_mr_create != nullptr, access, h_pd,
                                       IB_INVALID_PD_HANDLE, p_lkey, p_rkey, pd);
      s != IB_SUCCESS)
    return s;
  const ib_access_t new_access = (mr_modify_mask & IB_MR_MOD_ACCESS) ? access : mr->access;
  Layout l;
  if (mr_modify_mask & IB_MR_MOD_ADDR) {
    if (ib_api_status_t s = prepare_virtual(*mr->dev, p_mr_create->vaddr, p_mr_create->length, l); s != IB_SUCCESS)
      return s;
  }
  return reregister(mr, pd, new_access, (mr_modify_mask & IB_MR_MOD_ADDR) ? &l : nullptr, p_lkey, p_rkey);
}

ib_api_status_t modify_pmr(const ib_mr_handle_t h_mr, const ib_mr_mod_t mr_modify_mask,
                           const ib_phys_create_t* const p_pmr_create, void** const p_vaddr, uint32_t* const p_lkey,
                           uint32_t* const p_rkey, const ib_pd_handle_t h_pd, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_modify_pmr");
  Mr* mr;
  Pd* pd;
  const ib_access_t access = p_pmr_create ? p_pmr_create->access_ctrl : 0;
  if (ib_api_status_t s = check_modify(mr, h_mr, mr_modify_mask, p_pmr_create != nullptr, access, h_pd,
                                       IB_INVALID_PARAMETER, p_lkey, p_rkey, pd);
      s != IB_SUCCESS)
    return s;
  const ib_access_t new_access = (mr_modify_mask & IB_MR_MOD_ACCESS) ? access : mr->access;
  Layout l;
  if (mr_modify_mask & IB_MR_MOD_ADDR) {
    if (!p_vaddr) return IB_INVALID_PARAMETER;
    if (ib_api_status_t s = prepare_physical(*mr->dev, *p_pmr_create, reinterpret_cast<std::uint64_t>(*p_vaddr), l);
        s != IB_SUCCESS)
      return s;
  }
  const ib_api_status_t s =
      reregister(mr, pd, new_access, (mr_modify_mask & IB_MR_MOD_ADDR) ? &l : nullptr, p_lkey, p_rkey);
  if (s == IB_SUCCESS && p_vaddr) *p_vaddr = reinterpret_cast<void*>(mr->start);
  return s;
}

ib_api_status_t deregister_mr(const ib_mr_handle_t h_mr, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_deregister_mr");
  Mr* mr = lookup_charged<Mr>(h_mr, "verbs_dereg_mr");
  if (!mr) return IB_INVALID_MR_HANDLE;
  if (mr->sharers) return IB_RESOURCE_BUSY;  // shared regions still use its pages
  Device& d = *mr->dev;
  const CmdResult r = hw2sw_mpt(d, mr->key);
  if (!r.ok()) return r.issued && r.status == hca::CmdStatus::RESOURCE_BUSY ? IB_RESOURCE_BUSY : status_of(r);
  if (mr->parent) {
    --mr->parent->sharers;
  } else {
    d.mtts.release(mr->mtt_first, mr->mtt_count);
    unpin(d, mr->pinned);
  }
  d.mpts.release(hca::mpt_index(mr->key));
  --mr->pd->users;
  d.kill(mr);
  return IB_SUCCESS;
}

// ---- windows ---------------------------------------------------------------------------

ib_api_status_t create_mw(const ib_pd_handle_t h_pd, uint32_t* p_rkey, ib_mw_handle_t* ph_mw, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_create_mw");
  Pd* pd = lookup<Pd>(h_pd);
  if (!pd) return IB_INVALID_PD_HANDLE;
  if (!p_rkey || !ph_mw) return IB_INVALID_PARAMETER;
  Device& d = *pd->dev;
  std::uint32_t index;
  if (!d.mpts.alloc(index)) return IB_INSUFFICIENT_RESOURCES;
  d.cpu("verbs_create_mw");
  const std::uint32_t key = d.new_key(index);
  if (ib_api_status_t s = sw2hw_mpt(d, key, hca::mpt::kIsWindow, pd->pdn, 0, 0, 0); s != IB_SUCCESS) {
    d.mpts.release(index);
    return s;
  }
  Mw* mw = d.make<Mw>();
  mw->pd = pd;
  mw->key = key;
  ++pd->users;
  *p_rkey = cl_hton32(key);
  *ph_mw = mw->handle();
  return IB_SUCCESS;
}

ib_api_status_t query_mw(const ib_mw_handle_t h_mw, ib_pd_handle_t* ph_pd, uint32_t* p_rkey, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_query_mw");
  Mw* mw = lookup<Mw>(h_mw);
  if (!mw) return IB_INVALID_MW_HANDLE;
  if (!ph_pd || !p_rkey) return IB_INVALID_PARAMETER;
  mw->dev->cpu("verbs_query_mr");
  *ph_pd = mw->pd->handle();
  *p_rkey = cl_hton32(mw->key);
  return IB_SUCCESS;
}

ib_api_status_t bind_mw(const ib_mw_handle_t h_mw, const ib_qp_handle_t h_qp, ib_bind_wr_t* const p_mw_bind,
                        uint32_t* const p_rkey) {
  NICSIM_API_CALL_NAMED("ci_bind_mw");
  Mw* mw = lookup<Mw>(h_mw);
  if (!mw) return IB_INVALID_MW_HANDLE;
  Qp* qp = lookup<Qp>(h_qp);
  if (!qp) return IB_INVALID_QP_HANDLE;
  if (!p_mw_bind || !p_rkey) return IB_INVALID_PARAMETER;
  // IBA: windows are bound through reliable or unreliable connections.
  if (qp->type != IB_QPT_RELIABLE_CONN && qp->type != IB_QPT_UNRELIABLE_CONN) return IB_INVALID_SERVICE_TYPE;
  const ib_bind_wr_t& b = *p_mw_bind;
  if (b.current_rkey != cl_hton32(mw->key)) return IB_INVALID_RKEY;
  if (b.access_ctrl & ~kWindowAccess) return IB_INVALID_PERMISSION;
  std::uint32_t mr_key = 0;
  if (b.local_ds.length) {
    // The seed lists no MR-handle status for this verb: a bad region handle
    // is "one of the pointers was not valid".
    Mr* mr = lookup<Mr>(b.h_mr);
    if (!mr) return IB_INVALID_PARAMETER;
    if (!(mr->access & IB_AC_MW_BIND)) return IB_INVALID_PERMISSION;
    if ((b.access_ctrl & (IB_AC_RDMA_WRITE | IB_AC_ATOMIC)) && !(mr->access & IB_AC_LOCAL_WRITE))
      return IB_INVALID_PERMISSION;
    const auto va = reinterpret_cast<std::uint64_t>(b.local_ds.vaddr);
    if (va < mr->start || va - mr->start > mr->length || b.local_ds.length > mr->length - (va - mr->start))
      return IB_INVALID_PARAMETER;
    if (mr->pd != mw->pd || mw->pd != qp->pd) return IB_INVALID_PARAMETER;
    mr_key = mr->key;
  }
  Device& d = *mw->dev;
  const std::uint32_t new_key = d.new_key(hca::mpt_index(mw->key));
  const ib_api_status_t s = post_bind(*qp, b, mw->key, new_key, mr_key, mpt_access(b.access_ctrl));
  if (s != IB_SUCCESS) return s;
  mw->key = new_key;
  *p_rkey = cl_hton32(new_key);
  return IB_SUCCESS;
}

ib_api_status_t destroy_mw(const ib_mw_handle_t h_mw, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_destroy_mw");
  Mw* mw = lookup_charged<Mw>(h_mw, "verbs_destroy_mw");
  if (!mw) return IB_INVALID_MW_HANDLE;
  Device& d = *mw->dev;
  const CmdResult r = hw2sw_mpt(d, mw->key);
  if (!r.ok()) return status_of(r);
  d.mpts.release(hca::mpt_index(mw->key));
  --mw->pd->users;
  d.kill(mw);
  return IB_SUCCESS;
}

}  // namespace nicsim::verbs
