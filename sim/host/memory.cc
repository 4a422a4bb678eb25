// HostMemory: real allocations, accounted per node and recorded as regions
// so that the bus can tell a DMA inside the node's memory from a stray one.
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "core/sim.h"
#include "host/host.h"

namespace nicsim::host {

HostMemory::~HostMemory() {
  for (auto& [addr, region] : regions_)
    if (region.owned) std::free(reinterpret_cast<void*>(addr));
}

void* HostMemory::alloc(std::size_t bytes, std::size_t align) {
  if (align == 0 || (align & (align - 1)) != 0) return nullptr;
  if (align < alignof(std::max_align_t)) align = alignof(std::max_align_t);
  std::size_t want = bytes ? bytes : 1;
  if (want > limit_) return nullptr;
  // aligned_alloc wants a multiple of the alignment.
  std::size_t charged = (want + align - 1) / align * align;
  if (charged > limit_ - in_use_) return nullptr;
  void* p = std::aligned_alloc(align, charged);
  if (!p) return nullptr;
  std::memset(p, 0, charged);
  regions_[reinterpret_cast<std::uint64_t>(p)] = Region{want, charged, true, next_region_id_++};
  in_use_ += charged;
  return p;
}

bool HostMemory::free_checked(void* p) {
  auto it = regions_.find(reinterpret_cast<std::uint64_t>(p));
  if (it == regions_.end() || !it->second.owned) return false;
  in_use_ -= it->second.charged;
  regions_.erase(it);
  hits_[0] = hits_[1] = Hit{};
  std::free(p);
  return true;
}

void HostMemory::free(void* p) {
  if (!p) return;
  if (free_checked(p) || !Sim::exists()) return;
  Sim::get().error("host memory", fmt::format("free of {} which the node did not allocate",
                                              describe(reinterpret_cast<std::uint64_t>(p))));
}

bool HostMemory::pin(const void* p, std::size_t bytes) {
  auto addr = reinterpret_cast<std::uint64_t>(p);
  if (!p || bytes == 0 || addr + bytes < addr) return false;
  auto next = regions_.lower_bound(addr);
  if (next != regions_.end() && next->first < addr + bytes) return false;
  if (next != regions_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second.bytes > addr) return false;
  }
  regions_[addr] = Region{bytes, 0, false, next_region_id_++};
  return true;
}

bool HostMemory::unpin(const void* p) {
  auto it = regions_.find(reinterpret_cast<std::uint64_t>(p));
  if (it == regions_.end() || it->second.owned) return false;
  regions_.erase(it);
  hits_[0] = hits_[1] = Hit{};
  return true;
}

bool HostMemory::contains_slow(std::uint64_t addr, std::size_t bytes) const {
  if (addr + bytes < addr) return false;
  auto it = regions_.upper_bound(addr);
  if (it == regions_.begin()) return false;
  --it;
  const std::uint64_t end = it->first + it->second.bytes;
  if (addr + bytes > end) return false;
  hits_[1] = hits_[0];
  hits_[0] = Hit{it->first, end};
  return true;
}

std::string HostMemory::describe(std::uint64_t addr) const {
  auto it = regions_.upper_bound(addr);
  if (it != regions_.begin()) {
    --it;
    if (addr - it->first < std::max<std::size_t>(it->second.bytes, 1))
      return fmt::format("r{}+{:#x}", it->second.id, addr - it->first);
  }
  return "unmapped";
}

}  // namespace nicsim::host
