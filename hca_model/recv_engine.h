// The HCA's receive side: checks every incoming packet (CRCs, LID, QP,
// state, transport), runs the RC/UC/UD responder (PSN sequence, receive
// WQEs, scatter through the TPT by DMA, RDMA write, RDMA read and atomic
// execution, ACK/NAK generation) and hands responses to the completer.
//
// Packets are processed one at a time in arrival order, rx_packet_cycles
// each; a packet keeps its input buffer (so the link back-pressures) until
// it is processed. A packet that needs a receive WQE not yet fetched, or an
// atomic's read-modify-write, stalls the pipeline until the DMA completes.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <vector>

#include "core/ring.h"
#include "hca_model/hca.h"
#include "hca_model/packet_io.h"

namespace nicsim::hca {

class RecvEngine {
 public:
  explicit RecvEngine(Hca& hca);
  ~RecvEngine();
  void packet(fabric::Port& in, fabric::Packet* p);
  void rq_doorbell(QpCtx& q);  // new receive WQEs: prefetch one
  void flush(QpCtx& q);        // every posted receive WQE completes with WrFlushError
  void reset(QpCtx& q);

 private:
  enum class Step { Done, Stall };
  struct Pending {
    fabric::Port* port = nullptr;
    fabric::Packet* pkt = nullptr;
    bool decoded = false;
    ib::PacketHeaders h;
    const ib::OpcodeInfo* op = nullptr;  // of a decoded packet
    std::size_t payload_at = 0, payload_len = 0;
    std::size_t mcast_next = 0;  // multicast: members already delivered
  };
  struct RecvWqe {
    std::uint64_t wr_id = 0;
    std::vector<std::array<std::uint64_t, 2>> ds;  // {addr, lkey << 32 | len}
  };

  void schedule(Tick at);
  void run_due();
  void run();
  Step process(Pending& pk);
  Step deliver(Pending& pk, QpCtx& q);
  Step rc_request(Pending& pk, QpCtx& q);
  Step uc_request(Pending& pk, QpCtx& q);
  Step ud_request(Pending& pk, QpCtx& q);
  Step start_receive(Pending& pk, QpCtx& q, bool& ok);
  bool scatter(Pending& pk, QpCtx& q, const std::vector<HostRange>& ranges, std::uint64_t offset,
               const std::uint8_t* data, std::size_t len);
  void write_bytes(Pending& pk, std::uint64_t addr, const std::uint8_t* data, std::size_t len);
  void recv_cqe(QpCtx& q, std::uint64_t wr_id, CqeStatus status, std::uint32_t byte_len, const Pending* pk,
                std::uint8_t opcode, bool solicited);
  void prefetch(QpCtx& q);
  void rq_fetched(std::uint32_t qpn, std::uint32_t epoch, bool ok);
  Step atomic(Pending& pk, QpCtx& q);
  void nak(QpCtx& q, std::uint8_t syndrome, std::uint32_t psn);
  void responder_error(QpCtx& q, Event event, std::uint8_t syndrome, std::uint32_t psn);
  void flush_next(std::uint32_t qpn);
  void free_packet(fabric::Packet* p);

  Hca& hca_;
  // Packets in arrival order. Only a port's arrival event adds to it, never
  // the processing of a packet, so run()'s reference to the front stays
  // valid while it processes.
  Ring<Pending> queue_;
  bool stalled_ = false;
  Tick free_at_ = 0;
  Tick scheduled_ = kTickMax;
  // Per-QP receive WQE prefetch state, by QPN.
  struct Prefetch {
    enum class State { Empty, Fetching, Ready } state = State::Empty;
    std::vector<std::uint8_t> buf;
    RecvWqe wqe;
    std::uint32_t epoch = 0;
    bool ok = true;
    bool flushing = false;
  };
  std::map<std::uint32_t, Prefetch> prefetch_;
  std::map<std::uint32_t, bool> established_;
  // Atomic in progress (the pipeline is stalled on it).
  struct AtomicOp {
    bool active = false, done = false;
    std::uint64_t host_addr = 0;
    std::uint8_t old_value[8] = {};
  } atomic_;
};

}  // namespace nicsim::hca
