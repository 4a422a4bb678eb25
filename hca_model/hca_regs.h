// The HCA's hardware/software interface: the contract between the verbs
// driver (verbs/) and the HCA model (hca_model/). Nothing else crosses:
// the driver writes registers and doorbells by MMIO and leaves descriptors in
// host memory; the HCA DMA-reads them, DMA-writes completions and events,
// and raises its interrupt line.
//
// Modelled on the InfiniHost family in spirit (command register + mailboxes
// for context management, UAR doorbells, work queues, completion and event
// queues in host memory with owner bits), with formats of our own. Every
// register and descriptor is a table of fields (name, byte offset, width);
// all multi-byte fields are little-endian host order.
//
// Encodings used throughout:
// - Keys (lkey, rkey, MW keys) are host integers: (MPT index << 8) | tag.
//   (The verbs API hands rkeys to consumers in wire order; the driver
//   converts.)
// - Immediate data in WQEs and CQEs is the host integer whose big-endian
//   bytes are the ImmDt field on the wire.
// - Access rights (qpc::access, mpt::flags, bind access) use the mpt:: flag
//   bits.
// - eqc::event_mask has bit N set for event type N (the Event values).
// - Every mailbox is node memory the driver allocated; the HCA DMA-reads
//   inputs and DMA-writes outputs.
#pragma once
#include <cstdint>
#include <cstring>

#include "core/fields.h"

namespace nicsim::hca {

using nicsim::Field;
using nicsim::get;
using nicsim::get_bytes;
using nicsim::put;
using nicsim::put_bytes;

#define NICSIM_HCA_FIELD(name, offset, width) inline constexpr Field name{offset, width, #name};

// ---------------------------------------------------------------------------
// BAR0 register map. One 4 KiB window per HCA on its node's host bus.
// ---------------------------------------------------------------------------
inline constexpr std::uint64_t kBar0Size = 0x1000;

namespace reg {
// Host command register (HCR): 28 bytes. The driver fills the parameters,
// then writes `go_opcode` with the go bit set; the HCA executes the command
// (DMA-reading the input mailbox, DMA-writing the output mailbox), then
// clears go and sets the status. The driver polls `go_opcode` by MMIO read
// (or waits for a COMMAND_DONE event when the event bit is set).
#define NICSIM_HCA_HCR(F)     \
  F(hcr_in_param, 0x00, 8)    \
  F(hcr_in_modifier, 0x08, 4) \
  F(hcr_out_param, 0x0c, 8)   \
  F(hcr_token, 0x14, 4)       \
  F(hcr_go_opcode, 0x18, 4)
NICSIM_HCA_HCR(NICSIM_HCA_FIELD)
inline constexpr std::uint32_t kHcrGo = 1u << 23;     // in hcr_go_opcode
inline constexpr std::uint32_t kHcrEvent = 1u << 22;  // post COMMAND_DONE to EQ 0 when done
inline constexpr std::uint32_t kHcrStatusShift = 24;  // status in bits 31..24
inline constexpr std::uint32_t kHcrOpcodeMask = 0xffff;

// Doorbells (the UAR). Each is one 8-byte MMIO write: word 0 (offset +0)
// names the object and command, word 1 (offset +4) carries a counter.
#define NICSIM_HCA_DOORBELLS(F) \
  F(db_send, 0x100, 8)          \
  F(db_recv, 0x108, 8)          \
  F(db_cq, 0x110, 8)            \
  F(db_eq, 0x118, 8)
NICSIM_HCA_DOORBELLS(NICSIM_HCA_FIELD)
// db_send: word0 = QPN (24 bits); word1 = send producer count (WQEs ever
//          posted to that SQ, modulo 2^32).
// db_recv: word0 = QPN; word1 = receive producer count.
// db_cq:   word0 = CQN | (command << 24); word1 = consumer count.
// db_eq:   word0 = EQN | (command << 24); word1 = consumer count.
enum class CqDoorbell : std::uint8_t { UpdateConsumer = 0, ArmNext = 1, ArmSolicited = 2 };
enum class EqDoorbell : std::uint8_t { UpdateConsumer = 0, UpdateAndArm = 1 };

// Read-only identification registers.
#define NICSIM_HCA_ID_REGS(F) \
  F(id_vendor, 0x200, 4)      \
  F(id_device, 0x204, 4)      \
  F(id_revision, 0x208, 4)    \
  F(id_node_guid, 0x210, 8)
NICSIM_HCA_ID_REGS(NICSIM_HCA_FIELD)
// What the identification registers and the PCI configuration header say.
inline constexpr std::uint16_t kVendorMellanox = 0x15b3;
inline constexpr std::uint16_t kDeviceMt23108 = 0x5a44;  // InfiniHost
inline constexpr std::uint8_t kRevision = 0xa1;
inline constexpr std::uint32_t kClassInfiniBand = 0x0c0600;  // serial bus controller, InfiniBand
}  // namespace reg

// ---------------------------------------------------------------------------
// Commands (opcode in hcr_go_opcode). Mailboxes are host memory the driver
// allocated; their formats follow.
// ---------------------------------------------------------------------------
#define NICSIM_HCA_COMMANDS(X)                                                                             \
  X(QUERY_HCA, 0x0003, "out: HcaCaps mailbox")                                                             \
  X(INIT_IB, 0x0009, "in_mod: port; brings the port's link up")                                            \
  X(CLOSE_IB, 0x000a, "in_mod: port; takes the link down")                                                 \
  X(SET_IB, 0x000c, "in_mod: port; in: portset mailbox")                                                   \
  X(SW2HW_MPT, 0x000d, "in_mod: MPT index; in: Mpt mailbox (region or window)")                            \
  X(HW2SW_MPT, 0x000f, "in_mod: MPT index")                                                                \
  X(WRITE_MTT, 0x0011, "in_mod: first MTT index; in: count then page addresses")                           \
  X(SW2HW_EQ, 0x0013, "in_mod: EQN; in: EqContext")                                                        \
  X(HW2SW_EQ, 0x0014, "in_mod: EQN")                                                                       \
  X(SW2HW_CQ, 0x0016, "in_mod: CQN; in: CqContext")                                                        \
  X(HW2SW_CQ, 0x0017, "in_mod: CQN")                                                                       \
  X(QUERY_CQ, 0x0018, "in_mod: CQN; out: CqContext with counters")                                         \
  X(RESIZE_CQ, 0x002c, "in_mod: CQN; in: CqContext (new ring; the HCA writes the old ring until it runs)") \
  X(MODIFY_QP, 0x0020, "in_mod: QPN; in: QpContext (from, to, mask, fields)")                              \
  X(QUERY_QP, 0x0022, "in_mod: QPN; out: QpContext")                                                       \
  X(CONF_SPECIAL_QP, 0x0023, "in_mod: port << 24; in_param: QPN of QP0 (QP1 is +1)")                       \
  X(MAD_IFC, 0x0024, "in_mod: port; in: 256-byte MAD; out: 256-byte response")                             \
  X(ATTACH_MCG, 0x0030, "in_mod: QPN; in: McgEntry (MGID, MLID)")                                          \
  X(DETACH_MCG, 0x0031, "in_mod: QPN; in: McgEntry")

enum class Command : std::uint16_t {
#define NICSIM_X(name, value, doc) name = value,
  NICSIM_HCA_COMMANDS(NICSIM_X)
#undef NICSIM_X
};
const char* command_name(std::uint16_t opcode);  // "?" for unknown

// Command completion status (HCR bits 31..24).
#define NICSIM_HCA_CMD_STATUS(X)                                    \
  X(OK, 0x00, "success")                                            \
  X(BAD_OP, 0x02, "unknown opcode")                                 \
  X(BAD_PARAM, 0x03, "a mailbox field is out of range")             \
  X(BAD_SYS_STATE, 0x04, "the HCA is not in a state for this")      \
  X(BAD_RESOURCE, 0x05, "no such object, or the index is not free") \
  X(RESOURCE_BUSY, 0x06, "the object is in use")                    \
  X(EXCEED_LIM, 0x08, "beyond a device limit")                      \
  X(BAD_QP_STATE, 0x10, "the QP is not in the from-state given")    \
  X(BAD_INDEX, 0x0a, "an index or key is not valid")                \
  X(BAD_MAILBOX, 0x0b, "mailbox address outside host memory")

enum class CmdStatus : std::uint8_t {
#define NICSIM_X(name, value, doc) name = value,
  NICSIM_HCA_CMD_STATUS(NICSIM_X)
#undef NICSIM_X
};
const char* cmd_status_name(std::uint8_t status);

// QUERY_HCA output mailbox.
namespace caps {
#define NICSIM_HCA_CAPS(F)        \
  F(max_qp, 0x00, 4)              \
  F(max_qp_wr, 0x04, 4)           \
  F(max_sge, 0x08, 4)             \
  F(max_cq, 0x0c, 4)              \
  F(max_cqe, 0x10, 4)             \
  F(max_mpt, 0x14, 4)             \
  F(max_mtt, 0x18, 4)             \
  F(max_pd, 0x1c, 4)              \
  F(max_qp_init_rd_atom, 0x20, 4) \
  F(max_qp_resp_rd_atom, 0x24, 4) \
  F(max_mcg, 0x28, 4)             \
  F(max_qp_per_mcg, 0x2c, 4)      \
  F(num_ports, 0x30, 1)           \
  F(max_mtu, 0x31, 1)             \
  F(local_ack_delay, 0x32, 1)     \
  F(atomic_cap, 0x33, 1)          \
  F(page_size_log, 0x34, 1)       \
  F(max_inline, 0x38, 4)          \
  F(node_guid, 0x40, 8)           \
  F(max_eq, 0x48, 4)
NICSIM_HCA_CAPS(NICSIM_HCA_FIELD)
inline constexpr std::uint32_t kSize = 0x50;
}  // namespace caps

// MPT entry: a memory region or window (SW2HW_MPT input).
namespace mpt {
#define NICSIM_HCA_MPT(F)   \
  F(flags, 0x00, 4)         \
  F(pd, 0x04, 4)            \
  F(key, 0x08, 4)           \
  F(start, 0x10, 8)         \
  F(length, 0x18, 8)        \
  F(mtt_first, 0x20, 4)     \
  F(page_size_log, 0x24, 1) \
  F(bound_qpn, 0x28, 4)
NICSIM_HCA_MPT(NICSIM_HCA_FIELD)
inline constexpr std::uint32_t kSize = 0x30;
// flags
inline constexpr std::uint32_t kLocalWrite = 1u << 0;
inline constexpr std::uint32_t kRemoteRead = 1u << 1;
inline constexpr std::uint32_t kRemoteWrite = 1u << 2;
inline constexpr std::uint32_t kRemoteAtomic = 1u << 3;
inline constexpr std::uint32_t kMwBind = 1u << 4;
inline constexpr std::uint32_t kIsWindow = 1u << 8;  // a memory window (no pages of its own)
inline constexpr std::uint32_t kPhysical = 1u << 9;  // start is a host address; no MTT
inline constexpr std::uint32_t kValid = 1u << 31;    // the driver sets it on SW2HW_MPT
}  // namespace mpt
// Keys: bits 31..8 are the MPT index, bits 7..0 a tag the driver changes on
// every reuse, so a stale key never matches a new region.
inline constexpr std::uint32_t mpt_index(std::uint32_t key) { return key >> 8; }

// WRITE_MTT input: u32 count at offset 0, then `count` u64 page addresses
// from offset 8. At most kMttPerCommand per command.
inline constexpr std::uint32_t kMttPerCommand = 500;

// Event queue context (SW2HW_EQ input).
namespace eqc {
#define NICSIM_HCA_EQC(F) \
  F(base, 0x00, 8)        \
  F(entries, 0x08, 4)     \
  F(irq_vector, 0x0c, 4)  \
  F(event_mask, 0x10, 8)
NICSIM_HCA_EQC(NICSIM_HCA_FIELD)
inline constexpr std::uint32_t kSize = 0x18;
}  // namespace eqc

// Completion queue context (SW2HW_CQ / RESIZE_CQ input, QUERY_CQ output).
namespace cqc {
#define NICSIM_HCA_CQC(F) \
  F(base, 0x00, 8)        \
  F(entries, 0x08, 4)     \
  F(eqn, 0x0c, 4)         \
  F(producer, 0x10, 4)    \
  F(consumer, 0x14, 4)    \
  F(pd, 0x18, 4)          \
  F(state, 0x1c, 4)
NICSIM_HCA_CQC(NICSIM_HCA_FIELD)
inline constexpr std::uint32_t kSize = 0x20;
}  // namespace cqc

// Queue pair context (MODIFY_QP input, QUERY_QP output). `opt_mask` says
// which fields the transition sets (bits below); the HCA checks that the QP
// is in `from_state` and that from->to is a legal transition.
namespace qpc {
#define NICSIM_HCA_QPC(F)       \
  F(from_state, 0x00, 1)        \
  F(to_state, 0x01, 1)          \
  F(qp_type, 0x02, 1)           \
  F(mtu, 0x03, 1)               \
  F(opt_mask, 0x04, 4)          \
  F(pd, 0x08, 4)                \
  F(send_cqn, 0x0c, 4)          \
  F(recv_cqn, 0x10, 4)          \
  F(sq_base, 0x18, 8)           \
  F(sq_entries, 0x20, 4)        \
  F(sq_stride_log, 0x24, 1)     \
  F(port, 0x25, 1)              \
  F(sig_all, 0x26, 1)           \
  F(rq_stride_log, 0x27, 1)     \
  F(rq_base, 0x28, 8)           \
  F(rq_entries, 0x30, 4)        \
  F(qkey, 0x34, 4)              \
  F(dest_qpn, 0x38, 4)          \
  F(sq_psn, 0x3c, 4)            \
  F(rq_psn, 0x40, 4)            \
  F(access, 0x44, 4)            \
  F(pkey_index, 0x48, 2)        \
  F(retry_cnt, 0x4a, 1)         \
  F(rnr_retry, 0x4b, 1)         \
  F(min_rnr_timer, 0x4c, 1)     \
  F(local_ack_timeout, 0x4d, 1) \
  F(init_depth, 0x4e, 1)        \
  F(resp_res, 0x4f, 1)          \
  F(av_dlid, 0x50, 2)           \
  F(av_sl, 0x52, 1)             \
  F(av_path_bits, 0x53, 1)      \
  F(av_static_rate, 0x54, 1)    \
  F(av_grh, 0x55, 1)            \
  F(av_hop_limit, 0x56, 1)      \
  F(av_sgid_index, 0x57, 1)     \
  F(av_flow_label, 0x58, 4)     \
  F(av_tclass, 0x5c, 1)         \
  F(sq_draining, 0x5d, 1)       \
  F(av_dgid, 0x60, 16)
NICSIM_HCA_QPC(NICSIM_HCA_FIELD)
inline constexpr std::uint32_t kSize = 0x70;
}  // namespace qpc

// QP states and types as the hardware numbers them.
#define NICSIM_HCA_QP_STATES(X) X(Reset) X(Init) X(Rtr) X(Rts) X(Sqd) X(Sqe) X(Error)
enum class QpState : std::uint8_t {
#define NICSIM_X(s) s,
  NICSIM_HCA_QP_STATES(NICSIM_X)
#undef NICSIM_X
};
enum class QpType : std::uint8_t { Rc = 0, Uc = 1, Ud = 3, Qp0 = 8, Qp1 = 9 };

// opt_mask bits: the fields a MODIFY_QP sets.
namespace qp_mask {
inline constexpr std::uint32_t kPkeyIndex = 1u << 0;
inline constexpr std::uint32_t kPort = 1u << 1;
inline constexpr std::uint32_t kQkey = 1u << 2;
inline constexpr std::uint32_t kAccess = 1u << 3;
inline constexpr std::uint32_t kAv = 1u << 4;
inline constexpr std::uint32_t kMtu = 1u << 5;
inline constexpr std::uint32_t kDestQpn = 1u << 6;
inline constexpr std::uint32_t kRqPsn = 1u << 7;
inline constexpr std::uint32_t kRespRes = 1u << 8;
inline constexpr std::uint32_t kMinRnrTimer = 1u << 9;
inline constexpr std::uint32_t kSqPsn = 1u << 10;
inline constexpr std::uint32_t kLocalAckTimeout = 1u << 11;
inline constexpr std::uint32_t kRetryCnt = 1u << 12;
inline constexpr std::uint32_t kRnrRetry = 1u << 13;
inline constexpr std::uint32_t kInitDepth = 1u << 14;
inline constexpr std::uint32_t kQueues = 1u << 15;  // sq/rq base, entries, strides, CQNs, pd, type
inline constexpr std::uint32_t kSqDrainEvent = 1u << 16;
}  // namespace qp_mask

// SET_IB input: port settings the driver may change (modify_ca).
namespace portset {
#define NICSIM_HCA_PORTSET(F)       \
  F(cap_mask_set, 0x00, 4)          \
  F(cap_mask_clear, 0x04, 4)        \
  F(reset_qkey_violations, 0x08, 1) \
  F(reset_pkey_violations, 0x09, 1)
NICSIM_HCA_PORTSET(NICSIM_HCA_FIELD)
inline constexpr std::uint32_t kSize = 0x10;
}  // namespace portset

// Multicast group entry (ATTACH_MCG / DETACH_MCG input).
namespace mcg {
#define NICSIM_HCA_MCG(F) \
  F(mgid, 0x00, 16)       \
  F(mlid, 0x10, 2)
NICSIM_HCA_MCG(NICSIM_HCA_FIELD)
inline constexpr std::uint32_t kSize = 0x14;
}  // namespace mcg

// ---------------------------------------------------------------------------
// Work queue entries in host memory.
// ---------------------------------------------------------------------------
// Send WQE: a control segment, an address segment (RDMA / atomic / UD),
// then data segments or inline data. Stride is 2^sq_stride_log (>= 128).
// The address segment is read per opcode, so fields of different opcodes
// share offsets: RDMA uses rkey/remote_va; atomics add swap_add/compare; UD
// sends use ud_*; BindMw uses bind_* (which overlay the others) and takes the
// window's start address from remote_va.
namespace swqe {
#define NICSIM_HCA_SWQE(F)    \
  F(opcode, 0x00, 1)          \
  F(flags, 0x01, 1)           \
  F(num_ds, 0x02, 1)          \
  F(inline_len, 0x04, 4)      \
  F(wr_id, 0x08, 8)           \
  F(imm, 0x10, 4)             \
  F(rkey, 0x14, 4)            \
  F(remote_va, 0x18, 8)       \
  F(atomic_swap_add, 0x20, 8) \
  F(atomic_compare, 0x28, 8)  \
  F(ud_dqpn, 0x30, 4)         \
  F(ud_qkey, 0x34, 4)         \
  F(ud_dlid, 0x38, 2)         \
  F(ud_sl, 0x3a, 1)           \
  F(ud_path_bits, 0x3b, 1)    \
  F(ud_grh, 0x3c, 1)          \
  F(ud_hop_limit, 0x3d, 1)    \
  F(ud_sgid_index, 0x3e, 1)   \
  F(ud_tclass, 0x3f, 1)       \
  F(ud_flow_label, 0x40, 4)   \
  F(ud_static_rate, 0x44, 1)  \
  F(ud_dgid, 0x50, 16)        \
  F(bind_mw_key, 0x14, 4)     \
  F(bind_mr_key, 0x30, 4)     \
  F(bind_access, 0x34, 4)     \
  F(bind_length, 0x20, 8)     \
  F(bind_new_rkey, 0x28, 4)
NICSIM_HCA_SWQE(NICSIM_HCA_FIELD)
inline constexpr std::uint32_t kHeaderBytes = 0x60;  // data segments / inline data start here
// Opcodes.
enum class Op : std::uint8_t {
  Send = 0x0a,
  SendImm = 0x0b,
  RdmaWrite = 0x08,
  RdmaWriteImm = 0x09,
  RdmaRead = 0x10,
  AtomicCs = 0x11,
  AtomicFa = 0x12,
  BindMw = 0x18,
  Nop = 0x00,
};
// flags
inline constexpr std::uint8_t kSignaled = 1u << 0;
inline constexpr std::uint8_t kSolicited = 1u << 1;
inline constexpr std::uint8_t kFence = 1u << 2;
inline constexpr std::uint8_t kInline = 1u << 3;
}  // namespace swqe

// Receive WQE: a control segment then data segments. Stride 2^rq_stride_log.
namespace rwqe {
#define NICSIM_HCA_RWQE(F) \
  F(num_ds, 0x00, 1)       \
  F(wr_id, 0x08, 8)
NICSIM_HCA_RWQE(NICSIM_HCA_FIELD)
inline constexpr std::uint32_t kHeaderBytes = 0x10;
}  // namespace rwqe

// Data segment (send and receive WQEs).
namespace ds {
#define NICSIM_HCA_DS(F) \
  F(addr, 0x00, 8)       \
  F(length, 0x08, 4)     \
  F(lkey, 0x0c, 4)
NICSIM_HCA_DS(NICSIM_HCA_FIELD)
inline constexpr std::uint32_t kSize = 0x10;
}  // namespace ds

// ---------------------------------------------------------------------------
// Completion queue entry: 32 bytes; the HCA writes the owner byte last.
// Ownership: entry i of an N-entry CQ written in pass p (p = count / N)
// carries owner = (p & 1) ? 0x00 : 0x80. The driver zeroes the ring, so an
// unwritten entry never looks valid.
// ---------------------------------------------------------------------------
namespace cqe {
#define NICSIM_HCA_CQE(F) \
  F(wr_id, 0x00, 8)       \
  F(qpn, 0x08, 4)         \
  F(byte_len, 0x0c, 4)    \
  F(imm, 0x10, 4)         \
  F(src_qp, 0x14, 4)      \
  F(slid, 0x18, 2)        \
  F(sl, 0x1a, 1)          \
  F(path_bits, 0x1b, 1)   \
  F(opcode, 0x1c, 1)      \
  F(status, 0x1d, 1)      \
  F(flags, 0x1e, 1)       \
  F(owner, 0x1f, 1)
NICSIM_HCA_CQE(NICSIM_HCA_FIELD)
inline constexpr std::uint32_t kSize = 0x20;
inline constexpr std::uint8_t kOwnerHw = 0x80;
// flags
inline constexpr std::uint8_t kGrh = 1u << 0;
inline constexpr std::uint8_t kImm = 1u << 1;
inline constexpr std::uint8_t kIsRecv = 1u << 2;
// opcode: for send-side completions the swqe::Op; for receives:
enum class RecvOp : std::uint8_t { Send = 0x40, RdmaWriteImm = 0x41 };
}  // namespace cqe

// Completion status codes the HCA reports; the driver maps them to
// ib_wc_status_t.
#define NICSIM_HCA_CQE_STATUS(X)                                           \
  X(Success, 0x00, "completed")                                            \
  X(LocalLengthError, 0x01, "receive buffer too small / message too long") \
  X(LocalQpOpError, 0x02, "malformed WQE")                                 \
  X(LocalProtectionError, 0x04, "lkey check failed")                       \
  X(WrFlushError, 0x05, "flushed: the QP is in the error state")           \
  X(MwBindError, 0x06, "memory window bind failed")                        \
  X(BadResponseError, 0x10, "unexpected response opcode")                  \
  X(LocalAccessError, 0x11, "responder: local protection failure")         \
  X(RemoteInvalidRequestError, 0x12, "NAK invalid request")                \
  X(RemoteAccessError, 0x13, "NAK remote access error")                    \
  X(RemoteOperationalError, 0x14, "NAK remote operational error")          \
  X(RetryExceeded, 0x15, "transport retry counter exceeded")               \
  X(RnrRetryExceeded, 0x16, "RNR retry counter exceeded")                  \
  X(RemoteAbortedError, 0x22, "remote aborted")

enum class CqeStatus : std::uint8_t {
#define NICSIM_X(name, value, doc) name = value,
  NICSIM_HCA_CQE_STATUS(NICSIM_X)
#undef NICSIM_X
};
const char* cqe_status_name(std::uint8_t status);

// ---------------------------------------------------------------------------
// Event queue entry: 16 bytes, owner byte last, same ownership rule as CQEs.
// ---------------------------------------------------------------------------
namespace eqe {
#define NICSIM_HCA_EQE(F) \
  F(type, 0x00, 1)        \
  F(subtype, 0x01, 1)     \
  F(object, 0x04, 4)      \
  F(data, 0x08, 4)        \
  F(owner, 0x0f, 1)
NICSIM_HCA_EQE(NICSIM_HCA_FIELD)
inline constexpr std::uint32_t kSize = 0x10;
}  // namespace eqe

#define NICSIM_HCA_EVENTS(X)                                                            \
  X(Completion, 0x00, "object = CQN: a CQE was written to an armed CQ")                 \
  X(PathMigrated, 0x01, "object = QPN")                                                 \
  X(CommEstablished, 0x02, "object = QPN: first packet received in RTR")                \
  X(SqDrained, 0x03, "object = QPN: the SQ reached the drained point in SQD")           \
  X(CqError, 0x04, "object = CQN: overrun")                                             \
  X(WqCatastrophic, 0x05, "object = QPN: the QP went to the error state")               \
  X(WqInvalidRequest, 0x10, "object = QPN: invalid request detected")                   \
  X(WqAccessError, 0x11, "object = QPN: access violation detected")                     \
  X(PortChange, 0x09, "object = port; data = new port state (ib port state numbering)") \
  X(CommandDone, 0x0a, "data = token of the finished command")                          \
  X(LocalCatastrophic, 0x08, "the HCA failed")

enum class Event : std::uint8_t {
#define NICSIM_X(name, value, doc) name = value,
  NICSIM_HCA_EVENTS(NICSIM_X)
#undef NICSIM_X
};
const char* event_name(std::uint8_t type);

// Special QP numbers on every HCA: QP0 (SMI) and QP1 (GSI) per port are
// 0 and 1 on the wire; internally the HCA maps them to the QPNs given by
// CONF_SPECIAL_QP.
inline constexpr std::uint32_t kMaxQpn = (1u << 24) - 1;

}  // namespace nicsim::hca
