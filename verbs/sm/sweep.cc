// The subnet manager's sweep: discovery by directed route, LID assignment,
// min-hop routing on the discovered graph, LFT and MFT programming, and
// port activation (Init -> Armed -> Active).
#include <algorithm>
#include <cstring>
#include <deque>
#include <set>

#include "core/sim.h"
#include "ib_fabric/ib_mgmt.h"
#include "nicsim/app.h"
#include "verbs/sm/sm.h"

namespace nicsim::sm {

using namespace fabric::smp;

namespace {

void read_port(SmPort& p, const std::uint8_t* d) {
  std::memcpy(p.info, d, 64);
  p.link_up = (d[33] >> 4) == 5;  // PortPhysicalState: LinkUp
  p.state = d[32] & 0x0f;
  p.lid = static_cast<std::uint16_t>(get(d + 16, 2));
  p.sm_lid = static_cast<std::uint16_t>(get(d + 18, 2));
}

std::string first_word(const std::uint8_t* desc) {
  std::string s(reinterpret_cast<const char*>(desc), strnlen(reinterpret_cast<const char*>(desc), 64));
  return s.substr(0, s.find(' '));
}

}  // namespace

bool SubnetManager::sweep() {
  ++sweeps_;
  stats_ = SweepStats{};
  stats_.started = nicsim::now();
  bool ok = discover();
  if (ok) {
    forget_lost_switches();
    assign_lids();
    compute_routes();
    ok = program_lfts() && program_mfts() && activate_ports();
  }
  stats_.finished = nicsim::now();
  return ok && stats_.failed == 0;
}

// A switch the sweep did not find has left the subnet (it failed, or every
// link to it did). What the SM wrote to it is forgotten, as OpenSM drops a
// switch it lost: if it comes back, it may have restarted with empty tables,
// so every block is written again.
void SubnetManager::forget_lost_switches() {
  std::set<std::uint64_t> found;
  for (const SmNode& n : nodes_)
    if (n.is_switch) found.insert(n.guid);
  std::erase_if(lft_set_, [&](const auto& e) { return !found.count(e.first); });
  std::erase_if(mft_set_, [&](const auto& e) { return !found.count(e.first.first); });
}

bool SubnetManager::discover() {
  nodes_.clear();
  std::uint8_t r[kMadBytes];
  // The SM's own CA and port, through the local MAD interface.
  if (!smp({}, kMethodGet, kAttrNodeInfo, 0, nullptr, r)) return false;
  SmNode me;
  me.num_ports = r[kData + 3];
  me.guid = get(r + kData + 20, 8);
  me.ca_port = port_;
  me.ports.resize(me.num_ports + 1u);
  if (!smp({}, kMethodGet, kAttrNodeDescription, 0, nullptr, r)) return false;
  me.name = first_word(r + kData);
  if (!smp({}, kMethodGet, kAttrPortInfo, port_, nullptr, r)) return false;
  read_port(me.ports[port_], r + kData);
  nodes_.push_back(std::move(me));
  if (!nodes_[0].ports[port_].link_up) return false;
  std::vector<Probe> wave{{{port_}, 0, port_}};
  while (!wave.empty()) wave = discover_wave(wave);
  return true;
}

// One breadth-first wave of the discovery, every stage one batch: NodeInfo
// over each probe's path, then NodeDescription and PortInfo of the nodes
// found new; returns the next wave (the unexplored ports of new switches).
std::vector<SubnetManager::Probe> SubnetManager::discover_wave(const std::vector<Probe>& wave) {
  std::vector<SmpRequest> infos(wave.size());
  for (std::size_t i = 0; i < wave.size(); ++i) {
    infos[i].path = wave[i].path;
    infos[i].method = kMethodGet;
    infos[i].attr = kAttrNodeInfo;
  }
  smp_batch(infos);
  // The nodes each probe reached; new ones (first probe to reach them) are
  // described before they join.
  std::vector<int> reached(wave.size(), -1);
  std::vector<std::size_t> fresh;  // probe index of each new node, in wave order
  std::map<std::pair<std::uint64_t, bool>, std::size_t> fresh_by_guid;
  for (std::size_t i = 0; i < wave.size(); ++i) {
    if (!infos[i].ok) continue;
    const std::uint8_t* d = infos[i].resp.data();
    const bool is_switch = d[2] == kNodeTypeSwitch;
    const std::uint64_t guid = get(d + (is_switch ? 12 : 20), 8);
    if (const int known = find_node(guid, is_switch); known >= 0) {
      reached[i] = known;
    } else if (!fresh_by_guid.count({guid, is_switch})) {
      fresh_by_guid[{guid, is_switch}] = i;
      fresh.push_back(i);
    }
  }
  const std::vector<int> added = describe(wave, infos, fresh);
  for (std::size_t i = 0; i < wave.size(); ++i) {
    if (!infos[i].ok) continue;
    const std::uint8_t* d = infos[i].resp.data();
    const bool is_switch = d[2] == kNodeTypeSwitch;
    const int n = reached[i] >= 0 ? reached[i] : find_node(get(d + (is_switch ? 12 : 20), 8), is_switch);
    if (n >= 0) link_nodes(wave[i].from, wave[i].from_port, n, d[36]);
  }
  std::vector<Probe> next;
  for (int n : added) {
    if (!nodes_[static_cast<std::size_t>(n)].is_switch || nodes_[static_cast<std::size_t>(n)].path.size() >= kMaxHops)
      continue;
    for (std::uint8_t p = 1; p <= nodes_[static_cast<std::size_t>(n)].num_ports; ++p) {
      const SmPort& sp = nodes_[static_cast<std::size_t>(n)].ports[p];
      if (!sp.link_up || sp.peer >= 0) continue;
      std::vector<std::uint8_t> path = nodes_[static_cast<std::size_t>(n)].path;
      path.push_back(p);
      next.push_back({std::move(path), n, p});
    }
  }
  return next;
}

// NodeDescription and the PortInfos of each new node in one batch; those
// fully described join nodes_ (in wave order). Returns their indices.
std::vector<int> SubnetManager::describe(const std::vector<Probe>& wave, const std::vector<SmpRequest>& infos,
                                         const std::vector<std::size_t>& fresh) {
  std::vector<SmpRequest> reqs;
  std::vector<std::size_t> first(fresh.size());
  for (std::size_t f = 0; f < fresh.size(); ++f) {
    const std::uint8_t* d = infos[fresh[f]].resp.data();
    const bool is_switch = d[2] == kNodeTypeSwitch;
    const std::uint8_t local = d[36];
    first[f] = reqs.size();
    SmpRequest desc;
    desc.path = wave[fresh[f]].path;
    desc.method = kMethodGet;
    desc.attr = kAttrNodeDescription;
    reqs.push_back(desc);
    for (std::uint8_t p = is_switch ? 0 : local; p <= (is_switch ? d[3] : local); ++p) {
      SmpRequest port = desc;
      port.attr = kAttrPortInfo;
      port.mod = p;
      reqs.push_back(port);
    }
  }
  smp_batch(reqs);
  std::vector<int> added;
  for (std::size_t f = 0; f < fresh.size(); ++f) {
    const std::size_t end = f + 1 < fresh.size() ? first[f + 1] : reqs.size();
    bool ok = true;
    for (std::size_t r = first[f]; r < end; ++r) ok = ok && reqs[r].ok;
    if (!ok) continue;
    const std::uint8_t* d = infos[fresh[f]].resp.data();
    SmNode node;
    node.is_switch = d[2] == kNodeTypeSwitch;
    node.guid = get(d + (node.is_switch ? 12 : 20), 8);
    node.num_ports = d[3];
    node.ca_port = node.is_switch ? 0 : d[36];
    node.path = wave[fresh[f]].path;
    node.ports.resize(node.num_ports + 1u);
    node.name = first_word(reqs[first[f]].resp.data());
    for (std::size_t r = first[f] + 1; r < end; ++r) read_port(node.ports[reqs[r].mod], reqs[r].resp.data());
    nodes_.push_back(std::move(node));
    added.push_back(static_cast<int>(nodes_.size() - 1));
  }
  return added;
}

int SubnetManager::find_node(std::uint64_t guid, bool is_switch) const {
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].guid == guid && nodes_[i].is_switch == is_switch) return static_cast<int>(i);
  return -1;
}

// Records the link (from, from_port) -- (n, local), as the NodeInfo
// answered over it said.
void SubnetManager::link_nodes(int from, std::uint8_t from_port, int n, std::uint8_t local) {
  if (local >= nodes_[static_cast<std::size_t>(n)].ports.size()) return;
  nodes_[static_cast<std::size_t>(from)].ports[from_port].peer = n;
  nodes_[static_cast<std::size_t>(from)].ports[from_port].peer_port = local;
  nodes_[static_cast<std::size_t>(n)].ports[local].peer = from;
  nodes_[static_cast<std::size_t>(n)].ports[local].peer_port = from_port;
}

void SubnetManager::assign_lids() {
  for (SmNode& n : nodes_) {
    auto it = lid_of_.find(n.guid);
    if (it == lid_of_.end()) it = lid_of_.emplace(n.guid, next_lid_++).first;
    n.lid = it->second;
  }
}

// The discovered graph (links whose both ends are up) through the routing
// engine; the tables cover every LID handed out so far.
void SubnetManager::compute_routes() {
  fabric::routing::Graph g;
  for (const SmNode& n : nodes_) g.nodes.push_back({n.is_switch, n.lid, {}});
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    g.nodes[i].ports.resize(nodes_[i].ports.size());
    for (std::size_t p = 1; p < nodes_[i].ports.size(); ++p) {
      const SmPort& sp = nodes_[i].ports[p];
      if (sp.peer >= 0 && sp.link_up) g.nodes[i].ports[p] = {sp.peer, sp.peer_port};
    }
  }
  const fabric::routing::Routes r = fabric::routing::compute(g, opt_.routing);
  stats_.engine = r.engine;
  const std::size_t size = next_lid_;
  lft_.clear();
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (!nodes_[i].is_switch) continue;
    std::vector<std::uint8_t>& table = lft_[nodes_[i].guid];
    table = r.lft[i];
    table.resize(size, fabric::routing::kNoRoute);
  }
}

namespace {
SmpRequest set_request(const std::vector<std::uint8_t>& path, std::uint16_t attr, std::uint32_t mod,
                       const std::uint8_t* data) {
  SmpRequest r;
  r.path = path;
  r.method = kMethodSet;
  r.attr = attr;
  r.mod = mod;
  r.has_data = true;
  std::memcpy(r.data.data(), data, 64);
  return r;
}
}  // namespace

// Every changed 64-entry block of every switch's LFT in one batch, then the
// SwitchInfo (LinearFDBTop) of each switch that changed.
bool SubnetManager::program_lfts() {
  std::vector<SmpRequest> blocks;
  std::vector<std::pair<std::uint64_t, std::size_t>> placed;  // (switch GUID, block) per request
  for (const SmNode& s : nodes_) {
    if (!s.is_switch) continue;
    const std::vector<std::uint8_t>& want = lft_[s.guid];
    const std::vector<std::uint8_t>& held = lft_set_[s.guid];
    for (std::size_t block = 0; block * 64 < want.size(); ++block) {
      std::uint8_t data[64];
      std::memset(data, 0xff, sizeof data);
      for (std::size_t i = 0; i < 64 && block * 64 + i < want.size(); ++i) data[i] = want[block * 64 + i];
      if (held.size() >= (block + 1) * 64 && std::memcmp(held.data() + block * 64, data, 64) == 0) continue;
      blocks.push_back(set_request(s.path, kAttrLft, static_cast<std::uint32_t>(block), data));
      placed.push_back({s.guid, block});
    }
  }
  bool ok = smp_batch(blocks);
  std::map<std::uint64_t, bool> changed;  // switch GUID -> every block taken
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const auto [guid, block] = placed[i];
    std::vector<std::uint8_t>& held = lft_set_[guid];
    auto [it, fresh] = changed.emplace(guid, true);
    if (!blocks[i].ok) {
      it->second = false;
      continue;
    }
    if (held.size() < (block + 1) * 64) held.resize((block + 1) * 64, 0xff);
    std::memcpy(held.data() + block * 64, blocks[i].data.data(), 64);
  }
  std::vector<SmpRequest> infos;
  for (const SmNode& s : nodes_) {
    auto it = changed.find(s.guid);
    if (!s.is_switch || it == changed.end()) continue;
    if (!it->second) {
      lft_set_[s.guid].clear();  // unknown now: rewrite everything next time
      continue;
    }
    std::uint8_t info[64] = {};
    put(info + 6, 2, lft_[s.guid].size() - 1);  // LinearFDBTop
    info[11] = 4;                               // clear PortStateChange
    infos.push_back(set_request(s.path, kAttrSwitchInfo, 0, info));
  }
  return smp_batch(infos) && ok;
}

bool SubnetManager::program_mfts() {
  // Per switch, per MFT modifier (block | position << 28): the 32 masks.
  std::map<std::pair<int, std::uint32_t>, std::vector<std::uint8_t>> want;
  for (const McastGroup& g : opt_.groups) {
    std::vector<int> members;
    for (std::size_t i = 0; i < nodes_.size(); ++i)
      if (!nodes_[i].is_switch && std::find(g.members.begin(), g.members.end(), nodes_[i].name) != g.members.end())
        members.push_back(static_cast<int>(i));
    if (members.empty()) continue;
    // A tree over the switches, rooted at the first member's switch.
    auto attached = [&](int ca) { return nodes_[ca].ports[nodes_[ca].ca_port]; };
    const int root = attached(members[0]).peer;
    if (root < 0) continue;
    std::vector<int> parent(nodes_.size(), -2);
    std::vector<std::uint8_t> up_port(nodes_.size(), 0);
    parent[root] = -1;
    std::deque<int> q{root};
    while (!q.empty()) {
      const int u = q.front();
      q.pop_front();
      for (std::uint8_t p = 1; p < nodes_[u].ports.size(); ++p) {
        const SmPort& sp = nodes_[u].ports[p];
        if (sp.peer < 0 || !sp.link_up || !nodes_[sp.peer].is_switch || parent[sp.peer] != -2) continue;
        parent[sp.peer] = u;
        up_port[sp.peer] = sp.peer_port;  // on the child: the port toward the parent
        q.push_back(sp.peer);
      }
    }
    std::map<int, std::vector<std::uint8_t>> ports;  // switch -> member/tree ports
    for (int m : members) {
      const SmPort& a = attached(m);
      if (a.peer < 0 || parent[a.peer] == -2) continue;
      ports[a.peer].push_back(a.peer_port);
      for (int x = a.peer; parent[x] >= 0; x = parent[x]) {
        ports[x].push_back(up_port[x]);
        ports[parent[x]].push_back(nodes_[x].ports[up_port[x]].peer_port);
      }
    }
    const std::uint32_t index = g.mlid - fabric::kMulticastLidBase;
    for (auto& [sw, list] : ports)
      for (std::uint8_t p : list) {
        const std::uint32_t mod = (index / 32) | (static_cast<std::uint32_t>(p / 16) << 28);
        auto& block = want[{sw, mod}];
        block.resize(64, 0);
        const std::size_t at = 2 * (index % 32);
        put(block.data() + at, 2, get(block.data() + at, 2) | (1u << (p % 16)));
      }
  }
  std::vector<SmpRequest> sets;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> placed;
  for (auto& [key, block] : want) {
    const SmNode& s = nodes_[key.first];
    if (mft_set_[{s.guid, key.second}] == block) continue;
    sets.push_back(set_request(s.path, kAttrMft, key.second, block.data()));
    placed.push_back({s.guid, key.second});
  }
  const bool ok = smp_batch(sets);
  for (std::size_t i = 0; i < sets.size(); ++i)
    if (sets[i].ok) mft_set_[placed[i]].assign(sets[i].data.begin(), sets[i].data.end());
  return ok;
}

// The PortInfo Set that gives a port its LID, the master SM and `state`.
SmpRequest SubnetManager::port_request(int node, std::uint8_t port, std::uint8_t state) const {
  const SmNode& n = nodes_[static_cast<std::size_t>(node)];
  std::uint8_t data[64];
  std::memcpy(data, n.ports[port].info, 64);
  put(data + 16, 2, n.lid);
  put(data + 18, 2, nodes_[0].lid);
  data[32] = static_cast<std::uint8_t>((data[32] & 0xf0) | state);
  data[34] &= 0xf8;  // LMC 0
  return set_request(n.path, kAttrPortInfo, port, data);
}

// One batch of PortInfo Sets; each answer is what the port holds now.
bool SubnetManager::set_ports(const std::vector<std::pair<int, std::uint8_t>>& ports, std::uint8_t state) {
  std::vector<SmpRequest> sets;
  for (const auto& [node, port] : ports) sets.push_back(port_request(node, port, state));
  const bool ok = smp_batch(sets);
  for (std::size_t i = 0; i < sets.size(); ++i)
    if (sets[i].ok)
      read_port(nodes_[static_cast<std::size_t>(ports[i].first)].ports[ports[i].second], sets[i].resp.data());
  return ok;
}

bool SubnetManager::activate_ports() {
  const std::uint16_t sm_lid = nodes_[0].lid;
  // Which ports carry data: a CA's port, a switch's port 0 and its linked ports.
  auto ports_where = [&](auto&& want) {
    std::vector<std::pair<int, std::uint8_t>> out;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const SmNode& n = nodes_[i];
      for (std::uint8_t p = 0; p < n.ports.size(); ++p) {
        const bool used = n.is_switch ? (p == 0 || (n.ports[p].link_up && n.ports[p].peer >= 0)) : p == n.ca_port;
        if (used && want(n, p)) out.push_back({static_cast<int>(i), p});
      }
    }
    return out;
  };
  // LIDs and the master SM first (a CA port's and a switch's port 0).
  bool ok = set_ports(ports_where([&](const SmNode& n, std::uint8_t p) {
                        return (!n.is_switch || p == 0) && (n.ports[p].lid != n.lid || n.ports[p].sm_lid != sm_lid);
                      }),
                      fabric::kPortStateNoChange);
  for (std::uint8_t want : {fabric::kPortStateArmed, fabric::kPortStateActive}) {
    const std::uint8_t from = want == fabric::kPortStateArmed ? fabric::kPortStateInit : fabric::kPortStateArmed;
    ok = set_ports(ports_where([&](const SmNode& n, std::uint8_t p) { return n.ports[p].state == from; }), want) && ok;
  }
  return ok;
}

}  // namespace nicsim::sm
