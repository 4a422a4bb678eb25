// Events that cross from a block this process runs to a block another
// process runs (a run over several processes, docs/partition.md).
//
// Within a process an event crosses blocks with Calendar::at_on, and its
// callback names objects by pointer. Across processes the event travels as
// bytes: each kind of crossing event (a packet's arrival at a port, a
// credit's return, a management message's delivery) registers how to write
// what the other process needs and how to rebuild the callback's object
// and argument there. The event keeps its place (time and the scheduling
// block's sequence), so it fires where it would have in one process.
//
// Processes exchange what crossed at the end of each window. The transport
// (MPI, a plug-in: mpi/) only moves bytes and reduces counters.
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/calendar.h"

namespace nicsim {

// Little-endian-agnostic byte streams for one run's processes (all of one
// build on one kind of machine).
class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::uint8_t>& out) : out_(out) {}
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put_bytes(&v, sizeof v);
  }
  void put_bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
  }

 private:
  std::vector<std::uint8_t>& out_;
};

class ByteReader {
 public:
  ByteReader(const std::uint8_t* p, std::size_t n) : p_(p), end_(p + n) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    get_bytes(&v, sizeof v);
    return v;
  }
  void get_bytes(void* dst, std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) < n) throw std::runtime_error("block exchange: a message ends early");
    std::memcpy(dst, p_, n);
    p_ += n;
  }
  bool done() const { return p_ == end_; }

 private:
  const std::uint8_t* p_;
  const std::uint8_t* end_;
};

// How one kind of crossing event travels.
struct CrossEventKind {
  const char* name;
  EventFn fn;  // the callback at_on was given
  void* ctx;   // the registering object (a fabric, a management network)
  // Writes what rebuilds (obj, arg) in another process; the event's object
  // here may let go of what the event held (a packet goes back to its pool).
  void (*encode)(void* ctx, void* obj, std::uint64_t arg, ByteWriter& out);
  // Rebuilds (obj, arg) from what encode wrote.
  void (*decode)(void* ctx, ByteReader& in, void*& obj, std::uint64_t& arg);
};

// What moves bytes between the processes of a run, and reduces over them.
class RankTransport {
 public:
  virtual ~RankTransport() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  // Sends to_rank[r] to each rank r and returns what each rank sent this
  // one; `mins` (`count` words, as many in every rank) comes back with each
  // word the minimum over the ranks. A window's whole synchronisation: one
  // round when nothing crosses.
  virtual std::vector<std::vector<std::uint8_t>> exchange(const std::vector<std::vector<std::uint8_t>>& to_rank,
                                                          std::uint64_t* mins, int count) = 0;
  enum class Op { Sum, Min, Max };
  // Reduces `values` element by element over every rank; all get the result.
  virtual void all_reduce(std::uint64_t* values, int count, Op op) = 0;
  // Every rank's `mine`, at rank 0 (empty elsewhere).
  virtual std::vector<std::string> gather(const std::string& mine) = 0;
  // Ends every process of the run.
  [[noreturn]] virtual void abort(int exit_code) = 0;
};

// RankTransport::gather in pieces of at most `piece` bytes from each rank
// (one gather carries at most 2 GiB in all: MPI's counts are int), with
// each rank's pieces joined again at rank 0.
std::vector<std::string> gather_in_pieces(RankTransport& transport, const std::string& mine,
                                          std::uint64_t piece = std::uint64_t{1} << 29);

// This process's side: which blocks it runs, and the events waiting to
// cross to the others.
class BlockExchange {
 public:
  // Block b runs in rank_of_block[b]; the world's own block in rank 0.
  BlockExchange(RankTransport& transport, std::vector<int> rank_of_block);
  BlockExchange(const BlockExchange&) = delete;
  RankTransport& transport() { return transport_; }
  int rank() const { return transport_.rank(); }
  bool local(std::uint32_t block) const { return rank_of_block_.at(block) == transport_.rank(); }
  const std::vector<int>& rank_of_block() const { return rank_of_block_; }

  // Kinds register before the run, in the same order in every process.
  void register_kind(const CrossEventKind& kind);
  // From Calendar::at_on: an event for a block another rank runs.
  void send(const Calendar::Place& place, std::uint32_t block, EventFn fn, void* obj, std::uint64_t arg);
  // Delivers what waits to cross, schedules what arrived at its places, and
  // reduces `mins` over the ranks (RankTransport::exchange). Every rank
  // calls it at the same window end. Returns the events received.
  std::uint64_t exchange(Calendar& calendar, std::uint64_t* mins, int count);
  // Of the events waiting to cross: how many, and the earliest's time.
  std::uint64_t outgoing() const { return outgoing_; }
  Tick outgoing_earliest() const { return outgoing_earliest_; }
  std::uint64_t sent() const { return sent_; }

 private:
  RankTransport& transport_;
  std::vector<int> rank_of_block_;
  std::vector<CrossEventKind> kinds_;
  std::vector<std::vector<std::uint8_t>> outbox_;  // by destination rank
  std::uint64_t sent_ = 0;
  std::uint64_t outgoing_ = 0;
  Tick outgoing_earliest_ = kTickMax;
};

}  // namespace nicsim
