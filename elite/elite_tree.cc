#include "elite/elite_tree.h"

#include <fmt/format.h>

#include <deque>
#include <map>

namespace nicsim::elite {

std::uint32_t levels_for(std::uint32_t nodes) {
  std::uint32_t levels = 1;
  while (pow4(levels) < nodes) ++levels;
  return levels;
}

Tree build_tree(std::uint32_t nodes) {
  Tree tree;
  tree.nodes = nodes;
  tree.levels = levels_for(nodes);
  const std::uint32_t n = tree.levels;
  const std::uint64_t per_level = pow4(n - 1);
  // Switch number (into tree.switches) of (level, t), or -1 when absent.
  std::vector<std::vector<std::int64_t>> number(n, std::vector<std::int64_t>(per_level, -1));
  for (std::uint32_t level = 0; level < n; ++level) {
    for (std::uint64_t t = 0; t < per_level; ++t) {
      const std::uint64_t first = t / pow4(level) * pow4(level + 1);
      if (first >= nodes) continue;
      number[level][t] = static_cast<std::int64_t>(tree.switches.size());
      tree.switches.push_back({fmt::format("el{}_{}", level, t), level, static_cast<std::uint32_t>(t)});
    }
  }
  for (std::uint32_t h = 0; h < nodes; ++h)
    tree.links.push_back({true, h, 1, static_cast<std::uint32_t>(number[0][h / kArity]), h % kArity + 1});
  for (std::uint32_t level = 0; level + 1 < n; ++level) {
    const std::uint64_t weight = pow4(level);
    for (std::uint64_t t = 0; t < per_level; ++t) {
      if (number[level][t] < 0) continue;
      const std::uint64_t digit = t / weight % kArity;
      for (std::uint32_t u = 0; u < kArity; ++u) {
        const std::uint64_t upper = t - digit * weight + u * weight;
        tree.links.push_back({false, static_cast<std::uint32_t>(number[level][t]), kFirstUpPort + u,
                              static_cast<std::uint32_t>(number[level + 1][upper]),
                              static_cast<std::uint32_t>(digit) + 1});
      }
    }
  }
  return tree;
}

namespace {

class Placer {
 public:
  Placer(const Wiring& w, const std::vector<std::string>& switch_names, const std::vector<std::string>& node_names,
         Placement* out, PlaceError* error)
      : w_(w), sw_(switch_names), node_(node_names), out_(out), error_(error) {}

  bool run() {
    const auto count = static_cast<std::uint32_t>(w_.ports.size());
    out_->switches.assign(count, {});
    out_->node_id.assign(w_.node_count, -1);
    if (count == 0) return true;
    if (!check_links()) return false;
    level_.assign(count, -1);
    for (std::uint32_t s = 0; s < count; ++s)
      if (level_of(s, 0) < 0) return false;
    std::uint32_t top = 0;
    for (std::uint32_t s = 0; s < count; ++s) top = std::max(top, static_cast<std::uint32_t>(level_[s]));
    out_->levels = top + 1;
    return assign_bases(top) && check_nodes();
  }

 private:
  bool fail(PlaceError::Subject subject, std::uint32_t index, std::string message) {
    *error_ = {subject, index, std::move(message)};
    return false;
  }

  int bad_level(std::uint32_t s, std::string message) {
    fail(PlaceError::Subject::Switch, s, std::move(message));
    return -1;
  }

  // Ports 1-4 lead down to nodes or to the up ports of lower switches;
  // ports 5-8 lead up to the down ports of higher switches.
  bool check_links() {
    for (std::uint32_t s = 0; s < w_.ports.size(); ++s) {
      for (std::uint32_t i = 0; i < kPorts; ++i) {
        const Peer& p = w_.ports[s][i];
        const std::uint32_t port = i + 1;
        const bool down = port < kFirstUpPort;
        switch (p.kind) {
          case Peer::Kind::None:
            break;
          case Peer::Kind::Other:
            return fail(PlaceError::Subject::Link, p.link,
                        fmt::format("Elite switch '{}' port {} is linked to an IB switch: an Elite network holds "
                                    "only Elite switches and nodes",
                                    sw_[s], port));
          case Peer::Kind::Node:
            if (!down)
              return fail(PlaceError::Subject::Link, p.link,
                          fmt::format("node '{}' is on up port {} of Elite switch '{}' (nodes go on down ports 1-4)",
                                      node_[p.index], port, sw_[s]));
            break;
          case Peer::Kind::Elite:
            if (down == (p.port < kFirstUpPort))
              return fail(PlaceError::Subject::Link, p.link,
                          fmt::format("link joins {} port {} of Elite switch '{}' to {} port {} of '{}' (a down "
                                      "port 1-4 connects to an up port 5-8 of the switch below)",
                                      down ? "down" : "up", port, sw_[s], down ? "down" : "up", p.port, sw_[p.index]));
            break;
        }
      }
    }
    return true;
  }

  // Level of switch s from its down ports: 0 with nodes, 1 + the (common)
  // level of the switches below otherwise. -1 after an error.
  int level_of(std::uint32_t s, std::uint32_t depth) {
    if (level_[s] >= 0) return level_[s];
    if (depth > w_.ports.size())
      return bad_level(s, fmt::format("Elite switch '{}' is its own descendant (down links form a cycle)", sw_[s]));
    bool nodes = false, switches = false;
    int below = -1;
    for (std::uint32_t i = 0; i + 1 < kFirstUpPort; ++i) {
      const Peer& p = w_.ports[s][i];
      if (p.kind == Peer::Kind::Node) nodes = true;
      if (p.kind != Peer::Kind::Elite) continue;
      switches = true;
      const int l = level_of(p.index, depth + 1);
      if (l < 0) return -1;
      if (below >= 0 && l != below)
        return bad_level(s, fmt::format("Elite switch '{}' has switches of levels {} and {} below it (a fat tree "
                                        "is levelled)",
                                        sw_[s], below, l));
      below = l;
    }
    if (nodes && switches)
      return bad_level(s, fmt::format("Elite switch '{}' has both nodes and switches on its down ports", sw_[s]));
    if (!nodes && !switches)
      return bad_level(s, fmt::format("Elite switch '{}' has nothing on its down ports 1-4", sw_[s]));
    level_[s] = nodes ? 0 : below + 1;
    return level_[s];
  }

  bool has_up(std::uint32_t s) const {
    for (std::uint32_t i = kFirstUpPort - 1; i < kPorts; ++i)
      if (w_.ports[s][i].kind != Peer::Kind::None) return true;
    return false;
  }

  // Roots (no up link) cover positions from 0; a child on down port q+1 of
  // a level-L switch with base B starts at B + q*4^L. Every path to a
  // switch or node must agree.
  bool assign_bases(std::uint32_t top) {
    const auto count = static_cast<std::uint32_t>(w_.ports.size());
    std::vector<std::int64_t> base(count, -1);
    std::vector<std::uint32_t> via(count, 0);  // the parent that set it (for the error)
    std::deque<std::uint32_t> queue;
    for (std::uint32_t s = 0; s < count; ++s) {
      if (has_up(s)) continue;
      if (static_cast<std::uint32_t>(level_[s]) != top)
        return fail(PlaceError::Subject::Switch, s,
                    fmt::format("Elite switch '{}' at level {} has no up link, but the tree's top level is {}", sw_[s],
                                level_[s], top));
      base[s] = 0;
      via[s] = s;
      queue.push_back(s);
    }
    std::vector<std::uint32_t> node_via(w_.node_count, 0);
    while (!queue.empty()) {
      const std::uint32_t s = queue.front();
      queue.pop_front();
      const auto level = static_cast<std::uint32_t>(level_[s]);
      for (std::uint32_t q = 0; q < kArity; ++q) {
        const Peer& p = w_.ports[s][q];
        const std::int64_t child = base[s] + static_cast<std::int64_t>(q * pow4(level));
        if (p.kind == Peer::Kind::Node) {
          std::int64_t& id = out_->node_id[p.index];
          if (id >= 0 && id != child)
            return fail(PlaceError::Subject::Node, p.index,
                        fmt::format("node '{}' sits at Elite position {} below '{}' and {} below '{}'", node_[p.index],
                                    id, sw_[node_via[p.index]], child, sw_[s]));
          id = child;
          node_via[p.index] = s;
        } else if (p.kind == Peer::Kind::Elite) {
          if (base[p.index] >= 0) {
            if (base[p.index] != child)
              return fail(PlaceError::Subject::Switch, p.index,
                          fmt::format("Elite switch '{}' is reached as the subtree from position {} through '{}' "
                                      "and from position {} through '{}' (not a quaternary fat tree)",
                                      sw_[p.index], base[p.index], sw_[via[p.index]], child, sw_[s]));
            continue;
          }
          base[p.index] = child;
          via[p.index] = s;
          queue.push_back(p.index);
        }
      }
    }
    for (std::uint32_t s = 0; s < count; ++s)
      out_->switches[s] = {static_cast<std::uint32_t>(level_[s]), static_cast<std::uint32_t>(base[s])};
    return true;
  }

  // Node ids are exactly 0..N-1, one node per position.
  bool check_nodes() {
    std::map<std::int64_t, std::uint32_t> by_id;
    for (std::uint32_t n = 0; n < w_.node_count; ++n) {
      const std::int64_t id = out_->node_id[n];
      if (id < 0) continue;
      auto [it, fresh] = by_id.try_emplace(id, n);
      if (!fresh)
        return fail(PlaceError::Subject::Node, n,
                    fmt::format("nodes '{}' and '{}' both sit at Elite position {}", node_[it->second], node_[n], id));
    }
    std::int64_t expect = 0;
    for (auto [id, n] : by_id) {
      if (id != expect)
        return fail(PlaceError::Subject::Node, n,
                    fmt::format("Elite positions must be filled from 0 without gaps: node '{}' is at position {} "
                                "but position {} is empty",
                                node_[n], id, expect));
      ++expect;
    }
    out_->nodes = static_cast<std::uint32_t>(by_id.size());
    if (out_->nodes > kMaxNodes)
      return fail(PlaceError::Subject::Node, by_id.rbegin()->second,
                  fmt::format("the Elite network has {} nodes, more than the limit {}", out_->nodes, kMaxNodes));
    return true;
  }

  const Wiring& w_;
  const std::vector<std::string>& sw_;
  const std::vector<std::string>& node_;
  Placement* out_;
  PlaceError* error_;
  std::vector<int> level_;
};

}  // namespace

bool place(const Wiring& wiring, const std::vector<std::string>& switch_names,
           const std::vector<std::string>& node_names, Placement* out, PlaceError* error) {
  return Placer(wiring, switch_names, node_names, out, error).run();
}

}  // namespace nicsim::elite
