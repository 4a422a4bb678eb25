// The subnet manager's sweep: discovery by directed route, LID assignment,
// min-hop routing on the discovered graph, LFT and MFT programming, and
// port activation (Init -> Armed -> Active).
#include <algorithm>
#include <cstring>
#include <deque>

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
    assign_lids();
    compute_routes();
    ok = program_lfts() && program_mfts() && activate_ports();
  }
  stats_.finished = nicsim::now();
  return ok && stats_.failed == 0;
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
  struct Probe {
    std::vector<std::uint8_t> path;
    int from;
    std::uint8_t from_port;
  };
  std::deque<Probe> queue{{{port_}, 0, port_}};
  while (!queue.empty()) {
    Probe pr = std::move(queue.front());
    queue.pop_front();
    const int n = probe(pr.path, pr.from, pr.from_port);
    if (n < 0 || n + 1 != static_cast<int>(nodes_.size()) || !nodes_[n].is_switch) continue;  // known, CA, or lost
    if (pr.path.size() >= kMaxHops) continue;
    for (std::uint8_t p = 1; p <= nodes_[n].num_ports; ++p) {
      if (!nodes_[n].ports[p].link_up || nodes_[n].ports[p].peer >= 0) continue;
      std::vector<std::uint8_t> next = pr.path;
      next.push_back(p);
      queue.push_back({std::move(next), n, p});
    }
  }
  return true;
}

// Returns the node index reached by `path` (new or known), -1 if it did not
// answer. Records the link it was reached over.
int SubnetManager::probe(const std::vector<std::uint8_t>& path, int from, std::uint8_t from_port) {
  std::uint8_t r[kMadBytes];
  if (!smp(path, kMethodGet, kAttrNodeInfo, 0, nullptr, r)) return -1;
  const std::uint8_t* d = r + kData;
  const bool is_switch = d[2] == kNodeTypeSwitch;
  const std::uint64_t guid = get(d + (is_switch ? 12 : 20), 8);
  const std::uint8_t local = d[36];
  auto link = [&](int n) {
    if (local >= nodes_[n].ports.size()) return;
    nodes_[from].ports[from_port].peer = n;
    nodes_[from].ports[from_port].peer_port = local;
    nodes_[n].ports[local].peer = from;
    nodes_[n].ports[local].peer_port = from_port;
  };
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].guid == guid && nodes_[i].is_switch == is_switch) {
      link(static_cast<int>(i));
      return static_cast<int>(i);
    }
  SmNode node;
  node.guid = guid;
  node.is_switch = is_switch;
  node.num_ports = d[3];
  node.ca_port = is_switch ? 0 : local;
  node.path = path;
  node.ports.resize(node.num_ports + 1u);
  if (!smp(path, kMethodGet, kAttrNodeDescription, 0, nullptr, r)) return -1;
  node.name = first_word(r + kData);
  for (std::uint8_t p = is_switch ? 0 : local; p <= (is_switch ? node.num_ports : local); ++p) {
    if (!smp(path, kMethodGet, kAttrPortInfo, p, nullptr, r)) return -1;
    read_port(node.ports[p], r + kData);
  }
  nodes_.push_back(std::move(node));
  const int n = static_cast<int>(nodes_.size() - 1);
  link(n);
  return n;
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

bool SubnetManager::program_lfts() {
  bool ok = true;
  for (const SmNode& s : nodes_) {
    if (!s.is_switch) continue;
    const std::vector<std::uint8_t>& want = lft_[s.guid];
    std::vector<std::uint8_t>& held = lft_set_[s.guid];
    bool changed = false;
    std::uint8_t r[kMadBytes];
    for (std::size_t block = 0; block * 64 < want.size(); ++block) {
      std::uint8_t data[64];
      std::memset(data, 0xff, sizeof data);
      for (std::size_t i = 0; i < 64 && block * 64 + i < want.size(); ++i) data[i] = want[block * 64 + i];
      if (held.size() >= (block + 1) * 64 && std::memcmp(held.data() + block * 64, data, 64) == 0) continue;
      if (!smp(s.path, kMethodSet, kAttrLft, static_cast<std::uint32_t>(block), data, r)) {
        ok = false;
        held.clear();  // unknown now: rewrite everything next time
        break;
      }
      if (held.size() < (block + 1) * 64) held.resize((block + 1) * 64, 0xff);
      std::memcpy(held.data() + block * 64, data, 64);
      changed = true;
    }
    if (changed) {
      std::uint8_t info[64] = {};
      put(info + 6, 2, want.size() - 1);  // LinearFDBTop
      info[11] = 4;                       // clear PortStateChange
      ok = smp(s.path, kMethodSet, kAttrSwitchInfo, 0, info, r) && ok;
    }
  }
  return ok;
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
  bool ok = true;
  std::uint8_t r[kMadBytes];
  for (auto& [key, block] : want) {
    const SmNode& s = nodes_[key.first];
    auto& held = mft_set_[{s.guid, key.second}];
    if (held == block) continue;
    if (smp(s.path, kMethodSet, kAttrMft, key.second, block.data(), r))
      held = block;
    else
      ok = false;
  }
  return ok;
}

bool SubnetManager::set_port(int node, std::uint8_t port, std::uint8_t state) {
  SmNode& n = nodes_[static_cast<std::size_t>(node)];
  SmPort& p = n.ports[port];
  std::uint8_t data[64];
  std::memcpy(data, p.info, 64);
  put(data + 16, 2, n.lid);
  put(data + 18, 2, nodes_[0].lid);
  data[32] = static_cast<std::uint8_t>((data[32] & 0xf0) | state);
  data[34] &= 0xf8;  // LMC 0
  std::uint8_t r[kMadBytes];
  if (!smp(n.path, kMethodSet, kAttrPortInfo, port, data, r)) return false;
  read_port(p, r + kData);
  return true;
}

bool SubnetManager::activate_ports() {
  bool ok = true;
  const std::uint16_t sm_lid = nodes_[0].lid;
  // Which ports carry data: a CA's port, a switch's port 0 and its linked ports.
  auto each_port = [&](auto&& fn) {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const SmNode& n = nodes_[i];
      for (std::uint8_t p = 0; p < n.ports.size(); ++p) {
        const bool used = n.is_switch ? (p == 0 || (n.ports[p].link_up && n.ports[p].peer >= 0)) : p == n.ca_port;
        if (used) fn(static_cast<int>(i), p);
      }
    }
  };
  // LIDs and the master SM first (a CA port's and a switch's port 0).
  each_port([&](int i, std::uint8_t p) {
    const SmNode& n = nodes_[static_cast<std::size_t>(i)];
    if ((!n.is_switch || p == 0) && (n.ports[p].lid != n.lid || n.ports[p].sm_lid != sm_lid))
      ok = set_port(i, p, fabric::kPortStateNoChange) && ok;
  });
  for (std::uint8_t want : {fabric::kPortStateArmed, fabric::kPortStateActive}) {
    const std::uint8_t from = want == fabric::kPortStateArmed ? fabric::kPortStateInit : fabric::kPortStateArmed;
    each_port([&](int i, std::uint8_t p) {
      if (nodes_[static_cast<std::size_t>(i)].ports[p].state == from) ok = set_port(i, p, want) && ok;
    });
  }
  return ok;
}

}  // namespace nicsim::sm
