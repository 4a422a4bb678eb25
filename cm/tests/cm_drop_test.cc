// CmNode::drop_connections, two-sided: h1 listens and accepts h2's
// connection, then its CM drops every connection (as when the device goes
// away). h1 keeps no state of it, its listener stays and takes h2's next
// request, and h2's DREQ for the dropped connection is still answered (the
// CM's DREP for a connection it does not know).
#include <rdma/ib_verbs.h>
#include <linux/in.h>
#include <rdma/ib_cma.h>

#include <gtest/gtest.h>

#include "cm/core/cm_node.h"
#include "nicsim/app.h"
#include "tests/world_run.h"
#include "world/programs.h"

namespace nicsim::cm {
namespace {

constexpr std::uint64_t kSid = 0x3000;

struct Side {
  ib_pd* pd = nullptr;
  ib_cq* cq = nullptr;
  ib_qp* qps[2] = {};
  ib_cma_id ids[2]{};
  int requests = 0, events = 0, last = -1;
};

ib_qp* rc_qp(const Side& s) {
  ib_qp_init_attr ia{};
  ia.send_cq = ia.recv_cq = s.cq;
  ia.cap.max_send_wr = ia.cap.max_recv_wr = 1;
  ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
  ia.qp_type = IB_QPT_RC;
  return ib_create_qp(s.pd, &ia);
}

bool wait_for(const int& v, int want) {
  for (int i = 0; i < 100000 && v < want; ++i) nicsim_sleep_ns(200);
  return v >= want;
}

void on_event(Side& s, ib_cma_event e) {
  s.last = e;
  ++s.events;
}

bool accept_next(Side& s, int k) {
  s.events = 0;
  return wait_for(s.requests, k + 1) &&
         ib_cma_accept(&s.ids[k], s.qps[k], nullptr, 0, &s,
                       [](ib_cma_event e, void* ctx) { on_event(*static_cast<Side*>(ctx), e); }) == 0 &&
         wait_for(s.events, 1) && s.last == IB_CMA_EVENT_ESTABLISHED;
}

int serve(Side& s) {
  ib_cma_id listener{};
  __be64 sid = 0;
  mad::put(reinterpret_cast<std::uint8_t*>(&sid), 8, kSid);
  auto on_request = [](ib_cma_id* id, void*, void* ctx) {
    auto* sd = static_cast<Side*>(ctx);
    sd->ids[sd->requests++ % 2] = *id;
  };
  if (ib_cma_sid_listen(nullptr, sid, &s, on_request, &listener)) return 1;
  nicsim_barrier();
  nicsim_result("first_established", accept_next(s, 0), "");
  CmNode* n = node_cm();
  int dropped = -1;
  n->post([n, &dropped] { dropped = static_cast<int>(n->drop_connections()); });
  wait_for(dropped, 0);
  nicsim_result("dropped", dropped, "connections");
  nicsim_result("live_after_drop", n->counters().live_conns, "connections");
  nicsim_result("listeners_after_drop", n->counters().listeners, "listeners");
  nicsim_barrier();
  nicsim_result("second_established", accept_next(s, 1), "");
  nicsim_barrier();
  return ib_cma_sid_destroy(&listener) ? 1 : 0;
}

bool connect_one(Side& s, int k, std::uint32_t ip) {
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  mad::put(reinterpret_cast<std::uint8_t*>(&dst.sin_addr.s_addr), 4, ip);
  ib_cma_conn cc{};
  cc.dst_ip = reinterpret_cast<sockaddr*>(&dst);
  mad::put(reinterpret_cast<std::uint8_t*>(&cc.service_id), 8, kSid);
  cc.context = &s;
  cc.qp = s.qps[k];
  cc.cma_event_handler = [](ib_cma_event e, void* ctx, void*) { on_event(*static_cast<Side*>(ctx), e); };
  s.events = 0;
  return ib_cma_connect(&cc, &s.ids[k]) == 0 && wait_for(s.events, 1) && s.last == IB_CMA_EVENT_ESTABLISHED;
}

int client(Side& s) {
  const std::uint32_t ip = default_ipv4(nicsim_workload_node(0));
  nicsim_barrier();
  const bool first = connect_one(s, 0, ip);
  nicsim_barrier();
  s.events = 0;
  const bool disconnected = first && ib_cma_disconnect(s.qps[0], &s.ids[0]) == 0 && wait_for(s.events, 1) &&
                            s.last == IB_CMA_EVENT_DISCONNECTED;
  nicsim_result("old_disconnected", disconnected, "");
  nicsim_result("client_second_established", connect_one(s, 1, ip), "");
  nicsim_barrier();
  return 0;
}

int drop_main(int, char**) {
  Side s;
  sockaddr_in any{};
  any.sin_family = AF_INET;
  ib_device* dev = nullptr;
  if (ib_cma_get_device(reinterpret_cast<sockaddr*>(&any), &dev)) return 1;
  s.pd = ib_alloc_pd(dev);
  s.cq = ib_create_cq(dev, nullptr, nullptr, nullptr, 4);
  s.qps[0] = rc_qp(s);
  s.qps[1] = rc_qp(s);
  return nicsim_workload_rank() == 0 ? serve(s) : client(s);
}
const BuiltinProgram reg("cm_drop_probe", drop_main, "test: a CM that drops its connections");

TEST(CmDrop, DroppedConnectionsLeaveNoStateTheListenerStaysAndTheOldDreqIsAnswered) {
  const auto r = testing::run_text(
      "seed: 1\ntopology { star { hosts: 3 } nic: \"hca\" }\n"
      "workload { program: \"ib_sa\" nodes: \"h0\" }\n"
      "workload { program: \"cm_drop_probe\" nodes: \"h1\" nodes: \"h2\" }\n");
  EXPECT_EQ(r.results.at("first_established"), 1);
  EXPECT_EQ(r.results.at("dropped"), 1);
  EXPECT_EQ(r.results.at("live_after_drop"), 0);
  EXPECT_EQ(r.results.at("listeners_after_drop"), 1);
  EXPECT_EQ(r.results.at("old_disconnected"), 1);
  EXPECT_EQ(r.results.at("second_established"), 1);
  EXPECT_EQ(r.results.at("client_second_established"), 1);
}

}  // namespace
}  // namespace nicsim::cm
