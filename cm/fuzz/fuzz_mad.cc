// libFuzzer target: arbitrary bytes as a MAD arriving on QP1 of a node
// running the GSI agents: h0 of a star of two HCAs runs the subnet
// administrator (program ib_sa), and with it the node's CM agent. Each
// input is the payload of a UD SEND from h1's QP1 to h0's QP1 (GSI Q_Key,
// ICRC and VCRC made right), so that every byte reaches the agents' MAD
// handling: CM messages (REQ, REP, RTU, DREQ, REJ, ...) and SA queries
// (PathRecord, ServiceRecord Get/Set/GetTable). The world then runs until
// the agents have answered. CM state an input creates (a connection a REQ
// opened) stays for the next inputs.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cm/core/mad.h"
#include "hca_model/fuzz/ib_inject.h"
#include "sim/fuzz/fuzz_world.h"
#include "world/node.h"

using namespace nicsim;

namespace {

constexpr std::size_t kMaxMad = 2 * cm::mad::kBytes;

struct Target {
  nicsim::fuzzing::PersistentWorld fw{R"(
      name: "fuzz_mad" seed: 1 stop_time: "2ms"
      topology { star { hosts: 2 } nic: "hca" }
      subnet_manager { off: true }
    )",
                                      {{"ib_sa", 0}}};
  Node& h0 = fw.world().node(0);
  std::uint16_t lid0 = hca::fuzzing::port1_lid(h0);
  std::uint16_t lid1 = hca::fuzzing::port1_lid(fw.world().node(1));
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
  const std::vector<std::uint8_t> bytes = ud_to_qp1(*t, std::span(data, std::min(size, kMaxMad)));
  fabric::Port& from = *t->h0.nic().port(1).peer();
  hca::fuzzing::send_ib(t->fw.world().fabric(), from, from.owner().device_id(), bytes);
  t->fw.run_for(200 * kUs);
  t->fw.forget_errors();
  return 0;
}
