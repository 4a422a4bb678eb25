#include "world/report.h"

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/sim.h"
#include "fabric/raw_nic.h"
#include "fsm/fsm.h"
#include "trace/stats.h"

namespace nicsim {

namespace {

results::LinkDirection direction(const fabric::Port& from, Tick sim_time) {
  results::LinkDirection d;
  const auto& s = from.stats();
  d.set_from(from.path());
  d.set_to(from.peer()->path());
  d.set_packets(s.tx_packets);
  d.set_bytes(s.tx_bytes);
  d.set_utilisation(sim_time ? static_cast<double>(s.tx_busy) / static_cast<double>(sim_time) : 0.0);
  d.set_drops_link_down(s.drops_link_down);
  d.set_drops_injected(s.drops_injected);
  d.set_bit_errors(s.bit_errors);
  d.set_credit_stalls(s.credit_stalls);
  return d;
}

void fill(results::Distribution* d, const std::string& object, const std::string& name, const std::string& unit,
          const Histogram& h) {
  d->set_object(object);
  d->set_name(name);
  d->set_unit(unit);
  d->set_count(h.count());
  d->set_min(h.min());
  d->set_p50(h.percentile(50));
  d->set_p90(h.percentile(90));
  d->set_p99(h.percentile(99));
  d->set_p999(h.percentile(99.9));
  d->set_max(h.max());
  d->set_mean(h.mean());
}

}  // namespace

Histogram raw_latency(World& world) {
  Histogram all;
  for (std::uint32_t i = 0; i < world.num_nodes(); ++i)
    if (auto* raw = world.node(i).nic_as<fabric::RawNic>()) all.merge(raw->latency());
  return all;
}

namespace {

void add_distributions(results::Results& r, World& world, const Histogram* raw_elsewhere) {
  Histogram all_raw = raw_latency(world);
  if (raw_elsewhere) all_raw.merge(*raw_elsewhere);
  if (all_raw.count()) fill(r.add_distributions(), "fabric", "raw_packet_latency", "ps", all_raw);
  for (auto& h : Sim::get().stats().histograms())
    if (h.histogram->count()) fill(r.add_distributions(), h.object, h.name, h.unit, *h.histogram);
}

}  // namespace

std::uint64_t peak_rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  std::uint64_t kb = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmHWM: %lu kB", &kb) == 1) break;
  std::fclose(f);
  return kb * 1024;
}

void sort_errors(results::Results& r) {
  std::stable_sort(r.mutable_errors()->begin(), r.mutable_errors()->end(), [](const auto& a, const auto& b) {
    return a.time_ps() != b.time_ps() ? a.time_ps() < b.time_ps() : a.where() < b.where();
  });
}

results::Results collect_results(World& world, const RunStatus& status, const Histogram* raw_elsewhere,
                                 CollectScope scope) {
  const bool own_part = scope == CollectScope::OwnPart;
  Sim& sim = Sim::get();
  results::Results r;
  const Scenario& sc = world.scenario();
  r.set_scenario(sc.name);
  r.set_file(sc.file);
  r.set_seed(sim.seed());
  r.set_sim_time_ps(status.end_time);
  r.set_status(status.ok ? "ok" : "failed");
  r.set_events(sim.calendar().events_fired());
  r.set_packet_hops(world.fabric().packet_hops());
  r.set_mgmt_messages(world.mgmt().messages());
  if (const PartitionPlan& plan = world.partition(); plan.blocks > 1) {
    results::PartitionResult& p = *r.mutable_partition();
    p.set_blocks(plan.blocks);
    p.set_cut_links(static_cast<std::uint32_t>(plan.cut_links.size()));
    p.set_lookahead_ps(plan.lookahead);
    p.set_imbalance(plan.imbalance());
  }
  r.set_fingerprint(world.fingerprint());
  for (auto& p : world.programs()) {
    if (own_part && !world.runs_device(p->node().id())) continue;
    auto* pr = r.add_programs();
    pr->set_program(p->info().name);
    pr->set_workload(p->workload_index());
    pr->set_node(p->node().name());
    pr->set_rank(p->rank());
    pr->set_state(fsm_name(p->state()));
    pr->set_exit_code(p->exit_code());
    pr->set_failure(p->failure());
    pr->set_daemon(p->daemon);
    for (auto& v : p->results()) {
      auto* rv = pr->add_results();
      rv->set_object(p->node().name());
      rv->set_name(v.name);
      rv->set_unit(v.unit);
      rv->set_value(v.value);
    }
  }
  for (std::uint32_t i = 0; i < world.scenario().links.size(); ++i) {
    const fabric::Link* l = world.link(i);
    if (!l) {
      // Rank 0 of a run over several processes: another rank ran both ends
      // and fills the rest in (collect_rank_results).
      if (!own_part) r.add_links()->set_name(world.scenario().links[i].name);
      continue;
    }
    auto* lr = r.add_links();
    lr->set_name(l->name());
    lr->set_bandwidth_bps(l->bits_per_second());
    lr->set_delay_ps(l->delay());
    lr->set_state(l->up() ? "Up" : "Down");
    *lr->mutable_a_to_b() = direction(l->a(), status.end_time);
    *lr->mutable_b_to_a() = direction(l->b(), status.end_time);
  }
  if (!own_part) add_distributions(r, world, raw_elsewhere);
  for (auto& s : sim.stats().scalars()) {
    auto* v = r.add_stats();
    v->set_object(s.object);
    v->set_name(s.name);
    v->set_unit(s.unit);
    v->set_value(s.read());
  }
  for (auto& c : sim.fsm().coverage()) {
    auto* f = r.add_fsm();
    f->set_type(c.type->name());
    f->set_declared(static_cast<std::uint32_t>(c.taken.size()));
    std::uint32_t taken = 0;
    for (std::size_t i = 0; i < c.taken.size(); ++i) {
      const FsmRow& t = c.type->rows()[i];
      auto* tc = f->add_transitions();
      tc->set_from(c.type->state_name(t.from));
      tc->set_event(c.type->event_name(t.event));
      tc->set_to(c.type->state_name(t.to));
      tc->set_name(t.action);
      tc->set_taken(c.taken[i]);
      taken += c.taken[i] ? 1 : 0;
    }
    f->set_taken(taken);
  }
  // A run split into blocks lists its machines by name: which block first
  // used one must not decide where it is listed.
  if (world.partition().blocks > 1)
    std::sort(r.mutable_fsm()->begin(), r.mutable_fsm()->end(),
              [](const auto& a, const auto& b) { return a.type() < b.type(); });
  for (auto& e : sim.errors().all()) {
    auto* er = r.add_errors();
    er->set_time_ps(e.time);
    er->set_where(e.where);
    er->set_message(e.message);
  }
  // And its errors by time and place, as those of several processes merge.
  if (world.partition().blocks > 1) sort_errors(r);
  return r;
}

results::WallClock collect_wall(World& world, double wall_seconds) {
  results::WallClock w;
  const double events = static_cast<double>(Sim::get().calendar().events_fired());
  const double hops = static_cast<double>(world.fabric().packet_hops());
  w.set_wall_seconds(wall_seconds);
  if (wall_seconds > 0) {
    w.set_events_per_second(events / wall_seconds);
    w.set_packet_hops_per_second(hops / wall_seconds);
    w.set_sim_seconds_per_wall_second(static_cast<double>(now()) / 1e12 / wall_seconds);
  }
  if (hops > 0) w.set_wall_ns_per_packet_hop(wall_seconds * 1e9 / hops);
  w.set_peak_rss_bytes(peak_rss_bytes());
  if (world.num_nodes())
    w.set_rss_bytes_per_node(static_cast<double>(w.peak_rss_bytes()) / static_cast<double>(world.num_nodes()));
  return w;
}

namespace {

google::protobuf::util::JsonPrintOptions json_options() {
  google::protobuf::util::JsonPrintOptions opts;
  opts.add_whitespace = true;
  opts.preserve_proto_field_names = true;
  opts.always_print_primitive_fields = true;
  return opts;
}

// One element of a top-level array, as the whole document's converter
// writes it: each line indented by two more spaces (it prints one space per
// level), and no newline at its end.
void write_element(std::ostream& out, const google::protobuf::Message& element) {
  std::string text;
  (void)google::protobuf::util::MessageToJsonString(element, &text, json_options());
  while (!text.empty() && text.back() == '\n') text.pop_back();
  std::size_t from = 0;
  while (from <= text.size()) {
    const std::size_t end = std::min(text.find('\n', from), text.size());
    out << "  ";
    out.write(text.data() + from, static_cast<std::streamsize>(end - from));
    if (end == text.size()) break;
    out << '\n';
    from = end + 1;
  }
}

}  // namespace

std::string to_json(const google::protobuf::Message& m) {
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(m, &out, json_options());
  return out;
}

void write_json(std::ostream& out, google::protobuf::Message& m) {
  const google::protobuf::Descriptor* type = m.GetDescriptor();
  const google::protobuf::Reflection* refl = m.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> arrays;
  for (int i = 0; i < type->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = type->field(i);
    if (f->is_repeated() && !f->is_map() && f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE &&
        refl->FieldSize(m, f) > 0)
      arrays.push_back(f);
  }
  std::unique_ptr<google::protobuf::Message> aside(m.New());
  refl->SwapFields(&m, aside.get(), arrays);
  const std::string skeleton = to_json(m);
  refl->SwapFields(&m, aside.get(), arrays);
  // The skeleton has each moved array as `"name": []` at the top level, in
  // field order; the elements go in their place.
  std::size_t from = 0;
  for (const google::protobuf::FieldDescriptor* f : arrays) {
    const std::string empty = fmt::format("\n \"{}\": []", f->name());
    const std::size_t at = skeleton.find(empty, from);
    if (at == std::string::npos)
      throw std::logic_error(fmt::format("write_json: no empty {} in the skeleton", f->name()));
    const std::size_t open = at + empty.size() - 1;  // the ']'
    out.write(skeleton.data() + from, static_cast<std::streamsize>(open - from));
    for (int i = 0; i < refl->FieldSize(m, f); ++i) {
      out << (i ? ",\n" : "\n");
      write_element(out, refl->GetRepeatedMessage(m, f, i));
    }
    out << "\n ";
    from = open;
  }
  out.write(skeleton.data() + from, static_cast<std::streamsize>(skeleton.size() - from));
}

void print_summary(std::ostream& out, const results::Results& r, const results::WallClock* wall) {
  out << fmt::format("nicsim: scenario '{}' seed {}: {} after {} simulated\n", r.scenario(), r.seed(), r.status(),
                     format_time(r.sim_time_ps()));
  if (r.has_partition())
    out << fmt::format("partition: {} blocks, {} cut links, lookahead {}, imbalance {:.2f}\n", r.partition().blocks(),
                       r.partition().cut_links(), format_time(r.partition().lookahead_ps()), r.partition().imbalance());
  // Programs: one line per (workload, program) with its states, then each
  // result as min / mean / max over the instances.
  std::map<std::uint32_t, std::vector<const results::ProgramResult*>> by_workload;
  for (auto& p : r.programs()) by_workload[p.workload()].push_back(&p);
  for (auto& [w, list] : by_workload) {
    std::map<std::string, int> states;
    for (auto* p : list) ++states[p->state()];
    std::string st;
    for (auto& [s, n] : states) st += fmt::format("{}{} {}", st.empty() ? "" : ", ", n, s);
    if (list.front()->daemon()) st += " (daemon: the run does not wait for it)";
    out << fmt::format("workload {} {} on {} node(s): {}\n", w, list.front()->program(), list.size(), st);
    for (auto* p : list)
      if (!p->failure().empty()) out << fmt::format("  {} failed: {}\n", p->node(), p->failure());
    std::map<std::string, std::vector<std::pair<double, std::string>>> values;
    std::vector<std::string> order;
    for (auto* p : list)
      for (auto& v : p->results()) {
        if (!values.count(v.name())) order.push_back(v.name());
        values[v.name()].push_back({v.value(), v.unit()});
      }
    for (auto& name : order) {
      auto& vs = values[name];
      double lo = vs[0].first, hi = vs[0].first, sum = 0;
      for (auto& [v, _] : vs) lo = std::min(lo, v), hi = std::max(hi, v), sum += v;
      if (vs.size() == 1)
        out << fmt::format("  {:<18} {:.6g} {}\n", name, lo, vs[0].second);
      else
        out << fmt::format("  {:<18} min {:.6g}  mean {:.6g}  max {:.6g} {}\n", name, lo,
                           sum / static_cast<double>(vs.size()), hi, vs[0].second);
    }
  }
  for (auto& d : r.distributions()) {
    if (d.object() != "fabric") continue;
    auto t = [](std::uint64_t ps) { return format_time(ps); };
    out << fmt::format("latency {} (n={}): p50 {}  p90 {}  p99 {}  p99.9 {}  max {}\n", d.name(), d.count(), t(d.p50()),
                       t(d.p90()), t(d.p99()), t(d.p999()), t(d.max()));
  }
  // Links: all of them when few, else the busiest directions.
  struct Dir {
    std::string label;
    double util;
  };
  std::vector<Dir> dirs;
  double total = 0;
  for (auto& l : r.links())
    for (auto* d : {&l.a_to_b(), &l.b_to_a()}) {
      dirs.push_back({fmt::format("{} -> {}", d->from(), d->to()), d->utilisation()});
      total += d->utilisation();
    }
  if (!dirs.empty()) {
    const std::size_t show = dirs.size() <= 16 ? dirs.size() : 10;
    if (dirs.size() > 16)
      std::stable_sort(dirs.begin(), dirs.end(), [](const Dir& a, const Dir& b) { return a.util > b.util; });
    out << fmt::format("link utilisation over {} ({} directions, mean {:.1f}%){}:\n", format_time(r.sim_time_ps()),
                       dirs.size(), 100.0 * total / static_cast<double>(dirs.size()),
                       dirs.size() > 16 ? ", busiest 10" : "");
    for (std::size_t i = 0; i < show; ++i)
      out << fmt::format("  {:<36} {:5.1f}%\n", dirs[i].label, 100.0 * dirs[i].util);
  }
  std::string cov;
  for (auto& f : r.fsm()) cov += fmt::format("{}{} {}/{}", cov.empty() ? "" : ", ", f.type(), f.taken(), f.declared());
  if (!cov.empty()) out << "fsm transitions taken/declared: " << cov << "\n";
  if (r.errors_size()) {
    out << fmt::format("{} error(s):\n", r.errors_size());
    for (int i = 0; i < std::min(r.errors_size(), 10); ++i)
      out << fmt::format("  {} {}: {}\n", format_time(r.errors(i).time_ps()), r.errors(i).where(),
                         r.errors(i).message());
  }
  if (wall)
    out << fmt::format("wall {:.3f} s: {:.3g} events/s, {:.3g} packet-hops/s, peak RSS {}\n", wall->wall_seconds(),
                       wall->events_per_second(), wall->packet_hops_per_second(), format_size(wall->peak_rss_bytes()));
}

}  // namespace nicsim
