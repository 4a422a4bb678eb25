// HostMemory: real memory at addresses that are the same in every run,
// accounted per node and recorded as regions
// so that the bus can tell a DMA inside the node's memory from a stray one.
#include <fmt/format.h>

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

#include "core/sim.h"
#include "host/host.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace nicsim::host {

namespace {

// The arena's start is aligned to this, so that every address's low bits
// (page and PCI boundaries, cache lines) are the same in every run.
constexpr std::uint64_t kArenaAlign = std::uint64_t{1} << 30;
// Between two allocations: under AddressSanitizer a poisoned red zone, so an
// overrun of one is caught before it reaches the next; kept in every build
// so that addresses do not depend on the build.
constexpr std::uint64_t kGap = 64;

#if defined(__SANITIZE_ADDRESS__)
void poison(std::uint64_t addr, std::uint64_t bytes) {
  __asan_poison_memory_region(reinterpret_cast<void*>(addr), bytes);
}
void unpoison(std::uint64_t addr, std::uint64_t bytes) {
  __asan_unpoison_memory_region(reinterpret_cast<void*>(addr), bytes);
}
#else
void poison(std::uint64_t, std::uint64_t) {}
void unpoison(std::uint64_t, std::uint64_t) {}
#endif

}  // namespace

HostMemory::~HostMemory() {
  if (arena_) munmap(reinterpret_cast<void*>(mapped_), mapped_bytes_);
}

// A node's memory is one reserved range of address space, placed on a
// 1 GiB boundary, which allocations take first-fit in address order: the
// same program gets the same addresses, relative to that boundary, in
// every run and every process.
bool HostMemory::reserve_arena() {
  // Twice the limit: room for alignment padding, red zones and fragments
  // (address space only: pages are committed as allocations touch them).
  constexpr std::uint64_t kRound = std::uint64_t{2} << 20;
  arena_bytes_ = 2 * ((limit_ + kRound - 1) / kRound * kRound);
  mapped_bytes_ = arena_bytes_ + kArenaAlign;
  void* m = mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return false;
  mapped_ = reinterpret_cast<std::uint64_t>(m);
  arena_ = (mapped_ + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
  free_[0] = arena_bytes_;
  return true;
}

void* HostMemory::alloc(std::size_t bytes, std::size_t align) {
  if (align == 0 || (align & (align - 1)) != 0) return nullptr;
  if (align < alignof(std::max_align_t)) align = alignof(std::max_align_t);
  std::size_t want = bytes ? bytes : 1;
  if (want > limit_) return nullptr;
  const std::size_t charged = (want + align - 1) / align * align;
  if (charged > limit_ - in_use_) return nullptr;
  if (!arena_ && !reserve_arena()) return nullptr;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const auto [off, size] = *it;
    const std::uint64_t start = (off + align - 1) / align * align;
    if (start + charged + kGap > off + size) continue;
    free_.erase(it);
    if (start > off) free_[off] = start - off;
    if (off + size > start + charged + kGap) free_[start + charged + kGap] = off + size - (start + charged + kGap);
    const std::uint64_t addr = arena_ + start;
    unpoison(addr, charged);
    poison(addr + charged, kGap);
    std::memset(reinterpret_cast<void*>(addr), 0, charged);
    regions_[addr] = Region{want, charged, true, next_region_id_++};
    in_use_ += charged;
    return reinterpret_cast<void*>(addr);
  }
  return nullptr;
}

bool HostMemory::free_checked(void* p) {
  auto it = regions_.find(reinterpret_cast<std::uint64_t>(p));
  if (it == regions_.end() || !it->second.owned) return false;
  const std::uint64_t addr = it->first, charged = it->second.charged;
  in_use_ -= charged;
  regions_.erase(it);
  hits_[0] = hits_[1] = Hit{};
  poison(addr, charged);
  // Back to the free list, joined with free neighbours.
  std::uint64_t off = addr - arena_, size = charged + kGap;
  auto next = free_.lower_bound(off);
  if (next != free_.end() && next->first == off + size) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == off) {
      off = prev->first;
      size += prev->second;
      free_.erase(prev);
    }
  }
  free_[off] = size;
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
