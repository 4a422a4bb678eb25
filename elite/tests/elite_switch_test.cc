// The Elite switch in a whole quaternary fat tree: exact timing through 1, 3
// and 5 switches, hop counts from the lowest common ancestor, adaptive
// up-routing under a permutation (spread and reproducibility), hardware
// broadcast, two virtual channels under back-pressure, replies carried back
// along their packets' routes, and link failures (avoided upward, counted when undeliverable).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "elite/tests/elite_harness.h"

namespace {

using namespace nicsim;
using namespace nicsim::elite;
using namespace nicsim::elite::testing;

// Level of the lowest common ancestor switch of leaf positions a and b.
std::uint32_t lca_level(std::uint32_t a, std::uint32_t b) {
  std::uint32_t level = 0;
  while (a / pow4(level + 1) != b / pow4(level + 1)) ++level;
  return level;
}

TEST(EliteFabric, ExactArrivalThrough1And3And5Switches) {
  EliteBench b(64);
  // 400 MB/s: 64 B take 160 ns, 320 B 800 ns. 10 ns cables, 35 ns per switch.
  b.at(0, [&] { b.nodes[0]->send(1, 64); });           // same leaf: 1 switch
  b.at(10 * kUs, [&] { b.nodes[0]->send(4, 64); });    // LCA level 1: 3 switches
  b.at(20 * kUs, [&] { b.nodes[0]->send(16, 64); });   // LCA level 2: 5 switches
  b.at(30 * kUs, [&] { b.nodes[63]->send(0, 320); });  // 5 switches, 320 B
  sc_core::sc_start();
  ASSERT_EQ(b.nodes[1]->arrivals.size(), 1u);
  ASSERT_EQ(b.nodes[4]->arrivals.size(), 1u);
  ASSERT_EQ(b.nodes[16]->arrivals.size(), 1u);
  ASSERT_EQ(b.nodes[0]->arrivals.size(), 1u);
  // Head: (switches + 1) cables + switches x 35 ns; tail 160 ns behind.
  EXPECT_EQ(b.nodes[1]->arrivals[0].head, 2 * 10 * kNs + 35 * kNs);
  EXPECT_EQ(b.nodes[1]->arrivals[0].done, 215 * kNs);
  EXPECT_EQ(b.nodes[4]->arrivals[0].done, 10 * kUs + 4 * 10 * kNs + 3 * 35 * kNs + 160 * kNs);
  EXPECT_EQ(b.nodes[16]->arrivals[0].done, 20 * kUs + 6 * 10 * kNs + 5 * 35 * kNs + 160 * kNs);
  EXPECT_EQ(b.nodes[0]->arrivals[0].done, 30 * kUs + 6 * 10 * kNs + 5 * 35 * kNs + 800 * kNs);
  EXPECT_EQ(b.nodes[1]->arrivals[0].hops, 2u);
  EXPECT_EQ(b.nodes[4]->arrivals[0].hops, 4u);
  EXPECT_EQ(b.nodes[16]->arrivals[0].hops, 6u);
  for (auto* n : {&b.nodes[1], &b.nodes[4], &b.nodes[16], &b.nodes[0]}) EXPECT_TRUE((*n)->arrivals[0].intact);
}

TEST(EliteFabric, HopCountsFollowTheLowestCommonAncestor) {
  EliteBench b(64);
  b.at(0, [&] {
    for (std::uint32_t i = 0; i < 64; ++i)
      for (std::uint32_t j = 0; j < 64; ++j)
        if (i != j) b.nodes[i]->send(static_cast<std::uint16_t>(j), 64);
  });
  sc_core::sc_start();
  std::uint64_t links = 0;
  for (std::uint32_t j = 0; j < 64; ++j) {
    ASSERT_EQ(b.nodes[j]->arrivals.size(), 63u) << j;
    std::set<std::uint32_t> from;
    for (const Arrival& a : b.nodes[j]->arrivals) {
      EXPECT_TRUE(a.intact);
      EXPECT_EQ(a.hops, 2 * lca_level(a.src, j) + 2) << a.src << "->" << j;
      from.insert(a.src);
      links += a.hops;
    }
    EXPECT_EQ(from.size(), 63u);
  }
  // Per destination: 3 same-leaf sources (2 links), 12 at level 1 (4), 48 at level 2 (6).
  EXPECT_EQ(links, 64u * (3 * 2 + 12 * 4 + 48 * 6));
  EXPECT_EQ(b.fabric.packet_hops(), links);
  EXPECT_EQ(b.fabric.pool().live(), 0u);
}

// Each node sends `packets` 320-byte packets to its partner in a seeded
// random permutation, all at once. Returns a digest of every arrival and
// every switch's up-port choices.
struct PermutationRun {
  std::map<std::string, std::array<std::uint64_t, kArity>> up;
  std::uint64_t delivered = 0, intact = 0, digest = 1469598103934665603ull;
};

PermutationRun run_permutation(std::uint64_t seed, std::uint32_t packets) {
  EliteBench b(64, {}, {}, seed);
  Rng rng(seed, "permutation");
  std::vector<std::uint32_t> perm(64);
  for (std::uint32_t i = 0; i < 64; ++i) perm[i] = i;
  for (std::uint32_t i = 63; i > 0; --i) std::swap(perm[i], perm[rng.below(i + 1)]);
  b.at(0, [&] {
    for (std::uint32_t k = 0; k < packets; ++k)
      for (std::uint32_t i = 0; i < 64; ++i) b.nodes[i]->send(static_cast<std::uint16_t>(perm[i]), 320);
  });
  sc_core::sc_start();
  PermutationRun r;
  for (auto& n : b.nodes)
    for (const Arrival& a : n->arrivals) {
      ++r.delivered;
      r.intact += a.intact;
      for (std::uint64_t v : {a.id, static_cast<std::uint64_t>(a.src), a.done})
        r.digest = (r.digest ^ v) * 1099511628211ull;
    }
  for (auto& s : b.switches) r.up[s->name()] = s->stats().up_choices;
  return r;
}

TEST(EliteFabric, AdaptiveUpRoutingSpreadsAPermutation) {
  constexpr std::uint32_t kPackets = 100;
  PermutationRun r = run_permutation(7, kPackets);
  EXPECT_EQ(r.delivered, 64u * kPackets);
  EXPECT_EQ(r.intact, r.delivered);
  // Every switch below the top that sends anything up uses all 4 up links,
  // and no up link carries more than 1.5x the least loaded one of its switch.
  std::uint32_t switches_sending_up = 0;
  for (auto& [name, up] : r.up) {
    const std::uint64_t total = up[0] + up[1] + up[2] + up[3];
    if (name.rfind("el2_", 0) == 0) {
      EXPECT_EQ(total, 0u) << name;  // the top has no up links
      continue;
    }
    if (total == 0) continue;
    ++switches_sending_up;
    const auto [lo, hi] = std::minmax_element(up.begin(), up.end());
    EXPECT_GT(*lo, 0u) << name;
    EXPECT_LE(*hi * 2, *lo * 3) << name << " " << up[0] << " " << up[1] << " " << up[2] << " " << up[3];
  }
  EXPECT_GE(switches_sending_up, 16u);
}

TEST(EliteFabric, SameSeedSameTrace) {
  // Two runs in separate processes (a SystemC kernel runs once per process).
  auto digest_in_child = [](std::uint64_t seed) {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      PermutationRun r = run_permutation(seed, 20);
      std::uint64_t out[2] = {r.digest, r.delivered};
      ssize_t w = write(fds[1], out, sizeof out);
      _exit(w == sizeof out ? 0 : 1);
    }
    close(fds[1]);
    std::uint64_t in[2] = {0, 0};
    EXPECT_EQ(read(fds[0], in, sizeof in), static_cast<ssize_t>(sizeof in));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_EQ(in[1], 64u * 20);
    return in[0];
  };
  const std::uint64_t a = digest_in_child(3), b = digest_in_child(3), c = digest_in_child(4);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);  // a different permutation gives a different trace
}

TEST(EliteFabric, BroadcastReachesEveryNodeOfTheRangeOnce) {
  EliteBench b(64);
  struct Case {
    std::uint32_t sender, lo, hi;
  };
  const std::vector<Case> cases = {
      {5, 4, 7},     // the sender's own leaf, itself included
      {0, 5, 6},     // part of the next leaf, without the sender
      {3, 2, 9},     // across three leaves of one level-1 subtree
      {63, 10, 37},  // across level-1 and level-2 subtrees
      {20, 0, 63},   // the whole machine
      {40, 0, 63},
  };
  std::map<std::uint32_t, std::uint32_t> sent;  // sender -> sequence of its next frame
  std::vector<std::uint32_t> seqs;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    seqs.push_back(sent[cases[k].sender]++);
    b.at(static_cast<Tick>(k) * 20 * kUs, [&b, c = cases[k]] {
      b.nodes[c.sender]->send(static_cast<std::uint16_t>(c.lo), 64, 0, fabric::kPacketElan,
                              static_cast<std::uint16_t>(c.hi));
    });
  }
  sc_core::sc_start();
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    for (std::uint32_t n = 0; n < 64; ++n) {
      std::vector<const Arrival*> got;
      for (const Arrival& a : b.nodes[n]->arrivals)
        if (a.src == c.sender && a.seq == seqs[k]) got.push_back(&a);
      const bool in_range = n >= c.lo && n <= c.hi;
      ASSERT_EQ(got.size(), in_range ? 1u : 0u) << "case " << k << " node " << n;
      if (in_range) {
        EXPECT_TRUE(got[0]->intact);
      }
    }
  }
  // A full-machine broadcast climbs to the top, so every copy crosses 5
  // switches: all 64 arrive at the same exact time.
  for (std::uint32_t n = 0; n < 64; ++n)
    for (const Arrival& a : b.nodes[n]->arrivals)
      if (a.src == 20) {
        EXPECT_EQ(a.done, 4 * 20 * kUs + 6 * 10 * kNs + 5 * 35 * kNs + 160 * kNs) << n;
      }
  std::uint64_t copies = 0;
  for (auto& s : b.switches) copies += s->stats().broadcast_copies;
  // Copies made on the way down, switch by switch: [4,7] 4 at the leaf;
  // [5,6] 1 + 2; [2,9] 3 at level 1 + 2 + 4 + 2 at the leaves; [10,37] 3 at
  // the top, 2 + 4 + 2 in subtree 0, 4 + 16 in subtree 1, 2 + 4 + 2 in
  // subtree 2; a whole machine 4 + 16 + 64.
  EXPECT_EQ(copies, 4u + 3 + 11 + 39 + 2 * 84);
  EXPECT_EQ(b.fabric.pool().live(), 0u);
}

TEST(EliteFabric, BlockedVc0DoesNotBlockVc1) {
  // 16 nodes, 2 levels; node 0 -> node 5 crosses 3 switches. Node 5 stops
  // freeing VC0 buffers, so VC0 backs up all the way to node 0.
  // 1 KiB buffers hold 4 packets of 256 B; the flood is more than every
  // buffer on the way (spread over 4 up links) can hold.
  constexpr int kFlood = 60;
  EliteBench b(16, {{"vl_buffer", "1KiB"}});
  b.nodes[5]->hold(0);
  b.at(0, [&] {
    for (int i = 0; i < kFlood; ++i) b.nodes[0]->send(5, 256, 0);
  });
  b.at(50 * kUs, [&] { b.nodes[0]->send(5, 64, 1); });  // data on VC1
  b.at(100 * kUs, [&] { b.nodes[5]->release_held(); });
  sc_core::sc_start();
  const auto& got = b.nodes[5]->arrivals;
  ASSERT_EQ(got.size(), kFlood + 1u);
  // The VC1 packet passed the blocked VC0 at full speed.
  EXPECT_EQ(got[0].vl, 1u);
  EXPECT_EQ(got[0].done, 50 * kUs + 4 * 10 * kNs + 3 * 35 * kNs + 160 * kNs);
  // Then every VC0 packet once node 5 frees its buffers (adaptive routing
  // may reorder them: they took different up links).
  std::set<std::uint32_t> seqs;
  for (int i = 0; i < kFlood; ++i) {
    EXPECT_EQ(got[1 + i].vl, 0u);
    EXPECT_GE(got[1 + i].done, 100 * kUs);
    EXPECT_TRUE(got[1 + i].intact);
    seqs.insert(got[1 + i].seq);
  }
  EXPECT_EQ(seqs.size(), static_cast<std::size_t>(kFlood));
  EXPECT_EQ(*seqs.rbegin(), static_cast<std::uint32_t>(kFlood - 1));
  EXPECT_GT(b.nodes[0]->port(1).stats().credit_stalls, 0u);
  EXPECT_EQ(b.fabric.pool().live(), 0u);
}

TEST(EliteFabric, RepliesReturnAlongTheirPacketsRoutes) {
  // Node 5 answers each of node 0's packets with a 16-byte reply carried
  // back along the packet's route (as the Elan3's ack tokens are). A reply
  // neither queues nor waits for a wire, so however loaded the links, each
  // takes exactly the route's latency back: 4 links of 10 ns, 3 switches of
  // 35 ns, its 16 bytes at 400 MB/s.
  EliteBench b(16);
  b.nodes[5]->answer();
  b.at(0, [&] { b.nodes[0]->send(5, 64, 0); });
  b.at(10 * kUs, [&] {
    for (int i = 0; i < 40; ++i) b.nodes[0]->send(5, 256, 0);
  });
  b.at(10 * kUs, [&] {
    for (int i = 0; i < 40; ++i) b.nodes[1]->send(4, 256, 0);  // data the other way on node 0's leaf
  });
  sc_core::sc_start();
  ASSERT_EQ(b.nodes[5]->arrivals.size(), 41u);
  const auto& replies = b.nodes[0]->replies;
  ASSERT_EQ(replies.size(), 41u);
  const Tick data_done = 4 * 10 * kNs + 3 * 35 * kNs + 160 * kNs;
  EXPECT_EQ(b.nodes[5]->arrivals[0].done, data_done);
  EXPECT_EQ(replies[0].head, data_done);  // answered when the tail is in
  std::set<std::uint32_t> seqs;
  for (const Arrival& r : replies) {
    EXPECT_EQ(r.src, 5u);
    EXPECT_EQ(r.hops, 4u);
    EXPECT_TRUE(r.intact);
    EXPECT_EQ(r.done - r.head, 4 * 10 * kNs + 3 * 35 * kNs + 40 * kNs);
    seqs.insert(r.seq);
  }
  EXPECT_EQ(seqs.size(), 41u);
  EXPECT_EQ(b.fabric.pool().live(), 0u);
}

TEST(EliteFabric, ARepliesRouteIsItsPacketsNotANewOne) {
  // Node 0 -> node 5 goes up one of leaf el0_0's four up links. Once the
  // packet has passed, that link fails; the other three are up, so a reply
  // routed anew would get through, but the reply takes the packet's route
  // back and is lost on the failed link.
  EliteBench b(16);
  b.nodes[5]->answer();
  b.at(0, [&] { b.nodes[0]->send(5, 64, 0); });
  fabric::Link* used = nullptr;
  b.at(300 * kNs, [&] {
    const auto& up = b.sw("el0_0").stats().up_choices;
    for (std::uint32_t u = 0; u < kArity; ++u)
      if (up[u]) used = &b.link_between("el0_0", kFirstUpPort + u);
    ASSERT_NE(used, nullptr);
    used->set_up(false, "test");  // the data's tail left it at 205 ns
  });
  sc_core::sc_start();
  ASSERT_EQ(b.nodes[5]->arrivals.size(), 1u);
  EXPECT_TRUE(b.nodes[5]->arrivals[0].intact);
  EXPECT_TRUE(b.nodes[0]->replies.empty());
  ASSERT_NE(used, nullptr);
  EXPECT_EQ(used->b().stats().drops_link_down, 1u);  // the top switch's port, sending it down
  EXPECT_EQ(b.fabric.pool().live(), 0u);
}

TEST(EliteFabric, ALinkGoingDownLosesTheRepliesOnIt) {
  // Node 0 -> node 5, 64 B: the tail is in at 305 ns, when node 5 answers;
  // the reply's tail would reach node 0 at 490 ns.
  // - The first packet's tail has left node 0's link by 170 ns; the link
  //   fails at 200 ns, so the reply cannot cross it: lost as it is sent.
  // - The link is back at 1 us; the second packet (at 2 us) is answered at
  //   2,305 ns and the link fails at 2,400 ns, under the reply: lost in
  //   flight, found when its tail would be in.
  EliteBench b(16);
  b.nodes[5]->answer();
  fabric::Link& l = b.link_between("h0", 1);
  b.at(0, [&] { b.nodes[0]->send(5, 64, 0); });
  b.at(200 * kNs, [&] { l.set_up(false, "test"); });
  b.at(1 * kUs, [&] { l.set_up(true, "test"); });
  b.at(2 * kUs, [&] { b.nodes[0]->send(5, 64, 0); });
  b.at(2400 * kNs, [&] { l.set_up(false, "test"); });
  sc_core::sc_start();
  ASSERT_EQ(b.nodes[5]->arrivals.size(), 2u);
  EXPECT_TRUE(b.nodes[5]->arrivals[0].intact);
  EXPECT_TRUE(b.nodes[5]->arrivals[1].intact);
  const auto& replies = b.nodes[0]->replies;
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].seq, 1u);
  EXPECT_EQ(replies[0].done, 2 * kUs + 490 * kNs);
  EXPECT_FALSE(replies[0].intact);
  // The leaf's port that sends over node 0's link counts both losses.
  EXPECT_EQ(l.b().stats().drops_link_down, 2u);
  EXPECT_EQ(b.fabric.pool().live(), 0u);
}

// Runs `fn` in a child process (a SystemC kernel runs once per process) and
// returns the words it produced.
std::vector<std::uint64_t> words_from_child(const std::function<std::vector<std::uint64_t>()>& fn) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const std::vector<std::uint64_t> out = fn();
    const std::uint64_t n = out.size();
    bool ok = write(fds[1], &n, sizeof n) == sizeof n;
    for (std::uint64_t w : out) ok = ok && write(fds[1], &w, sizeof w) == sizeof w;
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  std::uint64_t n = 0;
  std::vector<std::uint64_t> in;
  if (read(fds[0], &n, sizeof n) == sizeof n) {
    in.resize(n);
    for (std::uint64_t& w : in)
      if (read(fds[0], &w, sizeof w) != sizeof w) break;
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return in;
}

TEST(EliteFabric, AVl0OnlySenderSkipsArbitrationWithTheSameTiming) {
  // Node 0's port on its two-VC link, told that its owner sends on VC0 only,
  // commits each packet as it queues (no wake-up when the wire frees); the
  // arrivals are exactly those of the arbitrating port. A VC1 packet later
  // makes it arbitrate, still with the same arrivals.
  auto run = [](bool vl0_only) {
    EliteBench b(16);
    if (vl0_only) b.nodes[0]->port(1).send_vl0_only();
    b.at(0, [&] {
      for (int i = 0; i < 20; ++i) b.nodes[0]->send(5, 320, 0);
    });
    b.at(50 * kUs, [&] {
      for (int i = 0; i < 10; ++i) b.nodes[0]->send(5, 320, static_cast<std::uint8_t>(i % 2));
    });
    sc_core::sc_start();
    std::vector<std::uint64_t> out{b.sim.calendar().events_fired()};
    for (const Arrival& a : b.nodes[5]->arrivals) {
      out.push_back(a.seq);
      out.push_back(a.done);
      out.push_back(a.vl);
      out.push_back(a.intact);
    }
    return out;
  };
  const std::vector<std::uint64_t> fifo = words_from_child([&] { return run(true); });
  const std::vector<std::uint64_t> arbitrated = words_from_child([&] { return run(false); });
  ASSERT_EQ(fifo.size(), 1 + 4 * 30u);
  ASSERT_EQ(arbitrated.size(), fifo.size());
  for (std::size_t i = 1; i < fifo.size(); ++i) EXPECT_EQ(fifo[i], arbitrated[i]) << "word " << i;
  for (std::size_t i = 4; i < fifo.size(); i += 4) EXPECT_EQ(fifo[i], 1u) << "intact, word " << i;
  EXPECT_LT(fifo[0] + 15, arbitrated[0]);  // about one wake-up per queued packet fewer
}

TEST(EliteFabric, SwitchPortsCommitAheadWithTheSameTiming) {
  // Nodes 0, 2 and 3 each send five 320-byte packets to node 1 through their
  // leaf switch, whose port 2 then sends 15 packets back to back (800 ns
  // each) while the sources wait on credits. The switch's ports carry VC0
  // only and commit each packet as it queues; a VC1 packet sent through
  // port 2 first makes that port arbitrate instead. Both give the same
  // arrivals, in the same order; the committing port needs no wake-ups.
  // (The VC1 packet comes from node 5, on another leaf, so the senders'
  // sequence numbers are the same in both runs.)
  auto run = [](bool vc1_first) {
    EliteBench b(16);
    for (std::uint32_t n : {0u, 2u, 3u}) b.nodes[n]->port(1).send_vl0_only();
    b.at(0, [&] {
      if (vc1_first) b.nodes[5]->send(1, 64, 1);
    });
    b.at(10 * kUs, [&] {
      for (int k = 0; k < 5; ++k)
        for (std::uint32_t n : {0u, 2u, 3u}) b.nodes[n]->send(1, 320, 0);
    });
    b.at(50 * kUs, [&] {
      if (!vc1_first) b.nodes[5]->send(1, 64, 1);
    });
    std::uint64_t events_before_burst = 0;
    b.at(10 * kUs - 1, [&] { events_before_burst = b.sim.calendar().events_fired(); });
    std::uint64_t burst_events = 0;
    b.at(40 * kUs, [&] { burst_events = b.sim.calendar().events_fired() - events_before_burst; });
    sc_core::sc_start();
    std::vector<std::uint64_t> out{burst_events};
    for (const Arrival& a : b.nodes[1]->arrivals) {
      if (a.vl != 0) continue;
      out.push_back(a.src);
      out.push_back(a.seq);
      out.push_back(a.done);
      out.push_back(a.intact);
    }
    return out;
  };
  const std::vector<std::uint64_t> committed = words_from_child([&] { return run(false); });
  const std::vector<std::uint64_t> arbitrated = words_from_child([&] { return run(true); });
  ASSERT_EQ(committed.size(), 1 + 4 * 15u);
  ASSERT_EQ(arbitrated.size(), committed.size());
  for (std::size_t i = 1; i < committed.size(); ++i) EXPECT_EQ(committed[i], arbitrated[i]) << "word " << i;
  // Heads reach the switch 10 ns after the burst starts and leave it 35 ns
  // later; the port then never idles: tails at 10 us + 855 ns + k x 800 ns.
  std::map<std::uint64_t, std::uint64_t> next_seq;  // per source
  for (std::size_t k = 0; k < 15; ++k) {
    const std::uint64_t* w = &committed[1 + 4 * k];
    EXPECT_EQ(w[2], 10 * kUs + 855 * kNs + k * 800 * kNs) << "packet " << k;
    EXPECT_EQ(w[3], 1u) << "intact, packet " << k;
    EXPECT_EQ(w[1], next_seq[w[0]]++) << "in order per source, packet " << k;
  }
  // Every event of the burst is an arrival (15 at the switch, 15 at node 1)
  // or one of the test's own; the arbitrating port adds about one wake-up
  // per packet it sends.
  EXPECT_LE(committed[0], 30u + 2u);
  EXPECT_GE(arbitrated[0], committed[0] + 12u);
}

TEST(EliteFabric, UpRoutingAvoidsADeadLink) {
  EliteBench b(16);
  fabric::Link& dead = b.link_between("el0_0", 5);
  b.at(0, [&] { dead.set_up(false, "test"); });
  b.at(1 * kUs, [&] {
    for (int k = 0; k < 4; ++k)
      for (std::uint16_t d = 4; d < 16; ++d) b.nodes[k % 4]->send(d, 256);
  });
  sc_core::sc_start();
  std::uint32_t delivered = 0;
  for (std::uint32_t d = 4; d < 16; ++d) delivered += static_cast<std::uint32_t>(b.nodes[d]->arrivals.size());
  EXPECT_EQ(delivered, 48u);
  const auto& up = b.sw("el0_0").stats().up_choices;
  EXPECT_EQ(up[0], 0u);  // port 5 is down
  EXPECT_GT(up[1], 0u);
  EXPECT_GT(up[2], 0u);
  EXPECT_GT(up[3], 0u);
  EXPECT_EQ(up[1] + up[2] + up[3], 48u);
  EXPECT_EQ(dead.a().stats().drops_link_down, 0u);
}

TEST(EliteFabric, UndeliverablePacketsAreCountedNotLost) {
  EliteBench b(16);
  b.at(0, [&] {
    b.link_between("h5", 1).set_up(false, "test");
    for (std::uint32_t p = 5; p <= 8; ++p) b.link_between("el0_3", p).set_up(false, "test");
  });
  b.at(1 * kUs, [&] {
    b.nodes[0]->send(5, 64);                               // node 5's own link is down
    b.nodes[0]->send(16, 64);                              // no node 16
    b.nodes[0]->send(10, 64, 0, fabric::kPacketElan, 20);  // range beyond the machine
    b.nodes[12]->send(0, 64);                              // leaf 3 has no live up link
    b.nodes[1]->send(13, 64);                              // no live way down into leaf 3
    b.nodes[0]->send(4, 64, 0, fabric::kPacketElan, 7);    // broadcast; node 5 unreachable
    b.nodes[13]->send(12, 64);                             // inside leaf 3: fine
  });
  sc_core::sc_start();
  EXPECT_EQ(b.nodes[5]->arrivals.size(), 0u);
  EXPECT_EQ(b.sw("el0_1").stats().dead_route, 1u);
  EXPECT_EQ(b.sw("el0_1").stats().broadcast_lost, 1u);
  EXPECT_EQ(b.sw("el0_0").stats().unroutable, 2u);
  EXPECT_EQ(b.sw("el0_3").stats().dead_route, 1u);
  std::uint64_t dead_above = 0;
  for (int t = 0; t < 4; ++t) dead_above += b.sw("el1_" + std::to_string(t)).stats().dead_route;
  EXPECT_EQ(dead_above, 1u);
  for (std::uint32_t n : {4u, 6u, 7u}) EXPECT_EQ(b.nodes[n]->arrivals.size(), 1u) << n;
  ASSERT_EQ(b.nodes[12]->arrivals.size(), 1u);
  EXPECT_EQ(b.nodes[12]->arrivals[0].src, 13u);
  EXPECT_EQ(b.nodes[0]->arrivals.size(), 0u);
  EXPECT_EQ(b.nodes[13]->arrivals.size(), 0u);
  EXPECT_EQ(b.fabric.pool().live(), 0u);
}

TEST(EliteFabric, OneStreamSpreadsOverUpLinksAndStaysInOrder) {
  // Back-to-back packets of one stream: each finds the previous one's up
  // link busy and takes the next; all paths are alike and otherwise idle, so
  // the stream still arrives in order, at the link rate.
  EliteBench b(64);
  b.at(0, [&] {
    for (int k = 0; k < 40; ++k) b.nodes[0]->send(63, 320);
  });
  sc_core::sc_start();
  const auto& got = b.nodes[63]->arrivals;
  ASSERT_EQ(got.size(), 40u);
  for (std::uint32_t k = 0; k < 40; ++k) {
    EXPECT_EQ(got[k].seq, k);
    // First one after 6 cables + 5 switches + 800 ns, then one per 800 ns.
    EXPECT_EQ(got[k].done, 6 * 10 * kNs + 5 * 35 * kNs + (k + 1) * 800 * kNs) << k;
  }
  // The leaf sends 10 up each link; each level-1 switch spreads its 10 again.
  for (std::uint64_t n : b.sw("el0_0").stats().up_choices) EXPECT_EQ(n, 10u);
  for (const char* name : {"el1_0", "el1_1", "el1_2", "el1_3"}) {
    const auto& up = b.sw(name).stats().up_choices;
    EXPECT_EQ(up[0] + up[1] + up[2] + up[3], 10u) << name;
    for (std::uint64_t n : up) EXPECT_GE(n, 2u) << name;
  }
}

// Leaf 0's four nodes each send a burst to node 63 while only up port 8 of
// their leaf is alive, so a queue builds there; at 2 us ports 5-7 come back.
// Without stickiness later packets take the idle ports and overtake the
// queued ones. Returns how many packets arrived after a later packet of
// their own stream, and how often a packet followed its pair's queued ones.
std::pair<std::uint32_t, std::uint64_t> bursts(bool sticky) {
  EliteBench b(64, {}, {{"sticky", sticky ? "true" : "false"}});
  b.at(0, [&] {
    for (std::uint32_t p = 5; p <= 7; ++p) b.link_between("el0_0", p).set_up(false, "test");
    for (int k = 0; k < 30; ++k)
      for (std::uint16_t i = 0; i < 4; ++i) b.nodes[i]->send(63, 256);
  });
  b.at(2 * kUs, [&] {
    for (std::uint32_t p = 5; p <= 7; ++p) b.link_between("el0_0", p).set_up(true, "test");
  });
  sc_core::sc_start();
  EXPECT_EQ(b.nodes[63]->arrivals.size(), 120u);
  std::uint32_t late = 0;
  std::map<std::uint32_t, std::uint32_t> next;  // per source: one past the highest sequence seen
  for (const Arrival& a : b.nodes[63]->arrivals) {
    std::uint32_t& n = next[a.src];
    if (a.seq < n) ++late;
    n = std::max(n, a.seq + 1);
  }
  return {late, b.sw("el0_0").stats().sticky};
}

TEST(EliteFabric, StickyUpRoutingKeepsQueuedPairsTogether) {
  auto [late, sticky] = bursts(true);
  EXPECT_GT(sticky, 0u);
  EXPECT_EQ(late, 0u);
}

TEST(EliteFabric, PureAdaptiveUpRoutingReordersBursts) {
  auto [late, sticky] = bursts(false);
  EXPECT_EQ(sticky, 0u);
  EXPECT_GT(late, 0u);
}

TEST(EliteFabric, DeterministicUpRoutingWhenAdaptiveIsOff) {
  EliteBench b(16, {}, {{"adaptive", "false"}});
  b.at(0, [&] {
    for (int k = 0; k < 8; ++k) b.nodes[0]->send(6, 64);  // digit 0 of 6 is 2: always port 7
  });
  sc_core::sc_start();
  EXPECT_EQ(b.nodes[6]->arrivals.size(), 8u);
  const auto& up = b.sw("el0_0").stats().up_choices;
  EXPECT_EQ(up[2], 8u);
  EXPECT_EQ(up[0] + up[1] + up[3], 0u);
}

}  // namespace
