#include "scenario/loader.h"

#include <google/protobuf/io/tokenizer.h>
#include <fmt/format.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "scenario.pb.h"
#include "scenario/locator.h"
#include "scenario/parse_errors.h"
#include "scenario/ipv4_spec.h"
#include "scenario/schema.h"
#include "scenario/shapes.h"
#include "trace/trace.h"
#include "world/network_kinds.h"

namespace nicsim {

std::string SourceLoc::str() const {
  if (line <= 0) return file;
  if (column <= 0) return file + ":" + std::to_string(line);
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

ScenarioError::ScenarioError(const SourceLoc& loc, const std::string& message)
    : std::runtime_error(loc.str() + ": " + message), loc_(loc), message_(message) {}

namespace {

template <typename Spec>
std::optional<std::uint32_t> find_by_name(const std::vector<Spec>& items, std::string_view name) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].name == name) return static_cast<std::uint32_t>(i);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::uint32_t> Scenario::node_index(std::string_view name) const { return find_by_name(nodes, name); }
std::optional<std::uint32_t> Scenario::switch_index(std::string_view name) const {
  return find_by_name(switches, name);
}
std::optional<std::uint32_t> Scenario::link_index(std::string_view name) const { return find_by_name(links, name); }

namespace {

namespace pb = nicsim::scenario;
using google::protobuf::RepeatedPtrField;
using google::protobuf::TextFormat;
namespace gp = google::protobuf;

// Keeps the parser's first complaint; later ones are usually consequences.
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    if (has_error) return;
    has_error = true;
    this->line = line;
    this->column = column;
    this->message = message;
  }
  bool has_error = false;
  int line = 0;
  int column = 0;
  std::string message;
};

// Ports beyond this are a typo, not a machine; the cap keeps per-port
// bookkeeping bounded whatever a parameter scope allows.
constexpr std::uint64_t kMaxPorts = 65535;

struct Device {
  bool is_switch = false;
  std::uint32_t index = 0;
};

struct NodeParams {
  std::string nic;
  ParamSet host, bus, nic_params;
  std::uint32_t ports = 1;
};

struct PendingEnd {
  Device device;
  std::uint32_t port = 0;  // 0: the lowest free port of a switch
  SourceLoc loc;
};

struct PendingLink {
  std::string name;  // empty until resolved, unless given
  bool named = false;
  PendingEnd a, b;
  ParamSet params;
  SourceLoc loc, name_loc;
};

bool valid_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

class Loader {
 public:
  Loader(std::string file, const ProgramLookup& programs, const LoadLimits& limits)
      : file_(std::move(file)), programs_(programs), limits_(limits) {}

  Scenario load(const std::string& text);

 private:
  [[noreturn]] void fail(const SourceLoc& loc, const std::string& message) const { throw ScenarioError(loc, message); }
  const ParamScope& scope(const std::string& name);
  void apply_params(ParamSet& set, const RepeatedPtrField<pb::Param>& list, const Locator& parent, const char* field,
                    std::set<std::string>* seen);
  void apply_one(ParamSet& set, const std::string& key, const std::string& value, const SourceLoc& key_loc,
                 const SourceLoc& value_loc, std::set<std::string>* seen);
  NodeParams node_params(const std::string& nic, const SourceLoc& nic_loc, const RepeatedPtrField<pb::Param>& list,
                         const Locator& parent, const char* field);
  void apply_ports_field(const pb::Node& n, NodeParams& p, const Locator& where);
  void check_name(const std::string& name, const char* what, const SourceLoc& loc) const;
  void add_device(const std::string& name, Device d, const SourceLoc& loc);
  void add_node(const std::string& name, const NodeParams& p, const SourceLoc& loc);
  void add_switch(const std::string& name, const ParamSet& params, const SourceLoc& loc, const SwitchKind& kind);
  const SwitchKind& switch_kind(const std::string& name, const SourceLoc& loc);
  void check_kind_keys(const SwitchKind& kind, const RepeatedPtrField<pb::Param>& list, const Locator& parent,
                       const char* field);
  std::uint32_t device_ports(Device d) const;
  std::string device_label(Device d) const;

  void expand_topology(const pb::Topology& t, const gp::Message& file_topology, const Locator& where);
  const TopologyHelper* topology_helper(const gp::Message& file_topology, const gp::Message** shape) const;
  void run_rules(ScenarioRule::Stage stage, const gp::Message& file, const Locator& root);
  void explicit_links(const pb::Scenario& msg, const Locator& root, const ParamSet& defaults);
  PendingEnd resolve_end(const std::string& text, const SourceLoc& loc);
  void place_links();
  std::vector<std::uint32_t> match_nodes(const RepeatedPtrField<std::string>& patterns, const Locator& parent,
                                         const char* field, const char* what);
  void workloads(const pb::Scenario& msg, const Locator& root);
  void check_args(const WorkloadSpec& spec, const Locator& where);
  void faults(const pb::Scenario& msg, const Locator& root);
  void switch_fault(const pb::Fault& f, const Locator& where, FaultSpec spec);
  void flaps(const pb::LinkFlaps& f, const Locator& where, FaultSpec& spec);
  void multicast(const pb::Scenario& msg, const Locator& root);
  void outputs(const pb::Scenario& msg, const Locator& root);
  void partition(const pb::Scenario& msg, const Locator& root);
  std::uint32_t device_id(const Device& d) const {
    return d.is_switch ? static_cast<std::uint32_t>(sc_.nodes.size()) + d.index : d.index;
  }
  std::string link_pcap_format(const LinkSpec& l) const;

  std::string file_;
  const ProgramLookup& programs_;
  LoadLimits limits_;
  Scenario sc_;
  std::map<std::string, Device, std::less<>> devices_;
  std::vector<PendingLink> pending_;
};

const ParamScope& Loader::scope(const std::string& name) {
  if (const ParamScope* s = ParamRegistry::instance().find(name)) return *s;
  // A scope nobody registered behaves as one with no parameters, so every
  // key in it is reported as unknown instead of crashing the loader. These
  // live for the whole process because the returned ParamSets point at them.
  static std::map<std::string, ParamScope, std::less<>> missing;
  ParamScope& empty = missing[name];
  empty.name = name;
  return empty;
}

void Loader::apply_one(ParamSet& set, const std::string& key, const std::string& value, const SourceLoc& key_loc,
                       const SourceLoc& value_loc, std::set<std::string>* seen) {
  if (seen && !seen->insert(key).second) {
    fail(key_loc, "parameter '" + key + "' is set twice");
  }
  std::string error = set.set(key, value);
  if (error.empty()) return;
  bool known = set.scope() && set.scope()->find(key);
  fail(known ? value_loc : key_loc, error);
}

void Loader::apply_params(ParamSet& set, const RepeatedPtrField<pb::Param>& list, const Locator& parent,
                          const char* field, std::set<std::string>* seen) {
  std::set<std::string> local;
  if (!seen) seen = &local;
  for (int i = 0; i < list.size(); ++i) {
    Locator p = parent.in(field, i);
    if (list[i].key().empty()) fail(p.self(), "parameter has no key");
    apply_one(set, list[i].key(), list[i].value(), p.at("key"), p.at("value"), seen);
  }
}

NodeParams Loader::node_params(const std::string& nic, const SourceLoc& nic_loc,
                               const RepeatedPtrField<pb::Param>& list, const Locator& parent, const char* field) {
  NodeParams p;
  p.nic = nic.empty() ? "raw" : nic;
  const ParamScope* nic_scope = ParamRegistry::instance().find("nic." + p.nic);
  if (!nic_scope) {
    std::string known;
    for (const ParamScope* s : ParamRegistry::instance().scopes()) {
      if (s->name.rfind("nic.", 0) != 0) continue;
      known += (known.empty() ? "" : ", ") + s->name.substr(4);
    }
    fail(nic_loc, "unknown NIC kind '" + p.nic + "' (known: " + (known.empty() ? "none" : known) + ")");
  }
  p.host = ParamSet(scope("host"));
  p.bus = ParamSet(scope("bus"));
  p.nic_params = ParamSet(*nic_scope);
  std::set<std::string> seen;
  for (int i = 0; i < list.size(); ++i) {
    Locator where = parent.in(field, i);
    const std::string& key = list[i].key();
    if (key.empty()) fail(where.self(), "parameter has no key");
    std::size_t dot = key.find('.');
    std::string prefix = dot == std::string::npos ? "" : key.substr(0, dot);
    ParamSet* target = prefix == "host"  ? &p.host
                       : prefix == "bus" ? &p.bus
                       : prefix == "nic" ? &p.nic_params
                                         : nullptr;
    if (!target) {
      fail(where.at("key"), "unknown parameter key '" + key + "' (node keys start with host., bus. or nic.)");
    }
    if (!seen.insert(key).second) fail(where.at("key"), "parameter '" + key + "' is set twice");
    apply_one(*target, key.substr(dot + 1), list[i].value(), where.at("key"), where.at("value"), nullptr);
  }
  const ParamDef* ports = nic_scope->find("ports");
  if (ports && ports->kind == UnitKind::Count) {
    std::uint64_t n = p.nic_params.count("ports");
    if (n > kMaxPorts) fail(parent.self(), "a node cannot have more than 65535 ports");
    p.ports = static_cast<std::uint32_t>(n);
  }
  return p;
}

// `ports: N` on a node: shorthand for the parameter nic.ports, for NIC
// kinds that have it.
void Loader::apply_ports_field(const pb::Node& n, NodeParams& p, const Locator& where) {
  const ParamDef* def = p.nic_params.scope()->find("ports");
  if (!def || def->kind != UnitKind::Count) fail(where.at("ports"), "NIC kind '" + p.nic + "' has no ports setting");
  for (const pb::Param& q : n.param())
    if (q.key() == "nic.ports") fail(where.at("ports"), "ports is set twice (the field and parameter nic.ports)");
  apply_one(p.nic_params, "ports", std::to_string(n.ports()), where.at("ports"), where.at("ports"), nullptr);
  p.ports = static_cast<std::uint32_t>(p.nic_params.count("ports"));
}

void Loader::check_name(const std::string& name, const char* what, const SourceLoc& loc) const {
  if (name.empty()) fail(loc, std::string(what) + " has no name");
  for (char c : name) {
    if (!valid_name_char(c)) {
      fail(loc, "invalid " + std::string(what) + " name '" + name + "' (use letters, digits, '_', '-' and '.')");
    }
  }
}

void Loader::add_device(const std::string& name, Device d, const SourceLoc& loc) {
  auto [it, inserted] = devices_.try_emplace(name, d);
  if (!inserted) {
    const SourceLoc& first =
        it->second.is_switch ? sc_.switches[it->second.index].loc : sc_.nodes[it->second.index].loc;
    fail(loc, "duplicate device name '" + name + "' (first defined at " + first.str() + ")");
  }
}

void Loader::add_node(const std::string& name, const NodeParams& p, const SourceLoc& loc) {
  add_device(name, {false, static_cast<std::uint32_t>(sc_.nodes.size())}, loc);
  NodeSpec& n = sc_.nodes.emplace_back();
  n.name = name;
  n.nic = p.nic;
  n.host = p.host;
  n.bus = p.bus;
  n.nic_params = p.nic_params;
  n.ports = p.ports;
  n.loc = loc;
}

void Loader::add_switch(const std::string& name, const ParamSet& params, const SourceLoc& loc, const SwitchKind& kind) {
  add_device(name, {true, static_cast<std::uint32_t>(sc_.switches.size())}, loc);
  SwitchSpec& s = sc_.switches.emplace_back();
  s.name = name;
  s.params = params;
  s.kind = kind.name;
  s.ports = kind.fixed_ports;
  const ParamDef* ports = params.scope()->find("ports");
  if (ports && ports->kind == UnitKind::Count) {
    std::uint64_t n = params.count("ports");
    if (n > kMaxPorts) fail(loc, "a switch cannot have more than 65535 ports");
    s.ports = static_cast<std::uint32_t>(n);
  }
  s.loc = loc;
}

const SwitchKind& Loader::switch_kind(const std::string& name, const SourceLoc& loc) {
  const NetworkKinds& kinds = NetworkKinds::instance();
  const SwitchKind* kind = name.empty() ? kinds.default_switch_kind() : kinds.switch_kind(name);
  if (!kind) fail(loc, "unknown switch kind '" + name + "' (use " + kinds.switch_kind_names() + ")");
  return *kind;
}

// Keys a kind rejects with its own explanation (one carried over from
// another kind); the rest are checked against the kind's scope.
void Loader::check_kind_keys(const SwitchKind& kind, const RepeatedPtrField<pb::Param>& list, const Locator& parent,
                             const char* field) {
  if (!kind.key_error) return;
  for (int i = 0; i < list.size(); ++i) {
    std::string error = kind.key_error(list[i].key());
    if (!error.empty()) fail(parent.in(field, i).at("key"), error);
  }
}

std::uint32_t Loader::device_ports(Device d) const {
  return d.is_switch ? sc_.switches[d.index].ports : sc_.nodes[d.index].ports;
}

std::string Loader::device_label(Device d) const {
  return (d.is_switch ? "switch '" + sc_.switches[d.index].name : "node '" + sc_.nodes[d.index].name) + "'";
}

// The network kind's helper whose field is the topology's shape, if any.
const TopologyHelper* Loader::topology_helper(const gp::Message& file_topology, const gp::Message** shape) const {
  const gp::OneofDescriptor* oneof = file_topology.GetDescriptor()->FindOneofByName("shape");
  const gp::FieldDescriptor* set =
      oneof ? file_topology.GetReflection()->GetOneofFieldDescriptor(file_topology, oneof) : nullptr;
  const TopologyHelper* helper = set ? NetworkKinds::instance().topology_helper(set->name()) : nullptr;
  if (helper) *shape = &file_topology.GetReflection()->GetMessage(file_topology, set);
  return helper;
}

void Loader::expand_topology(const pb::Topology& t, const gp::Message& file_topology, const Locator& where) {
  const std::string prefix = t.host_prefix().empty() ? "h" : t.host_prefix();
  check_name(prefix, "host_prefix", where.at("host_prefix"));
  if (t.has_star() && !t.star().switch_name().empty()) {
    check_name(t.star().switch_name(), "switch", where.in("star").at("switch_name"));
  }
  const gp::Message* helper_shape = nullptr;
  const TopologyHelper* helper = topology_helper(file_topology, &helper_shape);
  const std::string nic = helper && t.nic().empty() ? helper->default_nic : t.nic();
  NodeParams hosts = node_params(nic, where.at("nic"), t.node_param(), where, "node_param");
  const SwitchKind& kind = switch_kind(helper ? helper->switch_kind : std::string(), where.self());
  check_kind_keys(kind, t.switch_param(), where, "switch_param");
  ParamSet switch_params(scope(kind.param_scope));
  apply_params(switch_params, t.switch_param(), where, "switch_param", nullptr);

  const char* shape_field = t.has_star()         ? "star"
                            : t.has_leaf_spine() ? "leaf_spine"
                            : helper             ? helper->field.c_str()
                                                 : "fat_tree";
  const bool has_shape = helper || t.shape_case() != pb::Topology::SHAPE_NOT_SET;
  Locator shape = has_shape ? where.in(shape_field) : where;
  if (!has_shape) {
    std::string names = "star, leaf_spine";
    const auto& helpers = NetworkKinds::instance().topology_helpers();
    for (std::size_t i = 0; i <= helpers.size(); ++i)
      names += (i == helpers.size() ? " or " : ", ") + (i == 0 ? std::string("fat_tree") : helpers[i - 1].field);
    fail(where.self(), "topology has no shape (use " + names + ")");
  }
  topology::Generated g;
  g.max_hosts = std::min(g.max_hosts, limits_.topology_hosts);
  g.max_links = std::min(g.max_links, limits_.topology_links);
  topology::ShapeError error;
  const bool expanded =
      helper ? helper->expand(*helper_shape, prefix, &g, &error) : topology::expand(t, prefix, &g, &error);
  if (!expanded) fail(error.field.empty() ? shape.self() : shape.at(error.field), error.message);

  const auto node_base = static_cast<std::uint32_t>(sc_.nodes.size());
  const auto switch_base = static_cast<std::uint32_t>(sc_.switches.size());
  for (const std::string& h : g.hosts) add_node(h, hosts, where.self());

  const bool has_ports = switch_params.scope()->find("ports") != nullptr;
  SourceLoc ports_loc = where.self();
  for (int i = 0; i < t.switch_param_size(); ++i) {
    if (t.switch_param(i).key() == "ports") ports_loc = where.in("switch_param", i).at("value");
  }
  for (const topology::Switch& s : g.switches) {
    ParamSet params = switch_params;
    if (has_ports && params.is_set("ports")) {
      if (params.count("ports") < s.ports) {
        fail(ports_loc, "switch '" + s.name + "' needs " + std::to_string(s.ports) +
                            " ports but switch_param sets ports to " + params.raw("ports"));
      }
    } else if (has_ports) {
      std::string err = params.set("ports", std::to_string(s.ports));
      if (!err.empty())
        fail(shape.self(), "switch '" + s.name + "' would need " + std::to_string(s.ports) + " ports: " + err);
    }
    add_switch(s.name, params, where.self(), kind);
  }

  for (const topology::Link& l : g.links) {
    auto end = [&](const topology::End& e) {
      return PendingEnd{{!e.host, (e.host ? node_base : switch_base) + e.index}, e.port, where.self()};
    };
    PendingLink& p = pending_.emplace_back();
    p.name = l.name;
    p.named = true;
    p.a = end(l.a);
    p.b = end(l.b);
    p.loc = p.name_loc = where.self();
  }
}

PendingEnd Loader::resolve_end(const std::string& text, const SourceLoc& loc) {
  std::string name = text;
  std::uint32_t port = 0;
  std::size_t colon = text.rfind(':');
  if (colon != std::string::npos) {
    name = text.substr(0, colon);
    std::string error;
    auto n = parse_count(std::string_view(text).substr(colon + 1), &error);
    if (name.empty() || !n) fail(loc, "bad link end '" + text + "' (use name or name:port)");
    if (*n == 0) fail(loc, "port 0 in link end '" + text + "' does not exist (ports count from 1)");
    if (*n > kMaxPorts) {
      fail(loc, "port " + std::to_string(*n) + " in link end '" + text + "' is out of range");
    }
    port = static_cast<std::uint32_t>(*n);
  }
  if (name.empty()) fail(loc, "link end is empty (use name or name:port)");
  auto it = devices_.find(name);
  if (it == devices_.end()) fail(loc, "link end '" + text + "': no node or switch named '" + name + "'");
  PendingEnd end{it->second, port, loc};
  std::uint32_t count = device_ports(end.device);
  if (port > count) {
    fail(loc, "port " + std::to_string(port) + " of " + device_label(end.device) + " is above its port count " +
                  std::to_string(count));
  }
  if (port == 0 && !end.device.is_switch) end.port = 1;
  return end;
}

void Loader::explicit_links(const pb::Scenario& msg, const Locator& root, const ParamSet& defaults) {
  for (int i = 0; i < msg.link_size(); ++i) {
    const pb::Link& l = msg.link(i);
    Locator where = root.in("link", i);
    PendingLink p;
    p.loc = where.self();
    p.name_loc = where.at("name");
    p.named = !l.name().empty();
    p.name = l.name();
    if (l.a().empty()) fail(where.self(), "link has no end 'a'");
    if (l.b().empty()) fail(where.self(), "link has no end 'b'");
    p.a = resolve_end(l.a(), where.at("a"));
    p.b = resolve_end(l.b(), where.at("b"));
    if (p.a.device.is_switch == p.b.device.is_switch && p.a.device.index == p.b.device.index) {
      fail(where.at("b"), "link connects " + device_label(p.a.device) + " to itself");
    }
    p.params = defaults;
    std::set<std::string> seen;
    if (where.written("bandwidth")) {  // written empty is an error, not the default
      apply_one(p.params, "bandwidth", l.bandwidth(), where.at("bandwidth"), where.at("bandwidth"), &seen);
    }
    if (where.written("delay")) {
      apply_one(p.params, "delay", l.delay(), where.at("delay"), where.at("delay"), &seen);
    }
    apply_params(p.params, l.param(), where, "param", &seen);
    pending_.push_back(std::move(p));
  }
}

// Explicit ports are claimed first, in file order; then ends that name only
// a switch take its lowest free port, so "s0" never steals a port that a
// later "s0:3" asked for.
void Loader::place_links() {
  std::vector<std::vector<int>> node_owner(sc_.nodes.size()), switch_owner(sc_.switches.size());
  for (std::size_t i = 0; i < sc_.nodes.size(); ++i) node_owner[i].assign(sc_.nodes[i].ports + 1, -1);
  for (std::size_t i = 0; i < sc_.switches.size(); ++i) {
    switch_owner[i].assign(sc_.switches[i].ports + 1, -1);
  }
  auto owners = [&](Device d) -> std::vector<int>& {
    return d.is_switch ? switch_owner[d.index] : node_owner[d.index];
  };
  auto device_name = [&](Device d) -> const std::string& {
    return d.is_switch ? sc_.switches[d.index].name : sc_.nodes[d.index].name;
  };
  auto claim = [&](const PendingEnd& e, int link) {
    int& owner = owners(e.device)[e.port];
    if (owner >= 0) {
      const PendingLink& other = pending_[static_cast<std::size_t>(owner)];
      std::string who = other.named ? "link '" + other.name + "'" : "the link at " + other.loc.str();
      fail(e.loc, "port " + device_name(e.device) + ":" + std::to_string(e.port) + " is already used by " + who);
    }
    owner = link;
  };
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    for (PendingEnd* e : {&pending_[i].a, &pending_[i].b}) {
      if (e->port != 0) claim(*e, static_cast<int>(i));
    }
  }
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    for (PendingEnd* e : {&pending_[i].a, &pending_[i].b}) {
      if (e->port != 0) continue;
      std::vector<int>& o = owners(e->device);
      for (std::uint32_t p = 1; p < o.size() && e->port == 0; ++p) {
        if (o[p] < 0) e->port = p;
      }
      if (e->port == 0) {
        fail(e->loc, device_label(e->device) + " has no free port (all " + std::to_string(o.size() - 1) + " in use)");
      }
      claim(*e, static_cast<int>(i));
    }
  }
  std::map<std::string, std::size_t, std::less<>> names;
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    PendingLink& p = pending_[i];
    if (!p.named) {
      p.name = device_name(p.a.device) + ":" + std::to_string(p.a.port) + "--" + device_name(p.b.device) + ":" +
               std::to_string(p.b.port);
    }
    auto [it, inserted] = names.try_emplace(p.name, i);
    if (!inserted) {
      fail(p.named ? p.name_loc : p.loc,
           "duplicate link name '" + p.name + "' (first defined at " + pending_[it->second].loc.str() + ")");
    }
    LinkSpec& l = sc_.links.emplace_back();
    l.name = p.name;
    auto end = [](const PendingEnd& e) {
      return LinkEnd{e.device.is_switch ? LinkEnd::Kind::Switch : LinkEnd::Kind::Node, e.device.index, e.port};
    };
    l.a = end(p.a);
    l.b = end(p.b);
    l.params = std::move(p.params);
    l.loc = p.loc;
  }
  for (std::size_t n = 0; n < sc_.nodes.size(); ++n) {
    for (std::uint32_t port = 1; port <= sc_.nodes[n].ports; ++port) {
      if (node_owner[n][port] < 0) {
        fail(sc_.nodes[n].loc, "unconnected port: node '" + sc_.nodes[n].name + "' port " + std::to_string(port) +
                                   " is not connected to any link");
      }
    }
  }
}

std::vector<std::uint32_t> Loader::match_nodes(const RepeatedPtrField<std::string>& patterns, const Locator& parent,
                                               const char* field, const char* what) {
  if (patterns.empty()) fail(parent.self(), std::string(what) + " lists no nodes");
  std::vector<bool> chosen(sc_.nodes.size(), false);
  for (int i = 0; i < patterns.size(); ++i) {
    const std::string& pattern = patterns[i];
    for (int j = 0; j < i; ++j)
      if (patterns[j] == pattern)
        fail(parent.at(field, i),
             std::string(what) + " lists '" + pattern + "' twice (also at " + parent.at(field, j).str() + ")");
    bool any = false;
    for (std::size_t n = 0; n < sc_.nodes.size(); ++n) {
      if (glob_match(pattern, sc_.nodes[n].name)) chosen[n] = any = true;
    }
    if (any) continue;
    auto it = devices_.find(pattern);
    std::string why = it != devices_.end() && it->second.is_switch ? "'" + pattern + "' is a switch, not a node"
                                                                   : "'" + pattern + "' matches no node";
    fail(parent.at(field, i), std::string(what) + " node " + why);
  }
  std::vector<std::uint32_t> out;
  for (std::size_t n = 0; n < chosen.size(); ++n) {
    if (chosen[n]) out.push_back(static_cast<std::uint32_t>(n));
  }
  return out;
}

void Loader::workloads(const pb::Scenario& msg, const Locator& root) {
  for (int i = 0; i < msg.workload_size(); ++i) {
    const pb::Workload& w = msg.workload(i);
    Locator where = root.in("workload", i);
    WorkloadSpec spec;
    spec.loc = where.self();
    if (w.program().empty()) fail(where.self(), "workload has no program");
    if (programs_.known && !programs_.known(w.program())) {
      fail(where.at("program"), "unknown program '" + w.program() + "'");
    }
    spec.program = w.program();
    spec.nodes = match_nodes(w.nodes(), where, "nodes", "workload");
    if (!w.start().empty()) {
      std::string error;
      auto t = parse_time(w.start(), &error);
      if (!t) fail(where.at("start"), "start: " + error);
      spec.start = *t;
    }
    spec.args.assign(w.args().begin(), w.args().end());
    check_args(spec, where);
    sc_.workloads.push_back(std::move(spec));
  }
}

// The program's own parser judges the arguments. The error is placed at
// the argument that ends the shortest prefix of the list refused for the
// same reason as the whole (at the workload when no arguments at all give
// it): a rule between arguments lands on the one that breaks it, and a
// prefix refused only for a default that a later argument changes does
// not count.
void Loader::check_args(const WorkloadSpec& spec, const Locator& where) {
  if (!programs_.check_args) return;
  const std::string reason = programs_.check_args(spec.program, spec.args);
  if (reason.empty()) return;
  std::vector<std::string> prefix;
  while (prefix.size() < spec.args.size() && programs_.check_args(spec.program, prefix) != reason)
    prefix.push_back(spec.args[prefix.size()]);
  const std::string message = fmt::format("program '{}' does not take these arguments: {}", spec.program, reason);
  if (prefix.empty()) fail(where.self(), message);
  fail(where.at("args", static_cast<int>(prefix.size()) - 1), "args: " + message);
}

void Loader::faults(const pb::Scenario& msg, const Locator& root) {
  for (int i = 0; i < msg.fault_size(); ++i) {
    const pb::Fault& f = msg.fault(i);
    Locator where = root.in("fault", i);
    FaultSpec spec;
    spec.loc = where.self();
    std::string error;
    auto at = parse_time(f.at(), &error);
    if (!at) fail(f.at().empty() ? where.self() : where.at("at"), "fault time 'at': " + error);
    spec.at = *at;
    if (!f.switch_().empty()) {
      switch_fault(f, where, spec);
      continue;
    }
    if (f.link().empty()) fail(where.self(), "fault names no link (or switch)");
    auto link = sc_.link_index(f.link());
    if (!link) fail(where.at("link"), "fault names unknown link '" + f.link() + "'");
    spec.link = *link;
    // A rate fault changes the link's parameter of the same name, so it is
    // checked against that parameter's declared range when there is one.
    auto rate = [&](const std::string& field, const std::string& text) {
      ParamSet probe = sc_.links[spec.link].params;
      const ParamDef* def = probe.scope() ? probe.scope()->find(field) : nullptr;
      if (def && def->kind == UnitKind::Ratio) {
        std::string err = probe.set(field, text);
        if (!err.empty()) fail(where.at(field), err);
        return probe.ratio(field);
      }
      std::string err;
      auto r = parse_ratio(text, &err);
      if (!r) fail(where.at(field), field + ": " + err);
      if (*r > 1) fail(where.at(field), field + ": " + text + " is above the maximum 1");
      return *r;
    };
    switch (f.action_case()) {
      case pb::Fault::kLinkDown:
        if (!f.link_down()) fail(where.at("link_down"), "link_down: false does nothing (write link_down: true)");
        spec.kind = FaultSpec::Kind::LinkDown;
        break;
      case pb::Fault::kLinkUp:
        if (!f.link_up()) fail(where.at("link_up"), "link_up: false does nothing (write link_up: true)");
        spec.kind = FaultSpec::Kind::LinkUp;
        break;
      case pb::Fault::kDropRate:
        spec.kind = FaultSpec::Kind::DropRate;
        spec.value = rate("drop_rate", f.drop_rate());
        break;
      case pb::Fault::kBitErrorRate:
        spec.kind = FaultSpec::Kind::BitErrorRate;
        spec.value = rate("bit_error_rate", f.bit_error_rate());
        break;
      case pb::Fault::kFlaps:
        flaps(f.flaps(), where.in("flaps"), spec);
        break;
      case pb::Fault::ACTION_NOT_SET:
        fail(where.self(), "fault has no action (link_down, link_up, drop_rate, bit_error_rate or flaps)");
    }
    sc_.faults.push_back(spec);
  }
}

// A switch fails or returns as a whole: the fault becomes one link fault of
// the same time per link of the switch, in link order, so every port goes
// down (or up) at the same instant and the subnet manager hears of it
// through its neighbours' traps.
void Loader::switch_fault(const pb::Fault& f, const Locator& where, FaultSpec spec) {
  if (!f.link().empty()) fail(where.at("switch"), "fault names both a link and a switch (one of them)");
  auto sw = sc_.switch_index(f.switch_());
  if (!sw) fail(where.at("switch"), "fault names unknown switch '" + f.switch_() + "'");
  if (f.action_case() == pb::Fault::kLinkDown && f.link_down())
    spec.kind = FaultSpec::Kind::LinkDown;
  else if (f.action_case() == pb::Fault::kLinkUp && f.link_up())
    spec.kind = FaultSpec::Kind::LinkUp;
  else
    fail(where.self(), "a switch fault takes link_down: true (the switch fails) or link_up: true (it returns)");
  auto on_switch = [&](const LinkEnd& e) { return e.kind == LinkEnd::Kind::Switch && e.index == *sw; };
  bool any = false;
  for (std::uint32_t l = 0; l < sc_.links.size(); ++l) {
    if (!on_switch(sc_.links[l].a) && !on_switch(sc_.links[l].b)) continue;
    spec.link = l;
    sc_.faults.push_back(spec);
    any = true;
  }
  if (!any) fail(where.at("switch"), "switch '" + f.switch_() + "' has no links to fail");
}

void Loader::flaps(const pb::LinkFlaps& f, const Locator& where, FaultSpec& spec) {
  spec.kind = FaultSpec::Kind::Flaps;
  auto time = [&](const char* field, const std::string& text) {
    std::string error;
    auto t = parse_time(text, &error);
    if (!t) fail(text.empty() ? where.self() : where.at(field), std::string("flaps ") + field + ": " + error);
    if (*t == 0) fail(where.at(field), std::string("flaps ") + field + " must be above 0");
    return *t;
  };
  spec.mean_interval = time("mean_interval", f.mean_interval());
  // Below this a link spends its time flapping rather than carrying anything
  // (a real link takes microseconds to train), and each flap is events.
  constexpr Tick kShortestMeanInterval = 1'000'000;  // 1 us in ps
  if (spec.mean_interval < kShortestMeanInterval)
    fail(where.at("mean_interval"), "flaps mean_interval must be at least 1us (links take microseconds to train)");
  spec.down_for = time("down_for", f.down_for());
  spec.until = time("until", f.until());
  if (spec.until <= spec.at) fail(where.at("until"), "flaps until must be after the fault's `at`");
}

void Loader::multicast(const pb::Scenario& msg, const Locator& root) {
  std::map<std::string, SourceLoc> names;
  std::map<std::uint32_t, SourceLoc> mlids;
  for (int i = 0; i < msg.multicast_size(); ++i) {
    const pb::Multicast& m = msg.multicast(i);
    Locator where = root.in("multicast", i);
    MulticastGroupSpec spec;
    spec.loc = where.self();
    spec.name = m.name();
    if (!m.name().empty()) {
      auto [it, inserted] = names.try_emplace(m.name(), spec.loc);
      if (!inserted) {
        fail(where.at("name"),
             "duplicate multicast group name '" + m.name() + "' (first defined at " + it->second.str() + ")");
      }
    }
    if (m.mlid() < 0xC000 || m.mlid() > 0xFFFE) {
      fail(where.at("mlid"),
           "mlid " + std::to_string(m.mlid()) + " is outside the multicast range 0xC000..0xFFFE (49152..65534)");
    }
    auto [it, inserted] = mlids.try_emplace(m.mlid(), spec.loc);
    if (!inserted) {
      fail(where.at("mlid"), "mlid " + std::to_string(m.mlid()) + " is already used (at " + it->second.str() + ")");
    }
    spec.mlid = m.mlid();
    spec.members = match_nodes(m.members(), where, "members", "multicast member");
    sc_.multicast.push_back(std::move(spec));
  }
}

void Loader::partition(const pb::Scenario& msg, const Locator& root) {
  const pb::Partition& p = msg.partition();
  Locator where = root.in("partition");
  PartitionSpec& spec = sc_.partition;
  spec.loc = where.self();
  spec.blocks = p.blocks() == 0 ? 1 : p.blocks();
  if (spec.blocks > 4095) fail(where.at("blocks"), fmt::format("partition.blocks {} is over 4095", p.blocks()));
  std::set<std::uint32_t> pinned;
  for (int i = 0; i < p.pin_size(); ++i) {
    Locator at = where.in("pin", i);
    auto it = devices_.find(p.pin(i).device());
    if (it == devices_.end()) fail(at.at("device"), "pin device '" + p.pin(i).device() + "' is no node or switch");
    if (p.pin(i).block() >= spec.blocks)
      fail(at.at("block"),
           fmt::format("pin block {} is not below partition.blocks ({})", p.pin(i).block(), spec.blocks));
    if (!pinned.insert(device_id(it->second)).second)
      fail(at.at("device"), "device '" + p.pin(i).device() + "' is pinned twice");
    spec.pins.push_back({device_id(it->second), p.pin(i).block()});
  }
  for (int i = 0; i < p.weight_size(); ++i) {
    Locator at = where.in("weight", i);
    if (!(p.weight(i).weight() > 0) || !std::isfinite(p.weight(i).weight()))
      fail(at.at("weight"), fmt::format("weight {} must be a positive number", p.weight(i).weight()));
    bool any = false;
    for (const auto& [name, device] : devices_) {
      if (!glob_match(p.weight(i).device(), name)) continue;
      any = true;
      spec.weights.push_back({device_id(device), p.weight(i).weight()});
    }
    if (!any) fail(at.at("device"), "weight device '" + p.weight(i).device() + "' matches no node or switch");
  }
}

void Loader::outputs(const pb::Scenario& msg, const Locator& root) {
  const pb::Outputs& o = msg.outputs();
  Locator where = root.in("outputs");
  for (int i = 0; i < o.trace_size(); ++i) {
    Locator t = where.in("trace", i);
    TraceSelect sel;
    if (!o.trace(i).device().empty()) sel.device = o.trace(i).device();
    if (!o.trace(i).component().empty()) sel.component = o.trace(i).component();
    bool any = false;
    for (const auto& [name, device] : devices_) any = any || glob_match(sel.device, name);
    if (!any) fail(t.at("device"), "trace device '" + sel.device + "' matches no node or switch");
    if (sel.component != "*" && !trace_component_from_name(sel.component)) {
      std::string known = "*";
      for (unsigned c = 0; c < static_cast<unsigned>(Component::count); ++c) {
        known += std::string(", ") + component_name(static_cast<Component>(c));
      }
      fail(t.at("component"), "unknown trace component '" + sel.component + "' (use " + known + ")");
    }
    sc_.outputs.trace.push_back(sel);
  }
  sc_.outputs.timeline = o.timeline();
  if (!o.timeline_max_events().empty()) {
    std::string error;
    auto n = parse_count(o.timeline_max_events(), &error);
    if (!n) fail(where.at("timeline_max_events"), "timeline_max_events: " + error);
    if (!o.timeline())
      fail(where.at("timeline_max_events"), "timeline_max_events limits a timeline, and timeline is not true");
    sc_.outputs.timeline_max_events = *n;
  }
  std::map<std::string, const LinkSpec*> first_of_format;
  for (int i = 0; i < o.pcap_size(); ++i) {
    bool any = false;
    for (const LinkSpec& l : sc_.links) {
      if (!glob_match(o.pcap(i), l.name)) continue;
      any = true;
      const std::string format = link_pcap_format(l);
      if (format.empty() || !NetworkKinds::instance().pcap_format(format))
        fail(where.at("pcap", i), "pcap link '" + l.name + "' carries packets no capture format is registered for");
      first_of_format.try_emplace(format, &l);
      if (first_of_format.size() > 1) {
        const auto& [first_format, first] = *first_of_format.begin();
        const auto& [other_format, other] = *std::next(first_of_format.begin());
        fail(where.at("pcap", i), "pcap links '" + first->name + "' (" + first_format + " packets) and '" +
                                      other->name + "' (" + other_format +
                                      " packets) cannot share one capture file: a pcap file has one link type; "
                                      "capture the links of one network");
      }
    }
    if (!any) fail(where.at("pcap", i), "pcap link '" + o.pcap(i) + "' matches no link");
    sc_.outputs.pcap_links.push_back(o.pcap(i));
  }
  if (!first_of_format.empty()) sc_.outputs.pcap_format = first_of_format.begin()->first;
}

// The format of the packets a link carries: its NIC's, else its switch
// kind's; a link between two NICs that name none carries the default switch
// kind's.
std::string Loader::link_pcap_format(const LinkSpec& l) const {
  const NetworkKinds& kinds = NetworkKinds::instance();
  for (const LinkEnd& e : {l.a, l.b}) {
    std::string format = e.kind == LinkEnd::Kind::Node ? kinds.nic_pcap_format(sc_.nodes.at(e.index).nic)
                                                       : kinds.switch_kind(sc_.switches.at(e.index).kind)->pcap_format;
    if (!format.empty()) return format;
  }
  const SwitchKind* fallback = kinds.default_switch_kind();
  return fallback ? fallback->pcap_format : std::string();
}

void Loader::run_rules(ScenarioRule::Stage stage, const gp::Message& file, const Locator& root) {
  ScenarioContext context{sc_, file, root};
  for (const ScenarioRule& r : NetworkKinds::instance().scenario_rules())
    if (r.stage == stage) r.apply(context);
}

// The file is parsed against the schema with every network kind's fields;
// the core reads its own fields from a copy in the generated message type
// (the kinds' fields ride along there as unknown fields).
Scenario Loader::load(const std::string& text) {
  ScenarioSchema schema;
  std::unique_ptr<gp::Message> file = schema.new_scenario();
  TextFormat::ParseInfoTree tree;
  FirstError errors;
  TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(&tree);
  if (!parser.ParseFromString(text, file.get()) || errors.has_error) {
    if (!errors.has_error) fail({file_, 1, 1}, "cannot parse scenario");
    const ParseErrorPlace told = explain_parse_error(text, {errors.line, errors.column, errors.message});
    fail({file_, told.line + 1, told.column + 1}, told.message);
  }
  pb::Scenario msg;
  if (!msg.ParseFromString(file->SerializeAsString())) fail({file_, 1, 1}, "cannot parse scenario");
  const Locator root(&file_, schema.scenario(), &tree, {file_, 1, 1});

  sc_.file = file_;
  sc_.name = msg.name();
  sc_.description = msg.description();
  sc_.seed = msg.has_seed() ? msg.seed() : 1;
  if (!msg.stop_time().empty()) {
    std::string error;
    auto t = parse_time(msg.stop_time(), &error);
    if (!t) fail(root.at("stop_time"), "stop_time: " + error);
    if (*t == 0) fail(root.at("stop_time"), "stop_time: must be after 0 (leave it out to run until the workloads end)");
    sc_.stop_time = *t;
  }

  ParamSet link_defaults(scope("link"));
  {
    const pb::LinkDefaults& d = msg.link_defaults();
    Locator where = root.in("link_defaults");
    std::set<std::string> seen;
    if (where.written("bandwidth")) {  // written empty is an error, not the default
      apply_one(link_defaults, "bandwidth", d.bandwidth(), where.at("bandwidth"), where.at("bandwidth"), &seen);
    }
    if (where.written("delay")) {
      apply_one(link_defaults, "delay", d.delay(), where.at("delay"), where.at("delay"), &seen);
    }
    apply_params(link_defaults, d.param(), where, "param", &seen);
  }

  if (msg.has_topology()) {
    const gp::FieldDescriptor* topology = schema.scenario()->FindFieldByName("topology");
    expand_topology(msg.topology(), file->GetReflection()->GetMessage(*file, topology), root.in("topology"));
  }
  for (int i = 0; i < msg.node_size(); ++i) {
    const pb::Node& n = msg.node(i);
    Locator where = root.in("node", i);
    check_name(n.name(), "node", n.name().empty() ? where.self() : where.at("name"));
    NodeParams p = node_params(n.nic(), where.at("nic"), n.param(), where, "param");
    if (n.has_ports()) apply_ports_field(n, p, where);
    add_node(n.name(), p, where.at("name"));
  }
  for (int i = 0; i < msg.switch__size(); ++i) {
    const pb::Switch& s = msg.switch_(i);
    Locator where = root.in("switch", i);
    check_name(s.name(), "switch", s.name().empty() ? where.self() : where.at("name"));
    const SwitchKind& kind = switch_kind(s.kind(), where.at("kind"));
    check_kind_keys(kind, s.param(), where, "param");
    ParamSet params(scope(kind.param_scope));
    apply_params(params, s.param(), where, "param", nullptr);
    add_switch(s.name(), params, where.at("name"), kind);
  }
  if (sc_.nodes.empty()) {
    fail({file_, 1, 1}, "scenario has no nodes (add node { ... } or a topology)");
  }
  for (PendingLink& p : pending_) p.params = link_defaults;
  explicit_links(msg, root, link_defaults);
  place_links();
  run_rules(ScenarioRule::Stage::LinksPlaced, *file, root);

  workloads(msg, root);
  faults(msg, root);
  multicast(msg, root);
  scenario_detail::load_ipv4(msg, root, sc_);
  run_rules(ScenarioRule::Stage::Parsed, *file, root);
  sc_.mgmt = ParamSet(scope("mgmt"));
  apply_params(sc_.mgmt, msg.management().param(), root.in("management"), "param", nullptr);
  outputs(msg, root);
  partition(msg, root);
  return std::move(sc_);
}

}  // namespace

Scenario load_scenario_text(const std::string& text, const std::string& file_name, const ProgramLookup& known_program,
                            const LoadLimits& limits) {
  // A byte-order mark (editors on some systems write one) is not text.
  constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
  Loader loader(file_name, known_program, limits);
  return loader.load(text.starts_with(kUtf8Bom) ? text.substr(kUtf8Bom.size()) : text);
}

Scenario load_scenario_file(const std::string& path, const ProgramLookup& known_program) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw ScenarioError({path, 0, 0}, fmt::format("cannot read the scenario file: {}", std::strerror(errno)));
  std::string text;
  char buf[65536];
  std::size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, got);
  int read_errno = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (read_errno != 0)
    throw ScenarioError({path, 0, 0}, fmt::format("cannot read the scenario file: {}", std::strerror(read_errno)));
  return load_scenario_text(text, path, known_program);
}

}  // namespace nicsim
