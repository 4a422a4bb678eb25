#include <algorithm>

#include "hca_model/hca.h"

namespace nicsim::hca {

Mpt* Tpt::entry(std::uint32_t key) {
  const std::uint32_t i = mpt_index(key);
  return i < mpts_.size() ? &mpts_[i] : nullptr;
}

TptResult Tpt::translate(std::uint32_t key, std::uint32_t pd, std::uint64_t va, std::uint64_t len, std::uint32_t need,
                         std::uint32_t qpn, std::vector<HostRange>& out) const {
  ++const_cast<Tpt*>(this)->lookups;
  const std::uint32_t i = mpt_index(key);
  if (i >= mpts_.size()) return TptResult::BadKey;
  const Mpt& e = mpts_[i];
  if (!e.valid || e.key != key) return TptResult::BadKey;
  if (e.pd != pd) return TptResult::BadPd;
  constexpr std::uint32_t kAccessBits =
      mpt::kLocalWrite | mpt::kRemoteRead | mpt::kRemoteWrite | mpt::kRemoteAtomic | mpt::kMwBind;
  if ((need & kAccessBits) & ~e.flags) return TptResult::BadAccess;
  if (len > e.length || va < e.start || va - e.start > e.length - len) return TptResult::OutOfBounds;
  if (e.flags & mpt::kIsWindow) {
    // IBA 1.1 windows (type 1): usable by any QP of the window's PD, which
    // was checked above; bound_qpn only records who bound it.
    const std::uint32_t pi = mpt_index(e.parent_key);
    if (pi >= mpts_.size() || !mpts_[pi].valid) return TptResult::BadKey;
    const Mpt& parent = mpts_[pi];
    return translate(parent.key, parent.pd, va, len, 0, qpn, out);
  }
  if (len == 0) return TptResult::Ok;
  if (e.flags & mpt::kPhysical) {
    out.push_back(HostRange{va, static_cast<std::uint32_t>(len)});
    return TptResult::Ok;
  }
  // Through the page list: a region starts at an offset into its first page.
  const std::uint64_t page = 1ULL << e.page_size_log;
  const std::uint64_t first_page_va = e.start & ~(page - 1);
  while (len > 0) {
    const std::uint64_t index = (va - first_page_va) >> e.page_size_log;
    const std::uint64_t in_page = va & (page - 1);
    const std::uint64_t chunk = std::min(len, page - in_page);
    const std::uint64_t slot = e.mtt_first + index;
    if (slot >= mtt_.size()) return TptResult::OutOfBounds;
    const std::uint64_t host = mtt_[slot] + in_page;
    if (!out.empty() && out.back().addr + out.back().len == host && out.back().len + chunk <= 0xffffffffULL)
      out.back().len += static_cast<std::uint32_t>(chunk);
    else
      out.push_back(HostRange{host, static_cast<std::uint32_t>(chunk)});
    va += chunk;
    len -= chunk;
  }
  return TptResult::Ok;
}

}  // namespace nicsim::hca
