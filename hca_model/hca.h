// The InfiniBand HCA model: a fabric device with IB ports, an MMIO target on
// its node's host bus, and the engines of an InfiniHost-class adapter:
// command processor, doorbells, translation and protection table (TPT),
// QP/CQ/EQ contexts, a send engine (requester), a receive engine
// (responder), a completer, and the CQ/EQ writer with its interrupt line.
// All engines run on the calendar; the only ways in and out are the host bus
// (MMIO in, DMA both ways), the interrupt line, and the fabric ports.
#pragma once
#include <systemc>
#include <tlm>

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/params.h"
#include "ib_fabric/ib_mgmt.h"
#include "fabric/port.h"
#include "core/inspect.h"
#include "fsm/fsm.h"
#include "hca_model/hca_regs.h"
#include "host/bus.h"
#include "host/host.h"

namespace nicsim::hca {

struct HcaParams {
  std::uint32_t ports;
  std::uint64_t clock_hz;
  std::uint32_t max_mtu;  // IB enum: 1=256 .. 5=4096
  std::uint32_t max_qp, max_qp_wr, max_sge, max_cq, max_cqe, max_mpt, max_mtt, max_pd;
  std::uint32_t max_rd_atom, max_mcg, max_qp_per_mcg, max_inline;
  std::uint32_t dma_read_depth;  // payload reads the send engine keeps in flight
  std::uint32_t wqe_prefetch;    // send WQEs fetched per DMA read
  std::uint32_t port_queue;      // packets the send engine keeps queued per port
  std::uint64_t loopback_bps;    // a port's internal loopback path: data rate
  Tick loopback_latency;         // and the time from a packet's tail to the receive side
  Tick command_latency;          // firmware time per command
  Tick sma_latency;              // firmware SMA time per SMP from the wire
  // Engine costs, in HCA clock cycles.
  std::uint32_t doorbell_cycles, wqe_cycles, tx_packet_cycles, rx_packet_cycles, tpt_cycles, cqe_cycles, ack_cycles,
      atomic_cycles;
  std::uint32_t ack_coalesce;    // responder ACKs at least every N packets
  std::uint8_t local_ack_delay;  // reported in the CA attributes (4.096us * 2^x)
  bool verify_crc_always;        // recompute CRCs of every received packet
  std::uint64_t node_guid;
  std::uint64_t bar0;  // MMIO window base on the host bus
};

HcaParams hca_params_from(const ParamSet& p, std::uint32_t node_id);

// Memory protection table entry (a region or a window).
struct Mpt {
  bool valid = false;
  std::uint32_t flags = 0;
  std::uint32_t pd = 0;
  std::uint32_t key = 0;
  std::uint64_t start = 0;
  std::uint64_t length = 0;
  std::uint32_t mtt_first = 0;
  std::uint8_t page_size_log = 12;
  std::uint32_t bound_qpn = 0;      // windows: the QP that bound it
  std::uint32_t parent_key = 0;     // windows: the region it is bound to
  std::uint32_t windows_bound = 0;  // regions: live windows bound to it
};

// A contiguous piece of host memory produced by translation.
struct HostRange {
  std::uint64_t addr;
  std::uint32_t len;
};

enum class TptResult : std::uint8_t { Ok, BadKey, BadPd, BadAccess, OutOfBounds };

class Tpt {
 public:
  void resize(std::uint32_t mpts, std::uint32_t mtts) {
    mpts_.resize(mpts);
    mtt_.resize(mtts, 0);
  }
  Mpt* entry(std::uint32_t key);  // by index bits, any tag
  std::vector<Mpt>& mpts() { return mpts_; }
  const std::vector<Mpt>& mpts() const { return mpts_; }
  std::vector<std::uint64_t>& mtt() { return mtt_; }
  const std::vector<std::uint64_t>& mtt() const { return mtt_; }
  // Checks key, PD, access and bounds for [va, va+len) and appends the host
  // ranges it maps to. `need` is a set of mpt:: flags (0 for local read).
  TptResult translate(std::uint32_t key, std::uint32_t pd, std::uint64_t va, std::uint64_t len, std::uint32_t need,
                      std::uint32_t qpn, std::vector<HostRange>& out) const;
  std::uint64_t lookups = 0;

 private:
  std::vector<Mpt> mpts_;
  std::vector<std::uint64_t> mtt_;
};

struct WorkQueue {
  std::uint64_t base = 0;
  std::uint32_t entries = 0;
  std::uint8_t stride_log = 0;
  std::uint32_t producer = 0;  // from doorbells
  std::uint32_t consumer = 0;  // WQEs the HCA has taken
  std::uint64_t addr(std::uint32_t count) const {
    return base + (static_cast<std::uint64_t>(count % entries) << stride_log);
  }
  std::uint32_t stride() const { return 1u << stride_log; }
  bool empty() const { return producer == consumer; }
};

struct AddressVector {
  std::uint16_t dlid = 0;
  std::uint8_t sl = 0, path_bits = 0, static_rate = 0;
  bool grh = false;
  std::uint8_t hop_limit = 0, sgid_index = 0, tclass = 0;
  std::uint32_t flow_label = 0;
  std::array<std::uint8_t, 16> dgid{};
};

// One parsed send WQE and its progress on the requester.
struct SendWqe {
  std::uint32_t index = 0;  // SQ count at which it was taken
  swqe::Op op = swqe::Op::Nop;
  std::uint8_t flags = 0;
  std::uint64_t wr_id = 0;
  std::uint32_t imm = 0;
  std::uint32_t rkey = 0;
  std::uint64_t remote_va = 0;
  std::uint64_t swap_add = 0, compare = 0;
  std::uint32_t ud_dqpn = 0, ud_qkey = 0;
  AddressVector ud_av;
  std::vector<std::uint8_t> inline_data;
  std::vector<std::array<std::uint64_t, 2>> ds;  // {addr, lkey << 32 | length}
  std::uint64_t length = 0;                      // total message bytes
  std::uint32_t first_psn = 0, last_psn = 0;
  std::uint64_t sent = 0;  // bytes put into packets so far
  bool all_sent = false;
  std::uint64_t read_done = 0;  // RDMA read: response bytes received
  // UD/UC: packets of this message whose payload reads are in flight. A
  // completion waits for them (the buffer is in use until they finish).
  std::uint32_t packets_reading = 0;
  bool read_failed = false;     // a payload read of this message master-aborted
  bool completion_due = false;  // completed with `status` once packets_reading is 0
  bool completed = false;
  CqeStatus status = CqeStatus::Success;
};

// QP0 and QP1 send and receive datagrams like UD QPs.
inline bool is_datagram(QpType t) { return t == QpType::Ud || t == QpType::Qp0 || t == QpType::Qp1; }

// FSM "hca.qp": its states are the hardware's QpState. The xx2yy events,
// Reset and ToError are MODIFY_QP commands; the HCA itself makes SendError
// (a UC/UD send queue error stops the send queue: SQE) and WqError (an RC
// completion or responder error: the QP goes to Error and is flushed).
NICSIM_FSM_NAMES(QpState, NICSIM_HCA_QP_STATES)
#define NICSIM_HCA_QP_EVENTS(X) \
  X(Rst2Init)                   \
  X(Init2Init)                  \
  X(Init2Rtr)                   \
  X(Rtr2Rts) X(Rts2Rts) X(Rts2Sqd) X(Sqd2Sqd) X(Sqd2Rts) X(Sqe2Rts) X(Reset) X(ToError) X(SendError) X(WqError)
NICSIM_FSM_ENUM(QpEvent, NICSIM_HCA_QP_EVENTS)

struct QpMachine {
  using State = QpState;
  using Event = QpEvent;
  static const FsmType& type();
  // The MODIFY_QP event that takes a QP from `from` to `to`, if there is one.
  static std::optional<QpEvent> modify_event(QpState from, QpState to);
};

struct QpCtx {
  QpCtx(std::uint32_t qpn, std::uint32_t device, const std::string& owner, class SendEngine& engine);
  std::uint32_t qpn;
  Fsm<QpMachine> fsm;
  QpState state() const { return fsm.state(); }
  QpType type = QpType::Rc;
  std::uint32_t pd = 0, send_cqn = 0, recv_cqn = 0;
  WorkQueue sq, rq;
  std::uint8_t port = 1, mtu = 2, sig_all = 0;
  std::uint32_t qkey = 0, dest_qpn = 0, access = 0;
  std::uint16_t pkey_index = 0;
  std::uint8_t retry_cnt = 7, rnr_retry = 7, min_rnr_timer = 0, local_ack_timeout = 0;
  std::uint8_t init_depth = 1, resp_res = 1;
  AddressVector av;
  bool sq_drain_event = false;

  // Requester.
  std::deque<SendWqe> wqes;    // fetched, not yet completed, in order
  std::size_t tx_index = 0;    // wqes[tx_index] is being packetised
  std::uint32_t next_psn = 0;  // PSN of the next new packet
  std::uint32_t oldest_unacked = 0;
  std::uint32_t reads_outstanding = 0;
  // A read response came ahead of the one expected (`read_gap_psn`): the
  // rest of the read was requested again, and the responses still on their
  // way from before are dropped without asking again (once per gap).
  bool read_gap_pending = false;
  std::uint32_t read_gap_psn = 0;
  bool fetching = false;  // a WQE read is in flight
  bool in_send_list = false;
  std::uint32_t retries_left = 7, rnr_retries_left = 7;
  Timer ack_timer;            // the local ACK timeout (IBA 9.7.6.1.1)
  Timer rnr_timer;            // waiting out an RNR NAK: sending stops meanwhile
  std::uint32_t rnr_psn = 0;  // where to resend from when the RNR wait is over
  bool rnr_waiting() const { return rnr_timer.armed(); }
  std::uint32_t packets_building = 0;   // payload reads in flight
  std::uint32_t epoch = 0;              // bumped on reset: late DMA completions for an old epoch are ignored
  std::vector<std::uint8_t> fetch_buf;  // the send WQEs being fetched
  std::uint32_t fetch_count = 0;

  // Responder.
  std::uint32_t expected_psn = 0;
  std::uint32_t msn = 0;
  bool nak_sent = false;     // one PSN-sequence NAK per gap
  bool recv_active = false;  // a receive WQE is open for a multi-packet message
  std::uint64_t recv_wr_id = 0;
  std::vector<HostRange> recv_ranges;  // translated receive buffer
  std::uint64_t recv_offset = 0, recv_capacity = 0;
  bool recv_length_error = false;
  std::uint64_t write_va = 0;  // RDMA write in progress
  std::uint32_t write_rkey = 0;
  std::uint64_t write_left = 0;
  std::uint32_t unacked_packets = 0;
  std::uint32_t reads_in_progress = 0;
  Inspectable inspectable;  // the context as the debugger shows it (hca_inspect.cc)
};

struct CqCtx {
  bool valid = false;
  std::uint64_t base = 0;
  std::uint32_t entries = 0, eqn = 0, producer = 0, consumer = 0, pd = 0;
  reg::CqDoorbell arm = reg::CqDoorbell::UpdateConsumer;  // UpdateConsumer = not armed
  bool overrun = false;
  std::unique_ptr<Inspectable> inspectable;  // from SW2HW_CQ on (hca_inspect.cc)
};

// The debugger's view of a QP context and a CQ (hca_inspect.cc).
void inspect_qp(const void* qp, InspectRows& rows);
void inspect_cq(const void* cq, InspectRows& rows);
void inspect_tpt(const void* tpt, InspectRows& rows);

struct EqCtx {
  bool valid = false;
  std::uint64_t base = 0;
  std::uint32_t entries = 0, producer = 0, consumer = 0;
  int irq_vector = -1;
  std::uint64_t event_mask = ~0ULL;
  bool armed = true;
};

struct HcaStats {
  std::uint64_t commands = 0, doorbells = 0;
  std::uint64_t tx_packets = 0, rx_packets = 0, tx_bytes = 0, rx_bytes = 0;
  std::uint64_t rx_bad_crc = 0, rx_dropped = 0, rx_bad_qp = 0, qkey_violations = 0;
  std::uint64_t acks_sent = 0, naks_sent = 0, rnr_naks_sent = 0, retransmits = 0, timeouts = 0;
  std::uint64_t cqes = 0, eqes = 0, interrupts = 0;
  std::uint64_t loopback_packets = 0;  // sent to a port's own LID: turned around inside the HCA
};

class Hca : public fabric::Device, public tlm::tlm_fw_transport_if<> {
 public:
  Hca(fabric::Fabric& fabric, std::uint32_t device_id, std::string name, host::Host& host, host::HostBus& bus,
      const ParamSet& params);
  ~Hca() override;

  const HcaParams& params() const { return p_; }
  std::uint64_t bar0() const { return p_.bar0; }
  const HcaStats& stats() const { return stats_; }
  host::HostBus& bus() { return bus_; }
  std::uint16_t port_lid(std::uint32_t port) const { return lids_.at(port - 1); }
  void set_port_lid(std::uint32_t port, std::uint16_t lid) { lids_.at(port - 1) = lid; }
  void assign_address(std::uint32_t port, std::uint16_t lid) override { set_port_lid(port, lid); }
  bool port_active(std::uint32_t port) const;
  // Where the send engine's finished packets go: out of `port`, or, when
  // addressed to the port's own LID, around its internal loopback; a
  // multicast goes out and, for other members on this port, around too.
  bool loops_back(std::uint32_t port, const fabric::Packet& p) const;
  bool tx_full(std::uint32_t port, const fabric::Packet& p);
  void transmit(std::uint32_t port, fabric::Packet* p, std::uint32_t sender_qpn);
  // Whether `port` may send a packet on `vl` now: data needs an Active port,
  // subnet management (VL15) only a link that is up.
  bool port_carries(std::uint32_t port, std::uint8_t vl) const;
  fabric::IbPortState& ib_port(std::uint32_t port) { return *ib_ports_.at(port - 1); }
  void set_managed(bool managed) override {
    subnet_managed_ = managed;
    for (std::uint32_t p = 1; p <= p_.ports; ++p) port_changed(p, "power_on");
  }
  bool subnet_managed() const { return subnet_managed_; }
  // Re-evaluates the logical port state after the link or INIT_IB/CLOSE_IB
  // changed, and raises the port event the consumers see.
  void port_changed(std::uint32_t port, const char* cause);
  // The SM set PortInfo:PortState; false if IBA does not allow it from here.
  bool sm_set_port_state(std::uint32_t port, std::uint8_t code);
  // A packet for QP0 arrived (recv engine). The firmware SMA answers SMP
  // requests; responses and traps go to the QP0 of software (returned,
  // nullptr when none may take it).
  QpCtx* smi_receive(fabric::Port& in, fabric::Packet& p);
  // Logical port state the driver controls with INIT_IB / CLOSE_IB, and the
  // PortInfo fields SET_IB and the SMA maintain.
  struct PortState {
    bool enabled = false;
    bool closed = false;  // CLOSE_IB after INIT_IB: the driver took the port down
    std::uint32_t cap_mask = 0;
    std::uint16_t qkey_violations = 0, pkey_violations = 0;
    std::uint16_t sm_lid = 0;
    std::uint8_t lmc = 0;
  };
  PortState& port_state(std::uint32_t port) { return port_states_.at(port - 1); }

  // TLM-2.0 target: MMIO from the host bus (offset within BAR0).
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) override;
  bool get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi&) override { return false; }
  unsigned int transport_dbg(tlm::tlm_generic_payload&) override { return 0; }
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload&, tlm::tlm_phase&, sc_core::sc_time&) override {
    return tlm::TLM_COMPLETED;
  }

  // Fabric.
  void receive(fabric::Port& in, fabric::Packet* p) override;
  void link_state_changed(fabric::Port& port, bool up) override;
  void transmitted(fabric::Port& port, const fabric::Packet& p, Tick start, Tick end) override;

  QpCtx* qp(std::uint32_t qpn);

 private:
  friend class CommandProcessor;
  friend class SendEngine;
  friend class RecvEngine;
  Tick cycles(std::uint32_t n) const { return cycles_time(n, p_.clock_hz); }
  // Doorbells and commands.
  void doorbell(std::uint64_t offset, std::uint32_t word0, std::uint32_t word1);
  void wq_doorbell(bool send, std::uint32_t word0, std::uint32_t word1);
  void cq_doorbell(std::uint32_t word0, std::uint32_t word1);
  void eq_doorbell(std::uint32_t word0, std::uint32_t word1);
  void start_command();
  void finish_command(CmdStatus status);
  // Completions and events.
 public:
  // Writes a CQE (owner byte set here) by DMA; raises a completion event
  // afterwards if the CQ is armed for it. Returns false on overrun.
  struct Staging;
  bool write_cqe(std::uint32_t cqn, Staging* cqe, bool solicited);
  void post_event(Event type, std::uint32_t object, std::uint32_t data = 0, std::uint8_t subtype = 0,
                  std::uint32_t eqn = 0);
  // A small DMA staging buffer (a CQE, an EQE, an atomic's value) and what
  // the end of its write does; taken from a free list, reused.
  struct Staging {
    std::array<std::uint8_t, 64> bytes{};
    std::uint32_t object = 0;          // the CQ or EQ its entry goes to
    bool notify = false;               // a CQE: a completion event once it is written
    fabric::Packet* packet = nullptr;  // an atomic's result: its request, freed once written
    std::uint32_t writes = 0;          // writes of it still to land
    std::uint8_t* data() { return bytes.data(); }
  };
  Staging* scratch();
  void release_scratch(Staging* s);
  void qp_to_error(QpCtx& qp, const char* cause);
  void flush_qp(QpCtx& qp);
  Tpt& tpt() { return tpt_; }
  std::map<std::uint32_t, CqCtx>& cqs() { return cqs_; }
  std::map<std::uint32_t, EqCtx>& eqs() { return eqs_; }
  std::map<std::uint32_t, std::unique_ptr<QpCtx>>& qps() { return qps_; }
  std::map<std::uint16_t, std::vector<std::uint32_t>>& mcgs() { return mcgs_; }
  std::array<std::uint32_t, 2>& special_qp_base() { return special_qp_base_; }
  host::Host& host() { return host_; }
  HcaStats& mutable_stats() { return stats_; }
  class SendEngine& send_engine() {
    return *send_;
  }
  class RecvEngine& recv_engine() {
    return *recv_;
  }
  Tick clock_cycles(std::uint32_t n) const { return cycles(n); }

 private:
  HcaParams p_;
  host::Host& host_;
  host::HostBus& bus_;
  std::array<std::uint8_t, 0x20> hcr_{};
  std::unique_ptr<class CommandProcessor> commands_;
  std::unique_ptr<class SendEngine> send_;
  std::unique_ptr<class RecvEngine> recv_;
  Tpt tpt_;
  std::unique_ptr<Inspectable> tpt_inspectable_;  // the MR/MW table (hca_inspect.cc)
  std::map<std::uint32_t, std::unique_ptr<QpCtx>> qps_;
  std::map<std::uint32_t, CqCtx> cqs_;
  std::map<std::uint32_t, EqCtx> eqs_;
  std::map<std::uint16_t, std::vector<std::uint32_t>> mcgs_;  // MLID -> QPNs
  std::array<std::uint32_t, 2> special_qp_base_{{0, 0}};      // per port: QP0 QPN (QP1 = +1)
  std::vector<std::unique_ptr<Staging>> scratch_all_;
  std::vector<Staging*> scratch_free_;
  std::vector<std::uint16_t> lids_;
  std::vector<PortState> port_states_;
  std::vector<std::unique_ptr<fabric::IbPortState>> ib_ports_;
  std::vector<std::unique_ptr<class Loopback>> loopbacks_;  // per port
  bool subnet_managed_ = false;
  void sma_answer(std::uint32_t port, const fabric::SmpPacket& request);
  void sma_reply();
  void cqe_written(std::uint64_t arg);
  void eqe_written(std::uint64_t arg);
  bool has_other_member(std::uint32_t port, std::uint16_t mlid, std::uint32_t sender_qpn);
  HcaStats stats_;
  // SMPs the SMA answers after sma_latency, in arrival order.
  struct SmaJob {
    std::uint32_t port;
    fabric::SmpPacket request;
  };
  std::deque<SmaJob> sma_jobs_;
};

}  // namespace nicsim::hca
