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
#include "hca_model/engine_steps.h"
#include "hca_model/hca.h"
#include "hca_model/packet_io.h"

namespace nicsim::hca {

// The responder's steps (RecvEngine::respond), X(Step, function), for a
// request packet on an RC, UC or UD QP; then where it stops (Stall: waiting
// for a DMA, the packet runs through the steps again when it is done).
#define NICSIM_HCA_RESPONDER_STEPS(X)                                                                              \
  X(GetReq, get_req)                        /* what the opcode asks for, from the wire layer's table */            \
  X(ChkPsn, chk_psn)                        /* RC: in sequence, a duplicate or ahead; UC: a gap loses a message */ \
  X(ChkOpSeq, chk_op_seq)                   /* middles and lasts continue a message, firsts start one */           \
  X(ChkOpValid, chk_op_valid)               /* the QP takes the operation: access rights; UD: sends only */        \
  X(ChkQkey, chk_qkey)                      /* UD: the Q_Key is the QP's */                                        \
  X(ChkResource, chk_resource)              /* a receive WQE to open; a read's responder resources */              \
  X(ChkLength, chk_length)                  /* the payload fits the receive buffer or the RDMA length */           \
  X(ChkRkey, chk_rkey)                      /* R_Key, bounds and access of an RDMA or atomic target */             \
  X(Execute, execute)                       /* scatter or write the payload; queue a read response; atomics */     \
  X(Complete, complete)                     /* a message's last packet: receive CQE, MSN */                        \
  X(Acknowledge, acknowledge)               /* the next PSN; an ACK when asked for or due */                       \
  X(Duplicate, duplicate)                   /* a retried request: read again, or acknowledge again */              \
  X(ErrPsnSeq, err_psn_seq)                 /* ahead of the expected PSN: one NAK per gap */                       \
  X(ErrRnr, err_rnr)                        /* no receive WQE: RNR NAK (UC loses the message, UD the datagram) */  \
  X(ErrLength, err_length)                  /* longer than the receive buffer: a length error CQE */               \
  X(ErrInvalidRequest, err_invalid_request) /* invalid request NAK, QP to Error (UC: dropped) */                   \
  X(ErrRemoteAccess, err_remote_access)     /* remote access NAK, QP to Error (UC: dropped) */                     \
  X(ErrReadAccess, err_read_access)         /* a read without remote read access */                                \
  X(ErrRemoteOp, err_remote_op)             /* a receive WQE whose buffer does not translate */                    \
  X(Drop, drop)                             /* UD: not a send */
#define NICSIM_HCA_RESPONDER_ENDS(E) E(Done) E(Stall)
enum class RespStep : std::uint8_t {
  NICSIM_HCA_RESPONDER_STEPS(NICSIM_HCA_STEP_ENUM) NICSIM_HCA_RESPONDER_ENDS(NICSIM_HCA_END_ENUM)
};
inline constexpr const char* kRespStepNames[] = {NICSIM_HCA_RESPONDER_STEPS(NICSIM_HCA_STEP_NAME)
                                                     NICSIM_HCA_RESPONDER_ENDS(NICSIM_HCA_END_NAME)};

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
  // The responder's context while it handles one request packet on a QP.
  struct Resp {
    Pending& pk;
    QpCtx& q;
    const ib::OpcodeInfo& op;
    std::uint32_t psn;
    enum class Kind : std::uint8_t { Send, Write, Read, Atomic, Other } kind = Kind::Other;
    const std::uint8_t* payload = nullptr;
    std::uint32_t len = 0;           // payload bytes
    std::uint32_t npsn = 0;          // a read: the PSNs of its response
    std::uint32_t byte_len = 0;      // a receive too long: how long it was
    std::uint64_t saved_offset = 0;  // RDMA write with immediate: the write's place in its buffer
  };
  struct RecvWqe {
    std::uint64_t wr_id = 0;
    std::vector<std::array<std::uint64_t, 2>> ds;  // {addr, lkey << 32 | len}
  };

  void schedule(Tick at);
  void run_due();
  void run();
  Step process(Pending& pk);
  bool decode(Pending& pk);
  Step multicast(Pending& pk, std::uint32_t port);
  Step deliver(Pending& pk, QpCtx& q);
  // The responder (responder.cc).
  Step respond(Pending& pk, QpCtx& q);
  RespStep get_req(Resp& r);
  RespStep chk_psn(Resp& r);
  RespStep chk_op_seq(Resp& r);
  RespStep chk_op_valid(Resp& r);
  RespStep chk_qkey(Resp& r);
  RespStep chk_resource(Resp& r);
  RespStep chk_length(Resp& r);
  RespStep chk_rkey(Resp& r);
  RespStep execute(Resp& r);
  RespStep execute_read(Resp& r);
  RespStep execute_atomic(Resp& r);
  void atomic_read();
  void atomic_written(std::uint64_t arg);
  RespStep complete(Resp& r);
  RespStep acknowledge(Resp& r);
  RespStep duplicate(Resp& r);
  RespStep err_psn_seq(Resp& r);
  RespStep err_rnr(Resp& r);
  RespStep err_length(Resp& r);
  RespStep err_invalid_request(Resp& r);
  RespStep err_remote_access(Resp& r);
  RespStep err_read_access(Resp& r);
  RespStep err_remote_op(Resp& r);
  RespStep drop(Resp& r);
  Step start_receive(Pending& pk, QpCtx& q, bool& ok);
  bool scatter(Pending& pk, QpCtx& q, const std::vector<HostRange>& ranges, std::uint64_t offset,
               const std::uint8_t* data, std::size_t len);
  void write_bytes(Pending& pk, std::uint64_t addr, const std::uint8_t* data, std::size_t len);
  void recv_cqe(QpCtx& q, std::uint64_t wr_id, CqeStatus status, std::uint32_t byte_len, const Pending* pk,
                std::uint8_t opcode, bool solicited);
  void prefetch(QpCtx& q);
  void rwqe_read(std::uint64_t arg);
  void rq_fetched(std::uint32_t qpn, std::uint32_t epoch, bool ok);
  void payload_written(std::uint64_t packet);
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
  // The responder's translations (a read's or an atomic's target), and an
  // RDMA write's buffer while a receive WQE for its immediate opens.
  std::vector<HostRange> ranges_, saved_ranges_;
  // Atomic in progress (the pipeline is stalled on it).
  struct AtomicOp {
    bool active = false, done = false;
    std::uint64_t host_addr = 0;
    std::uint8_t old_value[8] = {};
  } atomic_;
};

}  // namespace nicsim::hca
