// The MPI engine: a plug-in (libnicsim_mpi.so) that nicsim loads when it
// runs under mpirun, so that nicsim itself needs no MPI. It moves the
// events that cross between ranks and reduces the ranks' counters; what
// crosses and when is decided in core/block_exchange and world/block_run.
#include <mpi.h>

#include <algorithm>
#include <memory>
#include <numeric>

#include "core/block_exchange.h"
#include "mpi/shared_exchange.h"

namespace nicsim {

namespace {

class MpiTransport final : public RankTransport {
 public:
  MpiTransport(int* argc, char*** argv) {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) MPI_Init(argc, argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &ranks_);
    shared_ = SharedExchange::create(comm_, rank_, ranks_);
  }
  ~MpiTransport() override {
    shared_.reset();
    MPI_Comm_free(&comm_);
    MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }

  // Ranks on one machine exchange through shared memory. Otherwise one
  // all-to-all of fixed blocks carries each rank's byte counts and its
  // words to reduce; the bytes follow in an all-to-all-v only when some
  // rank has any to send.
  std::vector<std::vector<std::uint8_t>> exchange(const std::vector<std::vector<std::uint8_t>>& to_rank,
                                                  std::uint64_t* mins, int count) override {
    if (shared_) return shared_->exchange(to_rank, mins, count);
    const int block = count + 2;  // bytes for that rank, bytes this rank sends in all, the words
    std::vector<std::uint64_t> head(static_cast<std::size_t>(block * ranks_)), got(head.size());
    std::uint64_t total = 0;
    for (const auto& bytes : to_rank) total += bytes.size();
    for (int r = 0; r < ranks_; ++r) {
      std::uint64_t* h = &head[static_cast<std::size_t>(block * r)];
      h[0] = to_rank[r].size();
      h[1] = total;
      std::copy(mins, mins + count, h + 2);
    }
    MPI_Alltoall(head.data(), block, MPI_UINT64_T, got.data(), block, MPI_UINT64_T, comm_);
    std::uint64_t all_bytes = 0;
    std::vector<int> recv_counts(ranks_);
    for (int r = 0; r < ranks_; ++r) {
      const std::uint64_t* g = &got[static_cast<std::size_t>(block * r)];
      recv_counts[r] = static_cast<int>(g[0]);
      all_bytes += g[1];
      for (int i = 0; i < count; ++i) mins[i] = std::min(mins[i], g[2 + i]);
    }
    std::vector<std::vector<std::uint8_t>> from(ranks_);
    if (all_bytes == 0) return from;
    std::vector<int> send_counts(ranks_), send_at(ranks_), recv_at(ranks_);
    for (int r = 0; r < ranks_; ++r) send_counts[r] = static_cast<int>(to_rank[r].size());
    std::exclusive_scan(send_counts.begin(), send_counts.end(), send_at.begin(), 0);
    std::exclusive_scan(recv_counts.begin(), recv_counts.end(), recv_at.begin(), 0);
    std::vector<std::uint8_t> send(static_cast<std::size_t>(send_at.back() + send_counts.back()));
    for (int r = 0; r < ranks_; ++r) std::copy(to_rank[r].begin(), to_rank[r].end(), send.begin() + send_at[r]);
    std::vector<std::uint8_t> recv(static_cast<std::size_t>(recv_at.back() + recv_counts.back()));
    MPI_Alltoallv(send.data(), send_counts.data(), send_at.data(), MPI_BYTE, recv.data(), recv_counts.data(),
                  recv_at.data(), MPI_BYTE, comm_);
    for (int r = 0; r < ranks_; ++r)
      from[r].assign(recv.begin() + recv_at[r], recv.begin() + recv_at[r] + recv_counts[r]);
    return from;
  }

  void all_reduce(std::uint64_t* values, int count, Op op) override {
    const MPI_Op mpi_op = op == Op::Sum ? MPI_SUM : op == Op::Min ? MPI_MIN : MPI_MAX;
    MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_UINT64_T, mpi_op, comm_);
  }

  // Each part lands in its own string (one message from each rank, taken
  // in rank order): rank 0 then holds every part once, not also the
  // contiguous buffer a gather-v would need.
  std::vector<std::string> gather(const std::string& mine) override {
    const int size = static_cast<int>(mine.size());
    std::vector<int> sizes(rank_ == 0 ? ranks_ : 0);
    MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, comm_);
    if (rank_ != 0) {
      MPI_Send(mine.data(), size, MPI_BYTE, 0, kGatherTag, comm_);
      return {};
    }
    std::vector<std::string> parts(ranks_);
    parts[0] = mine;
    for (int r = 1; r < ranks_; ++r) {
      parts[r].resize(static_cast<std::size_t>(sizes[r]));
      MPI_Recv(parts[r].data(), sizes[r], MPI_BYTE, r, kGatherTag, comm_, MPI_STATUS_IGNORE);
    }
    return parts;
  }

  [[noreturn]] void abort(int exit_code) override {
    MPI_Abort(comm_, exit_code);
    std::abort();
  }

 private:
  static constexpr int kGatherTag = 1;  // the only point-to-point messages on comm_
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int ranks_ = 1;
  std::unique_ptr<SharedExchange> shared_;
};

}  // namespace

}  // namespace nicsim

// The plug-in's one entry point (sim/cli/mpi_engine.cc loads it).
extern "C" nicsim::RankTransport* nicsim_mpi_transport(int* argc, char*** argv) {
  return new nicsim::MpiTransport(argc, argv);
}
