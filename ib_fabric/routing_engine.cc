#include "ib_fabric/routing_engine.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <numeric>

namespace nicsim::fabric::routing {

namespace {

struct EngineInfo {
  Engine engine;
  const char* name;
};
constexpr EngineInfo kEngines[] = {
#define NICSIM_X(id, text, doc) {Engine::id, text},
    NICSIM_ROUTING_ENGINES(NICSIM_X)
#undef NICSIM_X
};

std::uint16_t top_lid(const Graph& g) {
  std::uint16_t top = 0;
  for (const auto& n : g.nodes) top = std::max(top, n.lid);
  return top;
}

// Level of every switch: 0 where an adapter attaches, then one more per
// switch hop; -1 for adapters and switches no adapter reaches.
std::vector<int> switch_levels(const Graph& g) {
  std::vector<int> level(g.nodes.size(), -1);
  std::deque<int> queue;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    if (!g.nodes[i].is_switch) continue;
    for (const auto& l : g.nodes[i].ports)
      if (l.peer >= 0 && !g.nodes[static_cast<std::size_t>(l.peer)].is_switch) {
        level[i] = 0;
        queue.push_back(static_cast<int>(i));
        break;
      }
  }
  while (!queue.empty()) {
    const int u = queue.front();
    queue.pop_front();
    for (const auto& l : g.nodes[static_cast<std::size_t>(u)].ports)
      if (l.peer >= 0 && g.nodes[static_cast<std::size_t>(l.peer)].is_switch &&
          level[static_cast<std::size_t>(l.peer)] < 0) {
        level[static_cast<std::size_t>(l.peer)] = level[static_cast<std::size_t>(u)] + 1;
        queue.push_back(l.peer);
      }
  }
  return level;
}

// up*/down* ranks: distance from the root, the highest-level switch (the
// lowest index among equals).
std::vector<int> updn_ranks(const Graph& g, const std::vector<int>& level) {
  int root = -1;
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].is_switch && (root < 0 || level[i] > level[static_cast<std::size_t>(root)]))
      root = static_cast<int>(i);
  std::vector<int> rank(g.nodes.size(), -1);
  if (root < 0) return rank;
  rank[static_cast<std::size_t>(root)] = 0;
  std::deque<int> queue{root};
  while (!queue.empty()) {
    const int u = queue.front();
    queue.pop_front();
    for (const auto& l : g.nodes[static_cast<std::size_t>(u)].ports)
      if (l.peer >= 0 && g.nodes[static_cast<std::size_t>(l.peer)].is_switch &&
          rank[static_cast<std::size_t>(l.peer)] < 0) {
        rank[static_cast<std::size_t>(l.peer)] = rank[static_cast<std::size_t>(u)] + 1;
        queue.push_back(l.peer);
      }
  }
  return rank;
}

// u -> v goes up (toward the root).
bool goes_up(const std::vector<int>& rank, int u, int v) {
  const int ru = rank[static_cast<std::size_t>(u)], rv = rank[static_cast<std::size_t>(v)];
  return rv < ru || (rv == ru && v < u);
}

// The switch an adapter attaches to, and the port there (-1: none).
std::pair<int, std::uint32_t> attachment(const Graph& g, int ca) {
  for (const auto& l : g.nodes[static_cast<std::size_t>(ca)].ports)
    if (l.peer >= 0 && g.nodes[static_cast<std::size_t>(l.peer)].is_switch) return {l.peer, l.peer_port};
  return {-1, 0};
}

// Each adapter's place in the tree for D-mod-k: adapters ordered by their
// edge switch (by the lowest LID among its adapters), then by port.
std::vector<std::int64_t> tree_indices(const Graph& g) {
  std::map<int, std::uint16_t> edge_key;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].is_switch || g.nodes[i].lid == 0) continue;
    const int edge = attachment(g, static_cast<int>(i)).first;
    if (edge < 0) continue;
    auto [it, fresh] = edge_key.emplace(edge, g.nodes[i].lid);
    if (!fresh) it->second = std::min(it->second, g.nodes[i].lid);
  }
  std::vector<std::pair<std::pair<std::uint16_t, std::uint32_t>, std::size_t>> order;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].is_switch || g.nodes[i].lid == 0) continue;
    const auto [edge, port] = attachment(g, static_cast<int>(i));
    if (edge >= 0) order.push_back({{edge_key[edge], port}, i});
  }
  std::sort(order.begin(), order.end());
  std::vector<std::int64_t> index(g.nodes.size(), -1);
  for (std::size_t k = 0; k < order.size(); ++k) index[order[k].second] = static_cast<std::int64_t>(k);
  return index;
}

// The routing of one fabric: the state every destination's pass shares.
class Router {
 public:
  Router(const Graph& g, Engine engine, const std::vector<bool>& keep)
      : g_(g), engine_(engine), level_(switch_levels(g)) {
    if (engine_ == Engine::UpDown) rank_ = updn_ranks(g, level_);
    if (engine_ == Engine::FatTree) {
      index_ = tree_indices(g);
      stride_ = level_strides();
    }
    load_.resize(g.nodes.size());
    seen_in_round_.assign(g.nodes.size(), 0);
    ups_.resize(g.nodes.size());
    for (std::size_t i = 0; i < g.nodes.size(); ++i)
      if (g.nodes[i].is_switch && level_[i] >= 0) ups_[i] = up_ports(static_cast<int>(i));
    routes_.engine = engine;
    routes_.lft.resize(g.nodes.size());
    const std::uint16_t top = top_lid(g);
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      if (!g.nodes[i].is_switch) continue;
      if (i >= keep.size() || keep[i]) routes_.lft[i].assign(top + 1u, kNoRoute);
      load_[i].assign(g.nodes[i].ports.size(), 0);
    }
  }

  Routes run() {
    for (std::size_t t = 0; t < g_.nodes.size(); ++t)
      if (g_.nodes[t].lid != 0) route_to(static_cast<int>(t));
    return std::move(routes_);
  }

 private:
  enum class Reach : std::uint8_t { None, DownOnly, HasUp };

  // Strides of D-mod-k by level: the product of the up-port counts below.
  std::vector<std::int64_t> level_strides() const {
    std::vector<std::int64_t> ups_at;
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      if (level_[i] < 0) continue;
      const auto l = static_cast<std::size_t>(level_[i]);
      if (ups_at.size() <= l) ups_at.resize(l + 1, 0);
      if (ups_at[l] == 0) ups_at[l] = static_cast<std::int64_t>(up_ports(static_cast<int>(i)).size());
    }
    std::vector<std::int64_t> stride(ups_at.size() + 1, 1);
    for (std::size_t l = 0; l < ups_at.size(); ++l) stride[l + 1] = stride[l] * std::max<std::int64_t>(1, ups_at[l]);
    return stride;
  }

  std::vector<std::uint32_t> up_ports(int u) const {
    std::vector<std::uint32_t> ups;
    const auto& ports = g_.nodes[static_cast<std::size_t>(u)].ports;
    for (std::uint32_t p = 1; p < ports.size(); ++p) {
      const int v = ports[p].peer;
      if (v >= 0 && g_.nodes[static_cast<std::size_t>(v)].is_switch &&
          level_[static_cast<std::size_t>(v)] == level_[static_cast<std::size_t>(u)] + 1)
        ups.push_back(p);
    }
    return ups;
  }

  // Level by level from `t`: every switch is given its way to `t` the first
  // time one of its links reaches a switch (or `t`) that has one, legally.
  void route_to(int t) {
    const std::uint16_t lid = g_.nodes[static_cast<std::size_t>(t)].lid;
    reach_.assign(g_.nodes.size(), Reach::None);
    reach_[static_cast<std::size_t>(t)] = Reach::DownOnly;
    if (auto& row = routes_.lft[static_cast<std::size_t>(t)]; !row.empty()) row[lid] = 0;
    std::vector<int> frontier{t};
    std::vector<int> next;
    while (!frontier.empty()) {
      next.clear();
      ++round_;  // a switch joins `next` once per round, in the order first found
      for (int v : frontier)
        for (const auto& l : g_.nodes[static_cast<std::size_t>(v)].ports) {
          const int u = l.peer;
          if (u < 0 || !g_.nodes[static_cast<std::size_t>(u)].is_switch ||
              reach_[static_cast<std::size_t>(u)] != Reach::None ||
              seen_in_round_[static_cast<std::size_t>(u)] == round_)
            continue;
          seen_in_round_[static_cast<std::size_t>(u)] = round_;
          next.push_back(u);
        }
      // Decided against the rounds before only (so every way is shortest),
      // then settled together.
      std::vector<std::pair<int, Reach>> settled;
      for (int u : next)
        if (const Reach r = choose(u, t, lid); r != Reach::None) settled.push_back({u, r});
      frontier.clear();
      for (const auto& [u, r] : settled) {
        reach_[static_cast<std::size_t>(u)] = r;
        frontier.push_back(u);
      }
    }
  }

  // Gives switch u its port toward t through a switch settled in an earlier
  // round; returns how u then reaches t (None: no legal way yet).
  Reach choose(int u, int t, std::uint16_t lid) {
    const auto& ports = g_.nodes[static_cast<std::size_t>(u)].ports;
    std::vector<std::uint32_t>& best = best_;
    best.clear();
    bool best_down_only = false;
    for (std::uint32_t p = 1; p < ports.size(); ++p) {
      const int v = ports[p].peer;
      if (v < 0 || (v != t && !g_.nodes[static_cast<std::size_t>(v)].is_switch)) continue;
      const Reach rv = reach_[static_cast<std::size_t>(v)];
      if (rv == Reach::None) continue;
      // up*/down*: a way that goes down from u must stay down after.
      bool down_only = true;
      if (engine_ == Engine::UpDown && g_.nodes[static_cast<std::size_t>(v)].is_switch) {
        const bool up = goes_up(rank_, u, v);
        if (!up && rv == Reach::HasUp) continue;
        down_only = !up && rv == Reach::DownOnly;
      }
      if (best_down_only && !down_only) continue;
      if (down_only && !best_down_only) best.clear();
      best_down_only = best_down_only || down_only;
      best.push_back(p);
    }
    if (best.empty()) return Reach::None;
    const std::uint32_t port = pick(u, t, best);
    if (auto& row = routes_.lft[static_cast<std::size_t>(u)]; !row.empty()) row[lid] = static_cast<std::uint8_t>(port);
    ++load_[static_cast<std::size_t>(u)][port];
    return best_down_only ? Reach::DownOnly : Reach::HasUp;
  }

  std::uint32_t pick(int u, int t, const std::vector<std::uint32_t>& candidates) const {
    if (engine_ == Engine::FatTree && index_[static_cast<std::size_t>(t)] >= 0) {
      const std::vector<std::uint32_t>& ups = ups_[static_cast<std::size_t>(u)];
      if (ups.size() > 1) {
        const auto l = static_cast<std::size_t>(level_[static_cast<std::size_t>(u)]);
        const std::uint32_t want = ups[static_cast<std::size_t>(index_[static_cast<std::size_t>(t)] / stride_[l] %
                                                                static_cast<std::int64_t>(ups.size()))];
        if (std::find(candidates.begin(), candidates.end(), want) != candidates.end()) return want;
      }
    }
    const auto& load = load_[static_cast<std::size_t>(u)];
    return *std::min_element(candidates.begin(), candidates.end(),
                             [&](std::uint32_t a, std::uint32_t b) { return load[a] < load[b]; });
  }

  const Graph& g_;
  Engine engine_;
  std::vector<int> level_, rank_;
  std::vector<std::int64_t> index_, stride_;
  std::vector<std::vector<std::uint32_t>> load_;  // routes assigned per (switch, port)
  std::vector<Reach> reach_;
  std::vector<std::vector<std::uint32_t>> ups_;  // up_ports() of every switch
  std::vector<std::uint64_t> seen_in_round_;     // route_to's last round that found the switch
  std::uint64_t round_ = 0;
  std::vector<std::uint32_t> best_;  // choose()'s candidates (kept to spare an allocation per entry)
  Routes routes_;
};

}  // namespace

void Graph::connect(int a, std::uint32_t pa, int b, std::uint32_t pb) {
  auto grow = [this](int n, std::uint32_t p) {
    auto& ports = nodes[static_cast<std::size_t>(n)].ports;
    if (ports.size() <= p) ports.resize(p + 1u);
  };
  grow(a, pa);
  grow(b, pb);
  nodes[static_cast<std::size_t>(a)].ports[pa] = {b, pb};
  nodes[static_cast<std::size_t>(b)].ports[pb] = {a, pa};
}

const char* engine_name(Engine e) {
  for (const auto& i : kEngines)
    if (i.engine == e) return i.name;
  return "?";
}

bool parse_engine(std::string_view text, Engine* out) {
  for (const auto& i : kEngines)
    if (text == i.name) {
      *out = i.engine;
      return true;
    }
  return false;
}

std::string engine_names() {
  std::string s;
  for (const auto& i : kEngines) s += (s.empty() ? "" : ", ") + std::string(i.name);
  return s;
}

bool is_fat_tree(const Graph& g) {
  const std::vector<int> level = switch_levels(g);
  bool any = false;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    if (!g.nodes[i].is_switch) continue;
    if (level[i] < 0) return false;
    any = true;
    for (const auto& l : g.nodes[i].ports)
      if (l.peer >= 0 && g.nodes[static_cast<std::size_t>(l.peer)].is_switch &&
          std::abs(level[static_cast<std::size_t>(l.peer)] - level[i]) != 1)
        return false;
  }
  return any;
}

Routes compute(const Graph& g, Engine engine, const std::vector<bool>& keep) {
  if (engine == Engine::Auto) engine = is_fat_tree(g) ? Engine::FatTree : Engine::MinHop;
  return Router(g, engine, keep).run();
}

}  // namespace nicsim::fabric::routing

namespace nicsim::fabric::routing {

namespace {

// Links from every switch (and `t`) to `t`, through switches only.
std::vector<int> distances_to(const Graph& g, int t) {
  std::vector<int> dist(g.nodes.size(), -1);
  dist[static_cast<std::size_t>(t)] = 0;
  std::deque<int> queue{t};
  while (!queue.empty()) {
    const int v = queue.front();
    queue.pop_front();
    for (const auto& l : g.nodes[static_cast<std::size_t>(v)].ports) {
      const int u = l.peer;
      if (u < 0 || !g.nodes[static_cast<std::size_t>(u)].is_switch || dist[static_cast<std::size_t>(u)] >= 0) continue;
      dist[static_cast<std::size_t>(u)] = dist[static_cast<std::size_t>(v)] + 1;
      queue.push_back(u);
    }
  }
  return dist;
}

// Follows the tables from adapter `s` to `t`, counting into `c`.
void follow(const Graph& g, const Routes& r, const std::vector<int>& rank, const std::vector<int>& dist, int s, int t,
            RouteCheck& c) {
  const auto [edge, port] = attachment(g, s);
  if (edge < 0) return;
  ++c.pairs;
  const std::uint16_t lid = g.nodes[static_cast<std::size_t>(t)].lid;
  int cur = edge, hops = 1;
  bool went_down = false;
  for (int step = 0; step < 256; ++step) {
    const std::uint8_t out = r.lft[static_cast<std::size_t>(cur)][lid];
    if (out == 0 && cur == t) break;
    const auto& ports = g.nodes[static_cast<std::size_t>(cur)].ports;
    const int next = out == kNoRoute || out >= ports.size() ? -1 : ports[out].peer;
    if (next < 0 || (next != t && !g.nodes[static_cast<std::size_t>(next)].is_switch)) {
      ++c.unreachable;
      return;
    }
    ++hops;
    if (next == t) break;
    const bool up = goes_up(rank, cur, next);
    if (went_down && up) ++c.down_then_up;
    went_down = went_down || !up;
    cur = next;
    if (step == 255) {
      ++c.loops;
      return;
    }
  }
  if (hops > 1 + dist[static_cast<std::size_t>(edge)]) ++c.longer_than_shortest;
}

// The largest excess of one up port's destination count over the mean of
// its switch's up ports (fat trees).
double up_port_excess(const Graph& g, const Routes& r, const std::vector<int>& level) {
  double worst = 0;
  for (std::size_t u = 0; u < g.nodes.size(); ++u) {
    if (!g.nodes[u].is_switch) continue;
    std::map<std::uint32_t, std::size_t> count;
    const auto& ports = g.nodes[u].ports;
    for (std::uint32_t p = 1; p < ports.size(); ++p) {
      const int v = ports[p].peer;
      if (v >= 0 && g.nodes[static_cast<std::size_t>(v)].is_switch &&
          level[static_cast<std::size_t>(v)] == level[u] + 1)
        count[p] = 0;
    }
    if (count.size() < 2) continue;
    for (const auto& n : g.nodes) {
      if (n.is_switch || n.lid == 0) continue;
      auto it = count.find(r.lft[u][n.lid]);
      if (it != count.end()) ++it->second;
    }
    std::size_t sum = 0, most = 0;
    for (const auto& [p, k] : count) sum += k, most = std::max(most, k);
    worst = std::max(worst, static_cast<double>(most) - static_cast<double>(sum) / static_cast<double>(count.size()));
  }
  return worst;
}

}  // namespace

RouteCheck check_routes(const Graph& g, const Routes& r) {
  RouteCheck c;
  const std::vector<int> level = switch_levels(g);
  const std::vector<int> rank = updn_ranks(g, level);
  for (std::size_t t = 0; t < g.nodes.size(); ++t) {
    if (g.nodes[t].lid == 0) continue;
    const std::vector<int> dist = distances_to(g, static_cast<int>(t));
    for (std::size_t s = 0; s < g.nodes.size(); ++s)
      if (s != t && !g.nodes[s].is_switch && g.nodes[s].lid != 0)
        follow(g, r, rank, dist, static_cast<int>(s), static_cast<int>(t), c);
  }
  if (is_fat_tree(g)) c.max_up_port_excess = up_port_excess(g, r, level);
  return c;
}

}  // namespace nicsim::fabric::routing
