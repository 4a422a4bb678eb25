#include "core/block_exchange.h"

#include <fmt/format.h>

#include <algorithm>

namespace nicsim {

std::vector<std::string> gather_in_pieces(RankTransport& t, const std::string& mine, std::uint64_t piece) {
  std::uint64_t rounds = (mine.size() + piece - 1) / piece;
  t.all_reduce(&rounds, 1, RankTransport::Op::Max);
  if (rounds == 1) return t.gather(mine);
  std::vector<std::string> all(t.rank() == 0 ? static_cast<std::size_t>(t.ranks()) : 0);
  for (std::uint64_t r = 0; r < rounds; ++r) {
    std::vector<std::string> parts = t.gather(mine.substr(std::min<std::uint64_t>(r * piece, mine.size()), piece));
    for (std::size_t i = 0; i < parts.size() && i < all.size(); ++i) {
      if (r == 0)
        all[i] = std::move(parts[i]);
      else
        all[i] += parts[i];
    }
  }
  return all;
}

BlockExchange::BlockExchange(RankTransport& transport, std::vector<int> rank_of_block)
    : transport_(transport), rank_of_block_(std::move(rank_of_block)), outbox_(transport.ranks()) {}

void BlockExchange::register_kind(const CrossEventKind& kind) {
  for (const CrossEventKind& k : kinds_)
    if (k.fn == kind.fn) throw std::logic_error(fmt::format("block exchange: kind {} registered twice", kind.name));
  kinds_.push_back(kind);
}

// On the wire, one event: time, sequence, the block it runs as, the kind's
// index, then what the kind wrote.
void BlockExchange::send(const Calendar::Place& place, std::uint32_t block, EventFn fn, void* obj, std::uint64_t arg) {
  std::uint16_t index = 0;
  while (index < kinds_.size() && kinds_[index].fn != fn) ++index;
  if (index == kinds_.size())
    throw std::logic_error(fmt::format("block exchange: an event for block {} in rank {} is of no registered kind",
                                       block, rank_of_block_.at(block)));
  const CrossEventKind& kind = kinds_[index];
  ByteWriter out(outbox_.at(static_cast<std::size_t>(rank_of_block_.at(block))));
  out.put(place.at);
  out.put(place.seq);
  out.put(block);
  out.put(index);
  kind.encode(kind.ctx, obj, arg, out);
  ++sent_;
  ++outgoing_;
  outgoing_earliest_ = std::min(outgoing_earliest_, place.at);
}

std::uint64_t BlockExchange::exchange(Calendar& calendar, std::uint64_t* mins, int count) {
  const std::vector<std::vector<std::uint8_t>> received = transport_.exchange(outbox_, mins, count);
  for (auto& box : outbox_) box.clear();
  outgoing_ = 0;
  outgoing_earliest_ = kTickMax;
  std::uint64_t events = 0;
  for (const auto& bytes : received) {
    ByteReader in(bytes.data(), bytes.size());
    while (!in.done()) {
      Calendar::Place place;
      place.at = in.get<Tick>();
      place.seq = in.get<std::uint64_t>();
      const auto block = in.get<std::uint32_t>();
      const auto index = in.get<std::uint16_t>();
      if (index >= kinds_.size() || !local(block))
        throw std::runtime_error(
            fmt::format("block exchange: rank {} got an event of kind {} for block {}", rank(), index, block));
      const CrossEventKind& kind = kinds_[index];
      void* obj = nullptr;
      std::uint64_t arg = 0;
      kind.decode(kind.ctx, in, obj, arg);
      calendar.at_place(place, block, kind.fn, obj, arg);
      ++events;
    }
  }
  return events;
}

}  // namespace nicsim
