// Bad calls to the CMA: each returns the errno value its header documents,
// crashes nothing and leaks no QP; every handler runs in interrupt context. A two-rank probe program: rank 0 (h1)
// listens and misuses the ids it gets, rank 1 (h2) connects twice.
#include <cerrno>
#include <cstring>

#include <rdma/ib_verbs.h>
#include <linux/in.h>
#include <rdma/ib_cma.h>

#include "cm/core/cm_node.h"
#include "cm/kverbs/kverbs.h"
#include "host/host.h"
#include "nicsim/app.h"
#include "tests/world_run.h"
#include "world/node.h"
#include "world/programs.h"

namespace nicsim::cm {
namespace {

struct Probe {
  int requests = 0, events = 0, last = -1;
  int handlers = 0, in_interrupt = 0;  // handler calls, and those made in interrupt context
  void handler_ran() {
    ++handlers;
    host::Host* h = host::Host::current_host();
    if (h && h->in_interrupt()) ++in_interrupt;
  }
  ib_cma_id ids[2]{};
};

__be64 sid() {
  __be64 v = 0;
  mad::put(reinterpret_cast<std::uint8_t*>(&v), 8, 0x77);
  return v;
}

sockaddr_in addr(std::uint32_t ip) {
  sockaddr_in s{};
  s.sin_family = AF_INET;
  mad::put(reinterpret_cast<std::uint8_t*>(&s.sin_addr.s_addr), 4, ip);
  return s;
}

ib_qp* rc_qp(ib_pd* pd, ib_cq* cq) {
  ib_qp_init_attr ia{};
  ia.send_cq = ia.recv_cq = cq;
  ia.cap.max_send_wr = ia.cap.max_recv_wr = 2;
  ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
  ia.qp_type = IB_QPT_RC;
  return ib_create_qp(pd, &ia);
}

void wait_for(const int& v, int want) {
  for (int i = 0; i < 100000 && v < want; ++i) nicsim_sleep_ns(1000);
}

void server(ib_pd* pd, ib_cq* cq) {
  auto* p = new Probe;
  auto on_req = [](ib_cma_id* id, void*, void* ctx) {
    auto* pr = static_cast<Probe*>(ctx);
    pr->handler_ran();
    if (pr->requests < 2) pr->ids[pr->requests] = *id;
    ++pr->requests;
  };
  ib_cma_id lid{};
  EXPECT_EQ(ib_cma_sid_listen(nullptr, sid(), p, on_req, &lid), 0);
  ib_cma_id again{};
  EXPECT_EQ(ib_cma_sid_listen(nullptr, sid(), p, on_req, &again), -EBUSY);
  EXPECT_EQ(ib_cma_sid_listen(reinterpret_cast<ib_device*>(p), sid(), p, on_req, &again), -EINVAL);
  // The node's own device (not NULL) is a valid listen argument too.
  __be64 other = 0;
  mad::put(reinterpret_cast<std::uint8_t*>(&other), 8, 0x78);
  EXPECT_EQ(ib_cma_sid_listen(pd->device, other, p, on_req, &again), 0);
  EXPECT_EQ(ib_cma_sid_destroy(&again), 0);
  nicsim_barrier();
  wait_for(p->requests, 1);
  ib_qp* qp = rc_qp(pd, cq);
  auto on_ac = [](ib_cma_event e, void* ctx) {
    auto* pr = static_cast<Probe*>(ctx);
    pr->handler_ran();
    pr->last = e;
    ++pr->events;
  };
  EXPECT_EQ(ib_cma_accept(&lid, qp, nullptr, 0, p, on_ac), -EINVAL);  // a listener's id
  EXPECT_EQ(ib_cma_reject(&p->ids[0], "go away", 7), 0);
  EXPECT_EQ(ib_cma_accept(&p->ids[0], qp, nullptr, 0, p, on_ac), -EINVAL);  // after reject
  EXPECT_EQ(ib_cma_reject(&p->ids[0], nullptr, 0), -EINVAL);
  wait_for(p->requests, 2);
  EXPECT_EQ(ib_cma_disconnect(qp, &p->ids[1]), -ENOTCONN);  // not connected yet
  std::uint8_t big[200] = {};
  EXPECT_EQ(ib_cma_accept(&p->ids[1], qp, big, sizeof big, p, on_ac), -EINVAL);  // above 196 bytes
  EXPECT_EQ(ib_cma_accept(&p->ids[1], qp, nullptr, 0, p, on_ac), 0);
  EXPECT_EQ(ib_cma_accept(&p->ids[1], qp, nullptr, 0, p, on_ac), -EINVAL);  // double accept
  wait_for(p->events, 2);  // ESTABLISHED, then the client's DISCONNECTED
  EXPECT_EQ(p->last, IB_CMA_EVENT_DISCONNECTED);
  EXPECT_EQ(ib_cma_disconnect(qp, &p->ids[1]), -EINVAL);  // destroyed by its final event
  EXPECT_EQ(ib_destroy_qp(qp), 0);
  nicsim_barrier();
  EXPECT_EQ(ib_cma_sid_destroy(&lid), 0);
  EXPECT_EQ(ib_cma_sid_destroy(&lid), -EINVAL);
  EXPECT_EQ(p->handlers, 4);  // two requests, ESTABLISHED, DISCONNECTED
  EXPECT_EQ(p->in_interrupt, p->handlers);
  delete p;
}

void client(ib_pd* pd, ib_cq* cq) {
  auto* p = new Probe;
  sockaddr_in dst = addr(default_ipv4(nicsim_workload_node(0)));
  auto on_event = [](ib_cma_event e, void* ctx, void*) {
    auto* pr = static_cast<Probe*>(ctx);
    pr->handler_ran();
    pr->last = e;
    ++pr->events;
  };
  ib_cma_conn cc{};
  cc.dst_ip = reinterpret_cast<sockaddr*>(&dst);
  cc.service_id = sid();
  cc.context = p;
  cc.cma_event_handler = on_event;
  ib_cma_id id{};
  EXPECT_EQ(ib_cma_connect(nullptr, &id), -EINVAL);
  EXPECT_EQ(ib_cma_connect(&cc, &id), -EINVAL);  // no QP
  cc.qp = rc_qp(pd, cq);
  cc.private_data_len = 93;
  cc.private_data = "x";
  EXPECT_EQ(ib_cma_connect(&cc, &id), -EINVAL);  // above 92 bytes
  cc.private_data_len = 0;
  cc.connect_flags = IB_CONNECT_MULTIPATH_FLAG;
  EXPECT_EQ(ib_cma_connect(&cc, &id), -EOPNOTSUPP);
  cc.connect_flags = IB_CONNECT_DEFAULT_FLAG;
  dst.sin_family = AF_UNSPEC;
  EXPECT_EQ(ib_cma_connect(&cc, &id), -EINVAL);
  dst.sin_family = AF_INET;
  nicsim_barrier();
  ASSERT_EQ(ib_cma_connect(&cc, &id), 0);
  wait_for(p->events, 1);
  EXPECT_EQ(p->last, IB_CMA_EVENT_REJECTED);
  EXPECT_EQ(ib_cma_disconnect(cc.qp, &id), -EINVAL);  // gone with its REJECTED
  EXPECT_EQ(ib_destroy_qp(cc.qp), 0);
  cc.qp = rc_qp(pd, cq);
  ASSERT_EQ(ib_cma_connect(&cc, &id), 0);
  wait_for(p->events, 2);
  EXPECT_EQ(p->last, IB_CMA_EVENT_ESTABLISHED);
  EXPECT_EQ(ib_cma_disconnect(reinterpret_cast<ib_qp*>(p), &id), -EINVAL);  // not its QP
  EXPECT_EQ(ib_cma_disconnect(cc.qp, &id), 0);
  EXPECT_EQ(ib_cma_disconnect(cc.qp, &id), -ENOTCONN);  // disconnecting already
  wait_for(p->events, 3);
  EXPECT_EQ(p->last, IB_CMA_EVENT_DISCONNECTED);
  EXPECT_EQ(ib_destroy_qp(cc.qp), 0);
  EXPECT_EQ(p->handlers, 3);  // REJECTED, ESTABLISHED, DISCONNECTED
  EXPECT_EQ(p->in_interrupt, p->handlers);
  nicsim_barrier();
  delete p;
}

int probe_main(int, char**) {
  sockaddr_in me = addr(default_ipv4(nicsim_node_id()));
  ib_device* dev = nullptr;
  EXPECT_EQ(ib_cma_get_device(nullptr, &dev), -EINVAL);
  EXPECT_EQ(ib_cma_get_device(reinterpret_cast<sockaddr*>(&me), &dev), 0);
  ib_pd* pd = ib_alloc_pd(dev);
  ib_cq* cq = ib_create_cq(dev, nullptr, nullptr, nullptr, 8);
  ib_cma_id bogus{};
  bogus.cm_id = reinterpret_cast<ib_cm_id*>(0x12345);
  EXPECT_EQ(ib_cma_accept(&bogus, nullptr, nullptr, 0, nullptr, nullptr), -EINVAL);
  EXPECT_EQ(ib_cma_reject(&bogus, nullptr, 0), -EINVAL);
  EXPECT_EQ(ib_cma_sid_destroy(&bogus), -EINVAL);
  EXPECT_EQ(ib_cma_get_src_ip(
                &bogus, [](sockaddr*, void*) {}, nullptr),
            -EINVAL);
  if (nicsim_workload_rank() == 0)
    server(pd, cq);
  else
    client(pd, cq);
  EXPECT_EQ(ib_destroy_cq(cq), 0);
  EXPECT_EQ(ib_dealloc_pd(pd), 0);
  EXPECT_EQ(kverbs::counts(dev).qps, 1u);  // only the CM's QP1 is left
  return 0;
}

const BuiltinProgram reg("cma_errors_probe", probe_main, "test: bad CMA calls");

TEST(CmaErrors, BadCallsReturnTheirErrnoAndLeakNothing) {
  testing::run_text(
      "seed: 1\ntopology { star { hosts: 3 } nic: \"hca\" }\n"
      "workload { program: \"ib_sa\" nodes: \"h0\" }\n"
      "workload { program: \"cma_errors_probe\" nodes: \"h1\" nodes: \"h2\" }\n");
}

}  // namespace
}  // namespace nicsim::cm
