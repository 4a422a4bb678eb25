// libFuzzer target: arbitrary bytes as an InfiniBand packet arriving on
// port 1 of an HCA (h0, a star of two HCAs). h0 has a CQ, an RC, a UC and a
// UD QP (QPNs 0x40, 0x41, 0x42) in RTS, connected to QP 0x40 of h1, expected
// PSN 100, each with receives posted into a registered 64 KiB buffer that
// allows every remote access. Before each input a daemon on h0 takes the
// QPs back to that state (through Reset, by HCR commands, as a driver
// would) and empties the CQ; the packet then comes from the switch's port
// and the world runs until the HCA has answered it.
//
// Input: byte 0 bit 0 set: the rest is sealed (LRH PktLen, GRH PayLen,
// ICRC and VCRC made right, so that any header reaches the transport's
// checks); clear: the rest goes on the wire as it is.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "hca_model/fuzz/ib_inject.h"
#include "hca_model/tests/hca_harness.h"
#include "sim/fuzz/fuzz_world.h"

using namespace nicsim;
using namespace nicsim::hca;
namespace ht = nicsim::hca::testing;

namespace {

constexpr std::uint32_t kRecvs = 8;
constexpr std::uint32_t kRecvBytes = 8192;
constexpr std::uint32_t kAccessAll = mpt::kLocalWrite | mpt::kRemoteRead | mpt::kRemoteWrite | mpt::kRemoteAtomic;
constexpr std::size_t kMaxWire = 4224;  // a 4 KiB payload with every header

// The QPs of h0 and what puts them back; lives as long as the process.
struct Qps {
  ht::Harness h;
  std::uint32_t cq = 0;
  std::uint32_t qpns[3] = {};
  QpType types[3] = {QpType::Rc, QpType::Uc, QpType::Ud};
  std::uint8_t* buf = nullptr;
  std::uint32_t key = 0;
  std::uint8_t* in = nullptr;
  std::uint8_t* out = nullptr;
  std::uint16_t peer_lid = 0;

  Qps() {
    cq = h.create_cq(1024);
    buf = static_cast<std::uint8_t*>(h.alloc(kRecvs * kRecvBytes));
    key = h.reg_mr(buf, kRecvs * kRecvBytes, kAccessAll);
    in = static_cast<std::uint8_t*>(h.alloc(4096));
    out = static_cast<std::uint8_t*>(h.alloc(4096));
    for (int i = 0; i < 3; ++i) {
      ht::Harness::QpSpec s;
      s.type = types[i];
      s.send_cqn = s.recv_cqn = cq;
      s.access = kAccessAll;
      qpns[i] = h.create_qp(s);
    }
    peer_lid = World::current()->node(1).nic_as<Hca>()->port_lid(1);
    std::fprintf(stderr, "fuzz_hca_packet: h0 LID %u, h1 LID %u, QPNs %#x %#x %#x, rkey %#x\n", h.lid(), peer_lid,
                 qpns[0], qpns[1], qpns[2], key);
  }

  std::uint8_t modify(std::uint32_t qpn, QpState from, QpState to, std::uint32_t mask) {
    put(in, qpc::from_state, static_cast<std::uint8_t>(from));
    put(in, qpc::to_state, static_cast<std::uint8_t>(to));
    put(in, qpc::opt_mask, mask);
    return h.cmd(Command::MODIFY_QP, qpn, reinterpret_cast<std::uint64_t>(in));
  }

  // Whatever state the QP is in: back to Reset, then Init with its own
  // queues, RTR and RTS, and fresh receives.
  void refresh(int i) {
    const std::uint32_t qpn = qpns[i];
    h.cmd(Command::QUERY_QP, qpn, 0, reinterpret_cast<std::uint64_t>(out));
    const auto state = static_cast<QpState>(get(out, qpc::from_state));
    std::memset(in, 0, qpc::kSize);
    if (state != QpState::Reset) modify(qpn, state, QpState::Reset, 0);
    std::memcpy(in, out, qpc::kSize);
    put(in, qpc::qp_type, static_cast<std::uint8_t>(types[i]));
    put(in, qpc::port, 1);
    put(in, qpc::access, kAccessAll);
    modify(qpn, QpState::Reset, QpState::Init,
           qp_mask::kQueues | qp_mask::kPort | qp_mask::kPkeyIndex | qp_mask::kAccess | qp_mask::kQkey);
    if (types[i] == QpType::Ud)
      h.connect(qpn, 0, 0);
    else
      h.connect(qpn, qpns[0], peer_lid);
    const auto* rq = reinterpret_cast<std::uint8_t*>(get(out, qpc::rq_base));
    for (std::uint32_t r = 0; r < kRecvs; ++r) post_recv(qpn, const_cast<std::uint8_t*>(rq), r);
  }

  void post_recv(std::uint32_t qpn, std::uint8_t* rq, std::uint32_t slot) {
    std::uint8_t* w = rq + (slot << 6);
    std::memset(w, 0, 64);
    put(w, rwqe::num_ds, 1);
    put(w, rwqe::wr_id, slot);
    std::uint8_t* d = w + rwqe::kHeaderBytes;
    put(d, ds::addr, reinterpret_cast<std::uint64_t>(buf + slot * kRecvBytes));
    put(d, ds::length, kRecvBytes);
    put(d, ds::lkey, key);
    const std::uint32_t v[2] = {qpn, slot + 1};
    h.node().bus().mmio_write(h.hca().bar0() + reg::db_recv.offset, v, 8);
  }

  void refresh_all() {
    ht::Cqe e;
    while (h.poll(cq, e)) {
    }
    for (int i = 0; i < 3; ++i) refresh(i);
  }
};

Qps* g_qps = nullptr;

int qps_daemon(int, char**) {
  g_qps = new Qps();
  nicsim::fuzzing::serve_put_back(g_qps->h.node().host(), [] { g_qps->refresh_all(); });
}
const BuiltinProgram reg_daemon("fuzz_hca_qps", qps_daemon, "fuzz_hca_packet: h0's QPs, put back before each input");

struct Target {
  nicsim::fuzzing::PersistentWorld fw{R"(
      name: "fuzz_hca_packet" seed: 1 stop_time: "2ms"
      topology { star { hosts: 2 } nic: "hca" }
      subnet_manager { off: true }
    )",
                                      {{"fuzz_hca_qps", 0}}};
  Node& h0 = fw.world().node(0);
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Target target;
  Target* t = &target;
  if (size < 2) return 0;
  t->fw.put_back("the QPs");
  std::vector<std::uint8_t> bytes(data + 1, data + std::min(size, kMaxWire + 1));
  if (data[0] & 1) hca::fuzzing::seal(bytes);
  fabric::Port& port = t->h0.nic().port(1);
  fabric::Port& from = *port.peer();
  hca::fuzzing::send_ib(t->fw.world().fabric(), from, from.owner().device_id(), bytes);
  t->fw.run_for(50 * kUs);
  t->fw.forget_errors();
  return 0;
}
