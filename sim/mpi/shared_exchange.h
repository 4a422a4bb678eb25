// A window's exchange through memory that ranks on one machine share: each
// rank writes its words and outgoing bytes into its own slot, raises its
// window count, and reads the others' slots once their counts reach the
// window. A window then costs a few cache-line transfers instead of an MPI
// collective's rounds (docs/partition.md has the figures).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace nicsim {

class SharedExchange {
 public:
  // nullptr when the ranks of `comm` are not all on one machine, or when
  // NICSIM_RANK_SYNC=mpi asks for MPI collectives only.
  static std::unique_ptr<SharedExchange> create(MPI_Comm comm, int rank, int ranks);
  ~SharedExchange();
  SharedExchange(const SharedExchange&) = delete;
  SharedExchange& operator=(const SharedExchange&) = delete;

  // As RankTransport::exchange (at most kMaxWords words). Bytes that do not
  // fit a slot go by MPI_Alltoallv that window, in every rank alike.
  std::vector<std::vector<std::uint8_t>> exchange(const std::vector<std::vector<std::uint8_t>>& to_rank,
                                                  std::uint64_t* mins, int count);

  static constexpr int kMaxWords = 8;
  // Outgoing bytes a rank's slot holds per window (all destinations);
  // NICSIM_RANK_SLOT_BYTES sets another size (tests use a small one so
  // that some windows go by MPI).
  static constexpr std::size_t kSlotBytes = std::size_t{2} << 20;

 private:
  SharedExchange(MPI_Comm comm, int rank, int ranks);
  // What a rank writes each window, in one of its two slots (the window's
  // parity: a rank fills the next window's slot while a slower one still
  // reads this window's).
  struct SlotHeader {
    std::uint64_t words[kMaxWords];
    std::uint64_t fits;  // 1: the bytes are in the slot
  };
  std::uint64_t* count_of(int rank) const;     // the rank's windows done, own cache line
  std::uint32_t* sleepers_of(int rank) const;  // ranks asleep on that count, next to it
  SlotHeader* header(int rank, int parity) const;
  std::uint64_t* bytes_to(int rank, int parity) const;  // [ranks]: bytes for each rank
  std::uint8_t* data(int rank, int parity) const;
  void wait_for(int rank) const;
  void raise_count();  // this window's slot is written: wakes the rank's sleepers

  MPI_Comm comm_;
  MPI_Win win_ = MPI_WIN_NULL;
  int rank_;
  int ranks_;
  bool oversubscribed_;
  std::uint8_t* base_ = nullptr;
  std::size_t slot_bytes_ = kSlotBytes;
  std::size_t header_size_ = 0;
  std::size_t slot_size_ = 0;
  std::uint64_t window_ = 0;
};

}  // namespace nicsim
