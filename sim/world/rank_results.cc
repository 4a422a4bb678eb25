// Merging a run's results from the processes it ran in. Every process
// builds the whole world but runs only its blocks' devices, so another
// device's counters there are zero and its programs never started: each
// figure comes from the process that ran its device, and histograms and
// counters add up.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/sim.h"
#include "fsm/fsm.h"
#include "trace/stats.h"
#include "world/report.h"

namespace nicsim {

namespace {

// This rank's part: its Results, then every registered histogram's words
// (registration is the same in every process).
std::string rank_part(const results::Results& mine) {
  std::vector<std::uint8_t> bytes;
  ByteWriter out(bytes);
  const std::string r = mine.SerializeAsString();
  out.put(static_cast<std::uint64_t>(r.size()));
  out.put_bytes(r.data(), r.size());
  const auto& hists = Sim::get().stats().histograms();
  out.put(static_cast<std::uint64_t>(hists.size()));
  for (const auto& h : hists) {
    const std::vector<std::uint64_t> words = h.histogram->to_words();
    out.put(static_cast<std::uint64_t>(words.size()));
    out.put_bytes(words.data(), words.size() * sizeof(std::uint64_t));
  }
  return std::string(bytes.begin(), bytes.end());
}

// Reads a part: merges its histograms into this process's and returns its
// Results.
results::Results absorb_part(const std::string& part, int rank) {
  ByteReader in(reinterpret_cast<const std::uint8_t*>(part.data()), part.size());
  std::string r(in.get<std::uint64_t>(), '\0');
  in.get_bytes(r.data(), r.size());
  results::Results res;
  if (!res.ParseFromString(r)) throw std::runtime_error(fmt::format("rank {}: its results do not parse", rank));
  const auto& hists = Sim::get().stats().histograms();
  if (in.get<std::uint64_t>() != hists.size())
    throw std::runtime_error(fmt::format("rank {} registered another set of histograms", rank));
  for (const auto& h : hists) {
    std::vector<std::uint64_t> words(in.get<std::uint64_t>());
    in.get_bytes(words.data(), words.size() * sizeof(std::uint64_t));
    h.histogram->merge(Histogram::from_words(words.data(), words.size()));
  }
  return res;
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

void merge_into(results::Results& all, const results::Results& part, int rank, const Owners& owners) {
  World& world = owners.world;
  all.set_events(all.events() + part.events());
  all.set_packet_hops(all.packet_hops() + part.packet_hops());
  all.set_mgmt_messages(all.mgmt_messages() + part.mgmt_messages());
  for (int i = 0; i < all.programs_size(); ++i)
    if (owners.rank_of_device(world.programs().at(static_cast<std::size_t>(i))->node().id()) == rank)
      *all.mutable_programs(i) = part.programs(i);
  for (int i = 0; i < all.links_size(); ++i) {
    results::LinkResult& l = *all.mutable_links(i);
    add_direction(*l.mutable_a_to_b(), part.links(i).a_to_b());
    add_direction(*l.mutable_b_to_a(), part.links(i).b_to_a());
    // The link's state machine follows its first end.
    if (owners.rank_of_device(world.link(static_cast<std::uint32_t>(i)).a().owner().device_id()) == rank)
      l.set_state(part.links(i).state());
  }
  for (int i = 0; i < all.stats_size(); ++i) {
    const int owner = owners.rank_of_object(all.stats(i).object());
    if (owner == rank)
      all.mutable_stats(i)->set_value(part.stats(i).value());
    else if (owner < 0)
      all.mutable_stats(i)->set_value(all.stats(i).value() + part.stats(i).value());
  }
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
    results::Results mine = collect_results(world, status);
    (void)exchange->transport().gather(rank_part(mine));
    return mine;
  }
  // Rank 0's own part is what it collects below, once the others'
  // histograms are merged into its own.
  const std::vector<std::string> parts = exchange->transport().gather(std::string());
  std::vector<results::Results> others;
  for (std::size_t r = 1; r < parts.size(); ++r) others.push_back(absorb_part(parts[r], static_cast<int>(r)));
  // Rank 0's own, with every histogram merged.
  results::Results all = collect_results(world, status);
  const Owners owners(world);
  for (std::size_t r = 0; r < others.size(); ++r) {
    const results::Results& part = others[r];
    if (part.programs_size() != all.programs_size() || part.links_size() != all.links_size() ||
        part.stats_size() != all.stats_size())
      throw std::runtime_error(fmt::format("rank {} built another world", r + 1));
    merge_into(all, part, static_cast<int>(r + 1), owners);
  }
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
