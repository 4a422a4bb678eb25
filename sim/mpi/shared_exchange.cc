#include "mpi/shared_exchange.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string_view>
#include <thread>

namespace nicsim {

namespace {

constexpr std::size_t kLine = 64;
// Yields before a rank sleeps: a rank sharing the core runs at once, and
// the core rarely idles; but while other programs want the core too, a
// yield gives it to one of them for a time slice, where a woken sleeper
// is scheduled ahead of them (docs/partition.md has the figures).
constexpr unsigned kYieldLimit = 64;

std::size_t round_up(std::size_t n) { return (n + kLine - 1) / kLine * kLine; }

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// The futex is the count's low half (little-endian x86 and arm64 alike);
// not private: the ranks are separate processes sharing the page.
void futex_wait(std::uint64_t* count, std::uint32_t seen) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(count), FUTEX_WAIT, seen, nullptr, nullptr, 0);
}

void futex_wake_all(std::uint64_t* count) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(count), FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
}

}  // namespace

std::unique_ptr<SharedExchange> SharedExchange::create(MPI_Comm comm, int rank, int ranks) {
  if (const char* sync = std::getenv("NICSIM_RANK_SYNC"); sync && std::string_view(sync) == "mpi") return nullptr;
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int on_node = 0;
  MPI_Comm_size(node, &on_node);
  MPI_Comm_free(&node);
  // Every rank decides alike: the sizes agree only if all share one machine.
  int all_here = on_node == ranks ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &all_here, 1, MPI_INT, MPI_MIN, comm);
  if (!all_here) return nullptr;
  return std::unique_ptr<SharedExchange>(new SharedExchange(comm, rank, ranks));
}

SharedExchange::SharedExchange(MPI_Comm comm, int rank, int ranks)
    : comm_(comm),
      rank_(rank),
      ranks_(ranks),
      oversubscribed_(static_cast<unsigned>(ranks) > std::max(1u, std::thread::hardware_concurrency())) {
  if (const char* bytes = std::getenv("NICSIM_RANK_SLOT_BYTES")) slot_bytes_ = std::strtoull(bytes, nullptr, 10);
  header_size_ = round_up(sizeof(SlotHeader) + sizeof(std::uint64_t) * static_cast<std::size_t>(ranks));
  slot_size_ = header_size_ + round_up(slot_bytes_);
  const std::size_t counts = kLine * static_cast<std::size_t>(ranks);
  const std::size_t total = counts + slot_size_ * 2 * static_cast<std::size_t>(ranks);
  // Rank 0 allocates it all; the others map the same memory.
  void* mine = nullptr;
  MPI_Win_allocate_shared(static_cast<MPI_Aint>(rank == 0 ? total : 0), 1, MPI_INFO_NULL, comm, &mine, &win_);
  MPI_Aint size = 0;
  int unit = 0;
  void* base = nullptr;
  MPI_Win_shared_query(win_, 0, &size, &unit, &base);
  base_ = static_cast<std::uint8_t*>(base);
  if (rank == 0) std::memset(base_, 0, counts);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
  MPI_Win_sync(win_);
  MPI_Barrier(comm);
  MPI_Win_sync(win_);
}

SharedExchange::~SharedExchange() {
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
}

std::uint64_t* SharedExchange::count_of(int rank) const {
  return reinterpret_cast<std::uint64_t*>(base_ + kLine * static_cast<std::size_t>(rank));
}

SharedExchange::SlotHeader* SharedExchange::header(int rank, int parity) const {
  const std::size_t slot = static_cast<std::size_t>(rank) * 2 + static_cast<std::size_t>(parity);
  return reinterpret_cast<SlotHeader*>(base_ + kLine * static_cast<std::size_t>(ranks_) + slot * slot_size_);
}

std::uint64_t* SharedExchange::bytes_to(int rank, int parity) const {
  return reinterpret_cast<std::uint64_t*>(header(rank, parity) + 1);
}

std::uint8_t* SharedExchange::data(int rank, int parity) const {
  return reinterpret_cast<std::uint8_t*>(header(rank, parity)) + header_size_;
}

std::uint32_t* SharedExchange::sleepers_of(int rank) const {
  return reinterpret_cast<std::uint32_t*>(count_of(rank) + 1);
}

// Spins while the other rank is likely running on its own core; when there
// are more ranks than cores (or it takes long), yields the core a few
// times, then sleeps on the rank's count. A sleeper counts itself in before
// it looks at the count a last time, and the rank raising the count looks
// for sleepers after (both sequentially consistent): one of the two sees
// the other, so no wake-up is lost.
void SharedExchange::wait_for(int rank) const {
  std::atomic_ref<std::uint64_t> count(*count_of(rank));
  const unsigned spin_limit = oversubscribed_ ? 16 : 1u << 14;
  for (unsigned spins = 0; spins < spin_limit; ++spins) {
    if (count.load(std::memory_order_acquire) >= window_) return;
    cpu_relax();
  }
  for (unsigned yields = 0; yields < kYieldLimit; ++yields) {
    if (count.load(std::memory_order_acquire) >= window_) return;
    sched_yield();
  }
  std::atomic_ref<std::uint32_t> sleepers(*sleepers_of(rank));
  for (;;) {
    sleepers.fetch_add(1);
    const std::uint64_t seen = count.load();
    if (seen < window_) futex_wait(count_of(rank), static_cast<std::uint32_t>(seen));
    sleepers.fetch_sub(1);
    if (count.load(std::memory_order_acquire) >= window_) return;
  }
}

void SharedExchange::raise_count() {
  std::atomic_ref<std::uint64_t>(*count_of(rank_)).store(window_);
  if (std::atomic_ref<std::uint32_t>(*sleepers_of(rank_)).load() != 0) futex_wake_all(count_of(rank_));
}

std::vector<std::vector<std::uint8_t>> SharedExchange::exchange(const std::vector<std::vector<std::uint8_t>>& to_rank,
                                                                std::uint64_t* mins, int count) {
  if (count > kMaxWords) throw std::logic_error("shared exchange: too many words to reduce");
  ++window_;
  const int parity = static_cast<int>(window_ & 1);
  SlotHeader* mine = header(rank_, parity);
  std::uint64_t* sizes = bytes_to(rank_, parity);
  std::size_t total = 0;
  for (int r = 0; r < ranks_; ++r) {
    sizes[r] = to_rank[r].size();
    total += to_rank[r].size();
  }
  std::copy(mins, mins + count, mine->words);
  mine->fits = total <= slot_bytes_ ? 1 : 0;
  if (mine->fits) {
    std::uint8_t* out = data(rank_, parity);
    for (const auto& bytes : to_rank) out = std::copy(bytes.begin(), bytes.end(), out);
  }
  raise_count();
  bool all_fit = true;
  std::vector<int> recv_counts(static_cast<std::size_t>(ranks_)), recv_at(static_cast<std::size_t>(ranks_));
  for (int r = 0; r < ranks_; ++r) {
    if (r != rank_) wait_for(r);
    const SlotHeader* theirs = header(r, parity);
    for (int i = 0; i < count; ++i) mins[i] = std::min(mins[i], theirs->words[i]);
    all_fit = all_fit && theirs->fits != 0;
    recv_counts[r] = static_cast<int>(bytes_to(r, parity)[rank_]);
  }
  std::vector<std::vector<std::uint8_t>> from(static_cast<std::size_t>(ranks_));
  if (all_fit) {
    for (int r = 0; r < ranks_; ++r) {
      const std::uint64_t* theirs = bytes_to(r, parity);
      const std::uint8_t* at = data(r, parity) + std::accumulate(theirs, theirs + rank_, std::uint64_t{0});
      from[r].assign(at, at + recv_counts[r]);
    }
    return from;
  }
  // Some rank had more than its slot holds: this window's bytes go by MPI.
  std::vector<int> send_counts(static_cast<std::size_t>(ranks_)), send_at(static_cast<std::size_t>(ranks_));
  for (int r = 0; r < ranks_; ++r) send_counts[r] = static_cast<int>(to_rank[r].size());
  std::exclusive_scan(send_counts.begin(), send_counts.end(), send_at.begin(), 0);
  std::exclusive_scan(recv_counts.begin(), recv_counts.end(), recv_at.begin(), 0);
  std::vector<std::uint8_t> send(total), recv(static_cast<std::size_t>(recv_at.back() + recv_counts.back()));
  for (int r = 0; r < ranks_; ++r) std::copy(to_rank[r].begin(), to_rank[r].end(), send.begin() + send_at[r]);
  MPI_Alltoallv(send.data(), send_counts.data(), send_at.data(), MPI_BYTE, recv.data(), recv_counts.data(),
                recv_at.data(), MPI_BYTE, comm_);
  for (int r = 0; r < ranks_; ++r)
    from[r].assign(recv.begin() + recv_at[r], recv.begin() + recv_at[r] + recv_counts[r]);
  return from;
}

}  // namespace nicsim
