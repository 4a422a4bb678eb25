// libFuzzer target: arbitrary bytes as a MAD arriving on QP1 of a node
// running the GSI agents: h0 of a star of two HCAs runs the subnet
// administrator (program ib_sa), and with it the node's CM agent, and a
// listener on the service id of the REQ seed (0x1000001) that accepts each
// request with an RC QP of its own, so that a REQ goes on to INIT, RTR and
// a REP. Each input is the payload of a UD SEND from h1's QP1 to h0's QP1
// (GSI Q_Key, ICRC and VCRC made right), so that every byte reaches the
// agents' MAD handling: CM messages (REQ, REP, RTU, DREQ, REJ, ...) and SA
// queries (PathRecord, ServiceRecord Get/Set/GetTable). The world then
// runs until the agents have answered. Before each input the listener's
// daemon puts the CM back: it drops the connections earlier inputs opened
// (on the CM's thread) and takes its QPs back to Reset.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <rdma/ib_verbs.h>
#include <linux/in.h>
#include <rdma/ib_cma.h>

#include "cm/core/cm_node.h"
#include "cm/core/mad.h"
#include "hca_model/fuzz/ib_inject.h"
#include "sim/fuzz/fuzz_world.h"
#include "world/node.h"

using namespace nicsim;

namespace {

constexpr std::size_t kMaxMad = 2 * cm::mad::kBytes;

constexpr std::uint64_t kServiceId = 0x1000001;  // as the REQ seed names it
constexpr int kQps = 4;

// h0's listener: accepts each request (in the CMA's handler, interrupt
// context: accepting does not block) with a free QP of its pool, and
// rejects it when none is free.
struct Listener {
  ib_device* dev = nullptr;
  ib_pd* pd = nullptr;
  ib_cq* cq = nullptr;
  ib_qp* qps[kQps] = {};
  bool used[kQps] = {};
  ib_cma_id listen_id{};
  std::uint64_t requests = 0, accepted = 0, events = 0, dropped = 0;

  Listener() {
    sockaddr any{};
    any.sa_family = AF_INET;
    if (ib_cma_get_device(&any, &dev) != 0) std::abort();
    pd = ib_alloc_pd(dev);
    cq = ib_create_cq(dev, nullptr, nullptr, nullptr, 4 * kQps);
    for (ib_qp*& qp : qps) qp = new_qp();
    __be64 sid = 0;
    cm::mad::put(reinterpret_cast<std::uint8_t*>(&sid), 8, kServiceId);
    if (!pd || !cq || ib_cma_sid_listen(dev, sid, this, on_request, &listen_id) != 0) std::abort();
  }

  ib_qp* new_qp() const {
    ib_qp_init_attr ia{};
    ia.send_cq = ia.recv_cq = cq;
    ia.cap.max_send_wr = ia.cap.max_recv_wr = 1;
    ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
    ia.qp_type = IB_QPT_RC;
    ib_qp* qp = ib_create_qp(pd, &ia);
    if (!qp) std::abort();
    return qp;
  }

  static void on_request(ib_cma_id* id, void*, void* ctx) {
    auto* l = static_cast<Listener*>(ctx);
    ++l->requests;
    for (int i = 0; i < kQps; ++i) {
      if (l->used[i]) continue;
      if (ib_cma_accept(id, l->qps[i], nullptr, 0, l, on_event) == 0) {
        l->used[i] = true;
        ++l->accepted;
      }
      return;
    }
    ib_cma_reject(id, nullptr, 0);
  }
  static void on_event(ib_cma_event, void* ctx) { ++static_cast<Listener*>(ctx)->events; }

  // Thread context: the CM drops its connections on its own thread, then
  // the QPs they used go back to Reset (or are made anew).
  void put_back() {
    cm::CmNode* n = cm::node_cm();
    bool done = false;
    n->post([this, n, &done] {
      dropped += n->drop_connections();
      done = true;
    });
    while (!done) n->host().sleep(1 * kUs);
    for (int i = 0; i < kQps; ++i) {
      if (!used[i]) continue;
      ib_qp_attr a{};
      a.qp_state = IB_QPS_RESET;
      if (ib_modify_qp(qps[i], &a, IB_QP_STATE) != 0) {
        ib_destroy_qp(qps[i]);
        qps[i] = new_qp();
      }
      used[i] = false;
    }
  }
};

Listener* g_listener = nullptr;

int listener_daemon(int, char**) {
  g_listener = new Listener();
  nicsim::fuzzing::serve_put_back(cm::node_cm()->host(), [] { g_listener->put_back(); });
}
const BuiltinProgram reg_daemon("fuzz_mad_listener", listener_daemon,
                                "fuzz_mad: h0's listener, and what puts the CM back before each input");

struct Target {
  nicsim::fuzzing::PersistentWorld fw{R"(
      name: "fuzz_mad" seed: 1 stop_time: "2ms"
      topology { star { hosts: 2 } nic: "hca" }
      subnet_manager { off: true }
    )",
                                      {{"ib_sa", 0}, {"fuzz_mad_listener", 0}}};
  Node& h0 = fw.world().node(0);
  std::uint16_t lid0 = hca::fuzzing::port1_lid(h0);
  std::uint16_t lid1 = hca::fuzzing::port1_lid(fw.world().node(1));
  ~Target() {
    std::fprintf(stderr, "fuzz_mad: %llu requests reached the listener, %llu accepted, %llu connections dropped\n",
                 static_cast<unsigned long long>(g_listener->requests),
                 static_cast<unsigned long long>(g_listener->accepted),
                 static_cast<unsigned long long>(g_listener->dropped));
  }
};

std::vector<std::uint8_t> ud_to_qp1(const Target& t, std::span<const std::uint8_t> mad) {
  ib::PacketHeaders h;
  h.lrh.dlid = t.lid0;
  h.lrh.slid = t.lid1;
  h.bth.opcode = 0x64;  // UD SEND Only
  h.bth.p_key = 0xffff;
  h.bth.dest_qp = 1;
  h.ext.deth.q_key = cm::mad::kGsiQkey;
  h.ext.deth.src_qp = 1;
  std::vector<std::uint8_t> out;
  if (ib::build_packet(h, mad, out) != ib::BuildStatus::Ok) std::abort();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Target target;
  Target* t = &target;
  if (size == 0) return 0;
  t->fw.put_back("the CM's connections");
  const std::vector<std::uint8_t> bytes = ud_to_qp1(*t, std::span(data, std::min(size, kMaxMad)));
  fabric::Port& from = *t->h0.nic().port(1).peer();
  hca::fuzzing::send_ib(t->fw.world().fabric(), from, from.owner().device_id(), bytes);
  t->fw.run_for(200 * kUs);
  t->fw.forget_errors();
  return 0;
}
