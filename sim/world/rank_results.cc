// Merging a run's results from the processes it ran in. A process builds
// only its blocks' devices and stands for the others by their names and
// port numbers (fabric::RemoteDevice), so each figure comes from the process that ran
// its device, and histograms and counters add up. A device's statistics
// are registered where it runs, numbered by device (StatsRegistry::
// set_device): rank 0 places the others' by that number. A process sends
// only the programs and links it ran (an end of), so a rank's part shrinks
// with the rank count.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <type_traits>

#include "core/sim.h"
#include "fsm/fsm.h"
#include "trace/stats.h"
#include "world/report.h"

namespace nicsim {

namespace {

// A rank's part is written straight into the string it is gathered in,
// once: the results of a large fabric are tens of megabytes.
class PartWriter {
 public:
  PartWriter() = default;
  explicit PartWriter(std::size_t size) { bytes_.reserve(size); }
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void put_text(const std::string& s) {
    put(static_cast<std::uint64_t>(s.size()));
    bytes_.append(s);
  }
  void put_message(const google::protobuf::Message& m) {
    const std::size_t size = m.ByteSizeLong();
    put(static_cast<std::uint64_t>(size));
    const std::size_t at = bytes_.size();
    bytes_.resize(at + size);
    if (!m.SerializeToArray(bytes_.data() + at, static_cast<int>(size)))
      throw std::runtime_error("this rank's results do not serialise");
  }
  void put_histogram(const Histogram& h) {
    const std::vector<std::uint64_t> words = h.to_words();
    put(static_cast<std::uint64_t>(words.size()));
    bytes_.append(reinterpret_cast<const char*>(words.data()), words.size() * sizeof(std::uint64_t));
  }
  void put_bytes(const std::string& s) { bytes_.append(s); }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

std::string get_text(ByteReader& in) {
  std::string s(in.get<std::uint64_t>(), '\0');
  in.get_bytes(s.data(), s.size());
  return s;
}

Histogram get_histogram(ByteReader& in) {
  std::vector<std::uint64_t> words(in.get<std::uint64_t>());
  in.get_bytes(words.data(), words.size() * sizeof(std::uint64_t));
  return Histogram::from_words(words.data(), words.size());
}

// This rank's part: its own Results (CollectScope::OwnPart); the numbers
// of its statistics (in its Results' order); each histogram it kept, with its number and names; its
// raw NICs' latencies. Written into a string of its final size, so that it
// is never copied while it grows.
std::string rank_part(World& world, const RunStatus& status) {
  PartWriter tail;
  const StatsRegistry& stats = Sim::get().stats();
  tail.put(static_cast<std::uint64_t>(stats.scalars().size()));
  for (const auto& s : stats.scalars()) tail.put(s.seq);
  tail.put(static_cast<std::uint64_t>(stats.histograms().size()));
  for (const auto& h : stats.histograms()) {
    tail.put(h.seq);
    tail.put_text(h.object);
    tail.put_text(h.name);
    tail.put_text(h.unit);
    tail.put_histogram(*h.histogram);
  }
  tail.put_histogram(raw_latency(world));
  std::string rest = tail.take();
  const results::Results mine = collect_results(world, status, nullptr, CollectScope::OwnPart);
  PartWriter out(sizeof(std::uint64_t) + mine.ByteSizeLong() + rest.size());
  out.put_message(mine);
  out.put_bytes(rest);
  return out.take();
}

// Another rank's part as rank 0 reads it.
struct Part {
  results::Results results;
  std::vector<std::uint64_t> stat_seqs;  // by results.stats() index
};

// Reads a part: merges its histograms into this process's registry (taking
// in those only it kept) and its raw NICs' latencies into `raw`.
Part absorb_part(const std::string& bytes, int rank, Histogram& raw) {
  ByteReader in(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  Part part;
  if (!part.results.ParseFromString(get_text(in)))
    throw std::runtime_error(fmt::format("rank {}: its results do not parse", rank));
  StatsRegistry& stats = Sim::get().stats();
  part.stat_seqs.resize(in.get<std::uint64_t>());
  for (std::uint64_t& seq : part.stat_seqs) seq = in.get<std::uint64_t>();
  if (part.stat_seqs.size() != static_cast<std::size_t>(part.results.stats_size()))
    throw std::runtime_error(fmt::format("rank {}: its statistics do not match their numbers", rank));
  for (std::uint64_t n = in.get<std::uint64_t>(); n > 0; --n) {
    StatsRegistry::Hist h;
    h.seq = in.get<std::uint64_t>();
    h.object = get_text(in);
    h.name = get_text(in);
    h.unit = get_text(in);
    Histogram words = get_histogram(in);
    if (Histogram* mine = stats.find_histogram(h.seq)) {
      mine->merge(words);
      continue;
    }
    h.histogram = std::make_shared<Histogram>(std::move(words));
    stats.adopt_histogram(std::move(h));
  }
  raw.merge(get_histogram(in));
  return part;
}

void add_direction(results::LinkDirection& into, const results::LinkDirection& d) {
  into.set_packets(into.packets() + d.packets());
  into.set_bytes(into.bytes() + d.bytes());
  into.set_utilisation(into.utilisation() + d.utilisation());
  into.set_drops_link_down(into.drops_link_down() + d.drops_link_down());
  into.set_drops_injected(into.drops_injected() + d.drops_injected());
  into.set_bit_errors(into.bit_errors() + d.bit_errors());
  into.set_credit_stalls(into.credit_stalls() + d.credit_stalls());
}

// Who ran the objects results name.
struct Owners {
  World& world;
  std::map<std::string, std::uint32_t, std::less<>> device_by_name;
  explicit Owners(World& w) : world(w) {
    for (std::uint32_t i = 0; i < w.device_names().size(); ++i) device_by_name.emplace(w.device_names()[i], i);
  }
  int rank_of_device(std::uint32_t id) const {
    return world.exchange()->rank_of_block().at(world.partition().device_block.at(id));
  }
  // A statistic's object is its device's name, or that name and a dot and
  // more ("h0.bus"); -1 when it names no device.
  int rank_of_object(const std::string& object) const {
    auto it = device_by_name.find(object.substr(0, object.find('.')));
    return it == device_by_name.end() ? -1 : rank_of_device(it->second);
  }
};

// Statistics by registration number: rank 0's own, then each part's; one
// that several ranks kept is its device's rank's, or their sum when it
// names no device.
void merge_stats(results::Results& all, const std::vector<Part>& parts, const Owners& owners) {
  std::map<std::uint64_t, results::Value> by_seq;
  const auto& mine = Sim::get().stats().scalars();
  for (int i = 0; i < all.stats_size(); ++i) by_seq.emplace(mine.at(static_cast<std::size_t>(i)).seq, all.stats(i));
  for (std::size_t r = 0; r < parts.size(); ++r) {
    const int rank = static_cast<int>(r + 1);
    const Part& part = parts[r];
    for (int i = 0; i < part.results.stats_size(); ++i) {
      const results::Value& v = part.results.stats(i);
      auto [it, fresh] = by_seq.emplace(part.stat_seqs[static_cast<std::size_t>(i)], v);
      if (fresh) continue;
      if (it->second.object() != v.object() || it->second.name() != v.name())
        throw std::runtime_error(fmt::format("rank {}: its statistic {}.{} has the number of {}.{} on another rank",
                                             rank, v.object(), v.name(), it->second.object(), it->second.name()));
      const int owner = owners.rank_of_object(v.object());
      if (owner == rank)
        it->second.set_value(v.value());
      else if (owner < 0)
        it->second.set_value(it->second.value() + v.value());
    }
  }
  all.clear_stats();
  for (auto& [seq, v] : by_seq) *all.add_stats() = std::move(v);
}

// A part lists the programs of its rank's nodes and the links with an end
// on its rank's devices, in the run's order.
void merge_into(results::Results& all, const results::Results& part, int rank, const Owners& owners) {
  World& world = owners.world;
  all.set_events(all.events() + part.events());
  all.set_packet_hops(all.packet_hops() + part.packet_hops());
  all.set_mgmt_messages(all.mgmt_messages() + part.mgmt_messages());
  int next = 0;
  for (int i = 0; i < all.programs_size(); ++i)
    if (owners.rank_of_device(world.programs().at(static_cast<std::size_t>(i))->node().id()) == rank) {
      if (next == part.programs_size()) throw std::runtime_error(fmt::format("rank {} ran fewer programs", rank));
      *all.mutable_programs(i) = part.programs(next++);
    }
  if (next != part.programs_size()) throw std::runtime_error(fmt::format("rank {} ran other programs", rank));
  next = 0;
  for (int i = 0; i < all.links_size(); ++i) {
    const auto [a, b] = world.link_ends(static_cast<std::uint32_t>(i));
    const bool first_end = owners.rank_of_device(a) == rank;
    if (!first_end && owners.rank_of_device(b) != rank) continue;
    if (next == part.links_size()) throw std::runtime_error(fmt::format("rank {} reached fewer links", rank));
    const results::LinkResult& from = part.links(next++);
    results::LinkResult& l = *all.mutable_links(i);
    if (!l.has_a_to_b()) {
      // Rank 0 built no such link; the first rank that ran an end of it
      // gives what does not add up.
      l = from;
      continue;
    }
    add_direction(*l.mutable_a_to_b(), from.a_to_b());
    add_direction(*l.mutable_b_to_a(), from.b_to_a());
    // The link's state machine follows its first end.
    if (first_end) l.set_state(from.state());
  }
  if (next != part.links_size()) throw std::runtime_error(fmt::format("rank {} reached other links", rank));
  // Machines are declared when first used, so a process may lack some.
  for (const results::FsmCoverage& from : part.fsm()) {
    results::FsmCoverage* cov = nullptr;
    for (auto& c : *all.mutable_fsm())
      if (c.type() == from.type()) cov = &c;
    if (!cov) {
      *all.add_fsm() = from;
      continue;
    }
    std::uint32_t taken = 0;
    for (int t = 0; t < cov->transitions_size(); ++t) {
      auto& tr = *cov->mutable_transitions(t);
      tr.set_taken(tr.taken() + from.transitions(t).taken());
      taken += tr.taken() ? 1 : 0;
    }
    cov->set_taken(taken);
  }
  for (const auto& e : part.errors()) *all.add_errors() = e;
}

}  // namespace

results::Results collect_rank_results(World& world, const RunStatus& status) {
  BlockExchange* exchange = world.exchange();
  if (!exchange) return collect_results(world, status);
  if (exchange->rank() != 0) {
    (void)exchange->transport().gather(rank_part(world, status));
    return {};
  }
  // Rank 0's own part is what it collects below, once the others'
  // histograms are merged into its own.
  std::vector<std::string> bytes = exchange->transport().gather(std::string());
  std::vector<Part> others;
  Histogram raw_elsewhere;
  for (std::size_t r = 1; r < bytes.size(); ++r) {
    others.push_back(absorb_part(bytes[r], static_cast<int>(r), raw_elsewhere));
    std::string().swap(bytes[r]);
  }
  // Rank 0's own, with every histogram merged.
  results::Results all = collect_results(world, status, &raw_elsewhere);
  const Owners owners(world);
  for (std::size_t r = 0; r < others.size(); ++r) {
    merge_into(all, others[r].results, static_cast<int>(r + 1), owners);
  }
  merge_stats(all, others, owners);
  std::sort(all.mutable_fsm()->begin(), all.mutable_fsm()->end(),
            [](const auto& a, const auto& b) { return a.type() < b.type(); });
  sort_errors(all);
  return all;
}

std::vector<std::uint64_t> gather_peak_rss(World& world) {
  const std::uint64_t mine = peak_rss_bytes();
  BlockExchange* exchange = world.exchange();
  if (!exchange) return {mine};
  std::vector<std::uint64_t> all;
  for (const std::string& s : exchange->transport().gather(std::to_string(mine))) all.push_back(std::stoull(s));
  return all;
}

}  // namespace nicsim
