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
#include "hca_model/hca.h"
#include "hca_model/packet_io.h"

namespace nicsim::hca {

class SendEngine {
 public:
  explicit SendEngine(Hca& hca);
  ~SendEngine();

  // The QP may have requester work (doorbell, state change, retransmit).
  void kick(QpCtx& q, Tick delay);
  void port_has_room(std::uint32_t port, Tick when);
  void flush(QpCtx& q);  // every WQE completes with WrFlushError
  void reset(QpCtx& q);  // everything is dropped without completions

  // Completer: responses arriving for this QP's requests.
  void on_ack(QpCtx& q, const PacketFields& f);
  void on_read_response(QpCtx& q, const PacketFields& f, const std::uint8_t* payload, std::size_t len,
                        fabric::Packet* holder);
  void on_atomic_ack(QpCtx& q, const PacketFields& f);

  // Responder output.
  void send_ack(QpCtx& q, std::uint8_t syndrome, std::uint32_t psn, std::uint32_t msn);
  void send_read_response(QpCtx& q, std::uint32_t first_psn, std::vector<HostRange> ranges, std::uint64_t length);
  void send_atomic_ack(QpCtx& q, std::uint32_t psn, std::uint32_t msn, std::uint64_t original);

  // DMA bookkeeping for packets whose bytes are read by in-flight DMA.
  void packet_dma_done(fabric::Packet* p);

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
    std::uint64_t value = 0;           // atomic original
    std::vector<HostRange> ranges;     // read data still to send
    std::uint64_t length = 0, offset = 0;
    std::uint32_t next_psn = 0;
  };

  void schedule(Tick at);
  void pump_due();
  void pump();
  bool build_response();
  bool build_request(QpCtx& q);
  void fetch_wqe(QpCtx& q);
  void wqe_fetched(QpCtx& q, std::uint8_t* buf, bool ok);
  bool gather(Assembly& a, QpCtx& q, const SendWqe& w, std::uint64_t offset, std::uint32_t len);
  Assembly& start_packet(QpCtx& q, PacketFields& f, std::uint32_t payload);
  void fill_route(QpCtx& q, PacketFields& f, const AddressVector& av);
  void drain_assembly();
  static void payload_read_done(void* self, std::uint64_t arg);
  void hold_wqe(Assembly& a, QpCtx& q, SendWqe& w);
  void wqe_reads_done(const Assembly& a);
  static SendWqe* find_wqe(QpCtx& q, std::uint32_t index);
  void complete(QpCtx& q, SendWqe& w, CqeStatus status);
  void retire_completed(QpCtx& q);
  void retransmit_from(QpCtx& q, std::uint32_t psn);
  void arm_timer(QpCtx& q);
  void restart_timer(QpCtx& q);
  void timer_expired(QpCtx& q);
  void fail_qp(QpCtx& q, SendWqe& w, CqeStatus status);
  CqeStatus bind_window(QpCtx& q, const std::uint8_t* wqe);
  std::uint32_t mtu_bytes(const QpCtx& q) const { return 128u << q.mtu; }

  Hca& hca_;
  Ring<std::uint32_t> ready_;            // QPNs with requester work
  std::deque<Response> responses_;       // responder output, FIFO
  std::deque<Assembly> assembly_;        // packets in order of building
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
