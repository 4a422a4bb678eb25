// The HCA's send side: the requester (fetches send WQEs by DMA, segments
// messages into MTU packets, gathers payload by DMA through the TPT), the
// completer (ACK/NAK, read responses and atomic ACKs retire WQEs and write
// CQEs; go-back-N retransmission on NAKs and ACK timeouts; RNR waits), and
// the responder's output (ACKs, NAKs, RDMA read responses, atomic ACKs),
// which has priority over new requests.
//
// Steps are explicit: a packet is assembled (payload DMA reads in flight),
// then sealed (CRCs) and handed to its port in order, at most port_queue
// deep per port, with at most dma_read_depth payload reads outstanding.
#pragma once
#include <cstdint>
#include <deque>
#include <vector>

#include "core/ring.h"
#include "core/units.h"
#include "core/wakeups.h"
#include "hca_model/engine_steps.h"
#include "hca_model/hca.h"
#include "hca_model/packet_io.h"

namespace nicsim::hca {

// The requester's steps (SendEngine::build_request), X(Step, function), in
// the order a packet usually takes them, then where it stops.
#define NICSIM_HCA_REQUESTER_STEPS(X)                                                          \
  X(ChkState, chk_state)          /* only RTS and SQD send, and not during an RNR wait */      \
  X(Flush, flush_sq)              /* Error, SQE: fetched WQEs complete with a flush error */   \
  X(GetWqe, get_wqe)              /* the WQE to packetise; fetch more when there is none */    \
  X(ChkFence, chk_fence)          /* SQD starts no message; a fenced one waits for reads */    \
  X(LocalOp, local_op)            /* NOP, window bind: complete in order without a packet */   \
  X(ChkReadLimit, chk_read_limit) /* reads and atomics in flight within the initiator depth */ \
  X(ReadRequest, read_request)    /* an RDMA read or atomic request packet */                  \
  X(Segment, segment)             /* the next MTU of a send or write: opcode, PSN, headers */  \
  X(Gather, gather_payload)       /* its payload, by DMA through the TPT */                    \
  X(Advance, advance)             /* PSN and bytes sent; a UC/UD message completes */          \
  X(ArmTimer, arm_ack_timer)      /* RC: the ACK timer runs while requests are unanswered */
#define NICSIM_HCA_REQUESTER_ENDS(E) E(Built) E(Idle)
enum class ReqStep : std::uint8_t {
  NICSIM_HCA_REQUESTER_STEPS(NICSIM_HCA_STEP_ENUM) NICSIM_HCA_REQUESTER_ENDS(NICSIM_HCA_END_ENUM)
};
inline constexpr const char* kReqStepNames[] = {NICSIM_HCA_REQUESTER_STEPS(NICSIM_HCA_STEP_NAME)
                                                    NICSIM_HCA_REQUESTER_ENDS(NICSIM_HCA_END_NAME)};

// The completer's steps (SendEngine::on_response), X(Step, function), for a
// response to the QP's requests: an ACK or NAK, a read response, an atomic
// ACK.
#define NICSIM_HCA_COMPLETER_STEPS(X)                                                                 \
  X(GetAck, get_ack)            /* RC QPs not in Error or Reset take responses; which kind */         \
  X(AckWqes, ack_wqes)          /* an ACK or NAK acknowledges the WQEs before its PSN */              \
  X(ChkAck, chk_ack)            /* its AETH: ACK, RNR NAK, PSN sequence NAK or another NAK */         \
  X(ImplicitAck, implicit_ack)  /* a read response or atomic ACK acknowledges earlier sends */        \
  X(ChkWqe, chk_wqe)            /* the oldest unfinished read or atomic is what it answers */         \
  X(ChkPsn, chk_response_psn)   /* read responses in order; one ahead re-requests the read */         \
  X(ChkLength, chk_read_length) /* read data within the read's length */                              \
  X(Read, read_data)            /* read data to the local buffers by DMA, through the TPT */          \
  X(Atomic, atomic_data)        /* the original value to the local buffer */                          \
  X(CompWqe, comp_wqe)          /* the read or atomic completes */                                    \
  X(UpdateComp, update_comp)    /* the ACK timer for what is still in flight; requester on */         \
  X(RnrRetry, rnr_retry)        /* RNR NAK: wait out its timer, or fail with retries spent */         \
  X(ErrorRetry, error_retry)    /* PSN sequence NAK: resend from there, or fail with retries spent */ \
  X(Error, comp_error)          /* other NAKs fail the oldest WQE with their status */                \
  X(Retire, retire)             /* CQEs for the completed WQEs at the head */
#define NICSIM_HCA_COMPLETER_ENDS(E) E(Done)
enum class CompStep : std::uint8_t {
  NICSIM_HCA_COMPLETER_STEPS(NICSIM_HCA_STEP_ENUM) NICSIM_HCA_COMPLETER_ENDS(NICSIM_HCA_END_ENUM)
};
inline constexpr const char* kCompStepNames[] = {NICSIM_HCA_COMPLETER_STEPS(NICSIM_HCA_STEP_NAME)
                                                     NICSIM_HCA_COMPLETER_ENDS(NICSIM_HCA_END_NAME)};

// The transport a QP's packets use (QP0 and QP1 send datagrams).
inline ib::Transport transport_of(QpType t) {
  return t == QpType::Rc ? ib::Transport::RC : t == QpType::Uc ? ib::Transport::UC : ib::Transport::UD;
}

class SendEngine {
 public:
  explicit SendEngine(Hca& hca);
  ~SendEngine();

  // The QP may have requester work (doorbell, state change, retransmit).
  void kick(QpCtx& q, Tick delay);
  void port_has_room(std::uint32_t port, Tick when);
  void flush(QpCtx& q);  // every WQE completes with WrFlushError
  void reset(QpCtx& q);  // everything is dropped without completions

  // Completer: a response to this QP's requests (ACK or NAK, read response,
  // atomic ACK). A read response's payload goes to the requester's buffers
  // by DMA straight from `holder`, the packet that carries it.
  void on_response(QpCtx& q, const ib::PacketHeaders& h, const ib::OpcodeInfo& op, const std::uint8_t* payload,
                   std::size_t len, fabric::Packet* holder);

  // Responder output.
  void send_ack(QpCtx& q, std::uint8_t syndrome, std::uint32_t psn, std::uint32_t msn);
  void send_read_response(QpCtx& q, std::uint32_t first_psn, std::vector<HostRange> ranges, std::uint64_t length);
  void send_atomic_ack(QpCtx& q, std::uint32_t psn, std::uint32_t msn, std::uint64_t original);

  // The QP's timers (QpCtx::ack_timer, rnr_timer) expired.
  void ack_timer_expired(std::uint64_t qpn);
  void rnr_wait_over(std::uint64_t qpn);

 private:
  struct Assembly {
    fabric::Packet* pkt = nullptr;
    std::size_t payload_at = 0;  // where the payload starts in the packet
    std::uint32_t port = 1;
    std::uint32_t reads_pending = 0;
    std::uint32_t qpn = 0;
    // UD/UC requests: the WQE (SQ index, QP epoch) whose completion waits
    // for this packet's payload reads.
    std::uint32_t wqe_epoch = 0, wqe_index = 0;
    bool holds_wqe = false;
    bool failed = false;
  };
  struct Response {
    enum class Kind { Ack, ReadData, AtomicAck } kind = Kind::Ack;
    std::uint32_t qpn = 0;
    std::uint8_t syndrome = 0;
    std::uint32_t psn = 0, msn = 0;
    std::uint64_t value = 0;        // atomic original
    std::vector<HostRange> ranges;  // read data still to send
    std::uint64_t length = 0, offset = 0;
    std::uint32_t next_psn = 0;
  };

  // The requester's context while it builds one packet of a QP.
  struct Req {
    QpCtx& q;
    QpState st = QpState::Reset;
    SendWqe* w = nullptr;
    Assembly* a = nullptr;
    std::uint64_t offset = 0;  // of the packet's payload in the message
    std::uint32_t len = 0;
    std::uint32_t psn = 0;
    bool last = false;
  };

  // The completer's context while it handles one response.
  struct Comp {
    QpCtx& q;
    const ib::PacketHeaders& h;
    const ib::OpcodeInfo& op;
    std::uint32_t psn;
    const std::uint8_t* payload;
    std::size_t len;
    fabric::Packet* holder;
    SendWqe* wqe = nullptr;  // the read or atomic a response answers
  };

  void schedule(Tick at);
  void pump_due();
  void pump();
  bool build_response();
  void build_ack(QpCtx& q, ib::PacketHeaders& h, const Response& r);
  void build_atomic_ack(QpCtx& q, ib::PacketHeaders& h, const Response& r);
  void build_read_data(QpCtx& q, ib::PacketHeaders& h, Response& r);
  // The requester: one packet (or none) of the QP's send queue.
  bool build_request(QpCtx& q);
  ReqStep chk_state(Req& r);
  ReqStep flush_sq(Req& r);
  ReqStep get_wqe(Req& r);
  ReqStep chk_fence(Req& r);
  ReqStep local_op(Req& r);
  ReqStep chk_read_limit(Req& r);
  ReqStep read_request(Req& r);
  ReqStep segment(Req& r);
  ReqStep gather_payload(Req& r);
  ReqStep advance(Req& r);
  ReqStep arm_ack_timer(Req& r);
  ib::PacketHeaders request_headers(QpCtx& q, const SendWqe& w);
  void fetch_wqe(QpCtx& q);
  void wqes_read(std::uint64_t arg);
  void wqe_fetched(QpCtx& q, std::uint8_t* buf, bool ok);
  CqeStatus parse_wqe(QpCtx& q, SendWqe& w, const std::uint8_t* b, bool ok);
  CqeStatus parse_data(QpCtx& q, SendWqe& w, const std::uint8_t* b);
  bool gather(Assembly& a, QpCtx& q, const SendWqe& w, std::uint64_t offset, std::uint32_t len);
  Assembly& start_packet(QpCtx& q, const ib::PacketHeaders& h, std::uint32_t payload);
  void fill_route(QpCtx& q, ib::PacketHeaders& h, const AddressVector& av);
  void drain_assembly();
  void payload_read_done(std::uint64_t arg);
  void hold_wqe(Assembly& a, QpCtx& q, SendWqe& w);
  void wqe_reads_done(const Assembly& a);
  static SendWqe* find_wqe(QpCtx& q, std::uint32_t index);
  void complete(QpCtx& q, SendWqe& w, CqeStatus status);
  void retire_completed(QpCtx& q);
  void retransmit_from(QpCtx& q, std::uint32_t psn);
  // The completer (completer.cc).
  CompStep get_ack(Comp& c);
  CompStep ack_wqes(Comp& c);
  CompStep chk_ack(Comp& c);
  CompStep implicit_ack(Comp& c);
  CompStep chk_wqe(Comp& c);
  CompStep chk_response_psn(Comp& c);
  CompStep chk_read_length(Comp& c);
  CompStep read_data(Comp& c);
  CompStep atomic_data(Comp& c);
  void atomic_data_written(std::uint64_t arg);
  CompStep comp_wqe(Comp& c);
  CompStep update_comp(Comp& c);
  CompStep rnr_retry(Comp& c);
  CompStep error_retry(Comp& c);
  CompStep comp_error(Comp& c);
  CompStep retire(Comp& c);
  // A DMA write from a received packet landed (its reference goes).
  void packet_dma_done(std::uint64_t packet);
  void arm_timer(QpCtx& q);
  void restart_timer(QpCtx& q);
  void timer_expired(QpCtx& q);
  void fail_qp(QpCtx& q, SendWqe& w, CqeStatus status);
  CqeStatus bind_window(QpCtx& q, const std::uint8_t* wqe);
  std::uint32_t mtu_bytes(const QpCtx& q) const { return 128u << q.mtu; }

  Hca& hca_;
  Ring<std::uint32_t> ready_;             // QPNs with requester work
  std::deque<Response> responses_;        // responder output, FIFO
  std::deque<Assembly> assembly_;         // packets in order of building
  std::vector<HostRange> gather_ranges_;  // gather()'s scratch: no allocation per packet
  std::uint32_t reads_in_flight_ = 0;
  Tick busy_until_ = 0;
  Wakeups wakeups_;  // pending pumps
  // The last pump stopped for room in a port (a finished packet could not be
  // handed to its port, or the assembly queue was full): only then does a
  // port's freed room call for a pump.
  bool waiting_for_port_ = false;
};

// 24-bit PSN arithmetic.
inline std::uint32_t psn_add(std::uint32_t psn, std::uint32_t n) { return (psn + n) & 0xffffff; }
// a - b in (-2^23, 2^23]: > 0 when a is after b.
inline std::int32_t psn_diff(std::uint32_t a, std::uint32_t b) {
  std::int32_t d = static_cast<std::int32_t>((a - b) & 0xffffff);
  return d >= 0x800000 ? d - 0x1000000 : d;
}

}  // namespace nicsim::hca
