// The dapltest performance and limit programs: their figures (simulated
// time is deterministic, so they are asserted exactly) and what they
// leave behind (nothing of the provider on any node).
#include <string>

#include "dapl/provider/dapl.h"
#include "tests/world_run.h"
#include "world/node.h"

namespace nicsim::dapl {
namespace {

using testing::run_text;
using testing::RunOptions;

RunOptions leak_check() {
  RunOptions o;
  o.inspect = [](World& w) {
    for (std::uint32_t i = 0; i < w.num_nodes(); ++i)
      if (Node* n = Node::of(w.node(i).host())) {
        EXPECT_EQ(n->counters().total(), 0u) << w.node(i).name();
      }
  };
  return o;
}

// The topology of scenarios/dapl_perf.textproto and the perftest scenarios.
TEST(DaplPerf, LatencyAndBandwidthByOpModeAndSize) {
  const auto r = run_text(
      "seed: 1\ntopology { star { hosts: 2 } nic: \"hca\" }\n"
      "link_defaults { bandwidth: \"8Gbps\" delay: \"5ns\" }\n"
      "workload { program: \"ib_sa\" nodes: \"h0\" }\n"
      "workload { program: \"dapl_perf\" nodes: \"h0\" nodes: \"h1\"\n"
      "  args: \"--sizes=2,4096\" args: \"--iters=20\" args: \"--depth=4\" }\n",
      leak_check());
  const auto& v = r.results;
  // One operation in flight: a full round trip each, plus the provider.
  EXPECT_DOUBLE_EQ(v.at("rr_poll_lat_2"), 6.852376);
  EXPECT_DOUBLE_EQ(v.at("rr_wait_lat_2"), 8.928066);
  EXPECT_DOUBLE_EQ(v.at("rw_poll_lat_2"), 6.852376);
  EXPECT_DOUBLE_EQ(v.at("rw_wait_lat_2"), 8.997457);
  EXPECT_DOUBLE_EQ(v.at("rr_poll_lat_4096"), 13.602376);
  EXPECT_DOUBLE_EQ(v.at("rr_wait_lat_4096"), 15.687465);
  EXPECT_DOUBLE_EQ(v.at("rw_poll_lat_4096"), 11.602376);
  EXPECT_DOUBLE_EQ(v.at("rw_wait_lat_4096"), 13.674149);
  // Four in flight.
  EXPECT_DOUBLE_EQ(v.at("rr_poll_bw_4096"), 774.9350365204691);
  EXPECT_DOUBLE_EQ(v.at("rw_poll_bw_4096"), 632.8552031930265);
  EXPECT_DOUBLE_EQ(v.at("rr_wait_bw_4096"), 664.7592544578896);
  EXPECT_DOUBLE_EQ(v.at("rw_wait_bw_4096"), 606.5490789239041);
  EXPECT_DOUBLE_EQ(v.at("connect_us"), 152.355114);
  // Blocking costs the interrupt and the wake-up: more than polling.
  EXPECT_GT(v.at("rr_wait_lat_2"), v.at("rr_poll_lat_2"));
  // The tail of every latency: 20 operations, so the p99 (nearest rank) is
  // the slowest; one operation in flight takes the same time every time.
  EXPECT_DOUBLE_EQ(v.at("rr_poll_lat_2_p99"), 6.852376);
  EXPECT_DOUBLE_EQ(v.at("rr_wait_lat_4096_max"), 15.687465);
  for (const char* op : {"rr", "rw"})
    for (const char* mode : {"poll", "wait"})
      for (const char* size : {"2", "4096"}) {
        const std::string lat = std::string(op) + "_" + mode + "_lat_" + size;
        EXPECT_GE(v.at(lat + "_p99"), v.at(lat)) << lat;
        EXPECT_GE(v.at(lat + "_max"), v.at(lat + "_p99")) << lat;
      }
}

TEST(DaplLimit, EveryKindRunsOutWithItsErrorAndComesBack) {
  const auto r = run_text(
      "seed: 1\ntopology { star { hosts: 2 } nic: \"hca\"\n"
      "  node_param { key: \"nic.max_pd\" value: \"64\" } node_param { key: \"nic.max_cq\" value: \"24\" }\n"
      "  node_param { key: \"nic.max_qp\" value: \"88\" } node_param { key: \"nic.max_mpt\" value: \"64\" } }\n"
      "workload { program: \"ib_sa\" nodes: \"h0\" }\n"
      "workload { program: \"dapl_limit\" nodes: \"h1\" args: \"--qlen=64\" args: \"--recvs=32\" }\n",
      leak_check());
  const auto& v = r.results;
  EXPECT_EQ(v.at("limits_ok"), 1);
  EXPECT_EQ(v.at("ias"), 8);     // the provider's device opens
  EXPECT_EQ(v.at("pzs"), 61);    // 64 PDs less those the driver, the kernel verbs and the CM hold
  EXPECT_EQ(v.at("evds"), 23);   // 24 CQs less those the CM holds
  EXPECT_EQ(v.at("eps"), 24);    // QPNs 64 to 87
  EXPECT_EQ(v.at("lmrs"), 62);   // 64 memory protection entries less those in use
  EXPECT_EQ(v.at("rmrs"), 62);   // windows share that table
  EXPECT_EQ(v.at("recvs"), 32);  // the EP's max_recv_dtos
  EXPECT_EQ(v.at("events"), 64);
  // The IA's attributes are the HCA's limits (the QP count includes the
  // QPNs below 64 the driver keeps).
  EXPECT_EQ(v.at("max_pzs"), 64);
  EXPECT_EQ(v.at("max_evds"), 24);
  EXPECT_EQ(v.at("max_eps"), 88);
  EXPECT_EQ(v.at("max_lmrs"), 64);
  EXPECT_EQ(v.at("max_rmrs"), 64);
  for (const char* k : {"pzs", "evds", "eps", "lmrs", "rmrs"}) EXPECT_LE(v.at(k), v.at(std::string("max_") + k)) << k;
}

}  // namespace
}  // namespace nicsim::dapl
