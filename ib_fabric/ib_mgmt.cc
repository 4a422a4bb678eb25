#include "ib_fabric/ib_mgmt.h"

#include <cstring>
#include <vector>

#include "core/sim.h"
#include "ib_wire/ib_wire.h"

namespace nicsim::fabric {

// ---- port state ------------------------------------------------------------------

const FsmType& IbPortMachine::type() {
  using S = IbPortStateName;
  using E = IbPortEvent;
  // IBA 1.1 Figure 150 (logical port states), less the LinkInit details.
  static const FsmType type =
      make_fsm_type<IbPortMachine>("ib.port", {{S::Down, E::LinkUp, S::Init, "link_up"},
                                               {S::Init, E::SmArm, S::Armed, "arm"},
                                               {S::Armed, E::SmActivate, S::Active, "activate"},
                                               {S::Init, E::StaticActivate, S::Armed, "arm"},
                                               {S::Armed, E::StaticActivate, S::Active, "activate"},
                                               {S::Init, E::LinkDown, S::Down, "down"},
                                               {S::Armed, E::LinkDown, S::Down, "down"},
                                               {S::Active, E::LinkDown, S::Down, "down"},
                                               {S::Init, E::SmDown, S::Down, "down"},
                                               {S::Armed, E::SmDown, S::Down, "down"},
                                               {S::Active, E::SmDown, S::Down, "down"}});
  return type;
}

IbPortState::IbPortState(std::string object, std::uint32_t device)
    : fsm_(std::move(object), device, IbPortStateName::Down) {
  Sim::get().fsm().declare<IbPortMachine>();
}

void IbPortState::link(bool usable, const char* cause) {
  if (usable && down()) fsm_.fire(IbPortEvent::LinkUp, cause);
  if (!usable && !down()) fsm_.fire(IbPortEvent::LinkDown, cause);
}

void IbPortState::activate_static() {
  if (code() == kPortStateInit) fsm_.fire(IbPortEvent::StaticActivate, "static");
  if (code() == kPortStateArmed) fsm_.fire(IbPortEvent::StaticActivate, "static");
}

bool IbPortState::sm_set(std::uint8_t code_wanted) {
  const std::uint8_t now = code();
  switch (code_wanted) {
    case kPortStateNoChange:
      return true;
    case kPortStateDown:
      // The SM takes the port down: the link retrains and comes back to Init.
      if (now == kPortStateDown) return true;
      fsm_.fire(IbPortEvent::SmDown, "sm_down");
      fsm_.fire(IbPortEvent::LinkUp, "link_up");
      return true;
    case kPortStateArmed:
      if (now == kPortStateArmed) return true;
      if (now != kPortStateInit) return false;
      fsm_.fire(IbPortEvent::SmArm, "sm_armed");
      return true;
    case kPortStateActive:
      if (now == kPortStateActive) return true;
      if (now != kPortStateArmed) return false;
      fsm_.fire(IbPortEvent::SmActivate, "sm_active");
      return true;
    default:
      return false;
  }
}

// ---- SMP fields --------------------------------------------------------------------

namespace smp {
std::uint64_t get(const std::uint8_t* p, unsigned bytes) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}
void put(std::uint8_t* p, unsigned bytes, std::uint64_t v) {
  for (unsigned i = bytes; i-- > 0;) {
    p[i] = static_cast<std::uint8_t>(v);
    v >>= 8;
  }
}
}  // namespace smp

// ---- directed routing ----------------------------------------------------------------

DrStep dr_arrive(std::uint8_t* mad, std::uint32_t in_port, bool is_switch, std::uint32_t num_ports) {
  using namespace smp;
  DrStep step;
  const std::uint8_t hp = mad[kHopPointer];
  const std::uint8_t hc = mad[kHopCount];
  if (get(mad + kDrSlid, 2) != kPermissiveLid || get(mad + kDrDlid, 2) != kPermissiveLid) {
    step.why = "LID-routed part in a directed-route SMP (not supported)";
    return step;
  }
  if (hc > kMaxHops) {
    step.why = "hop count above 63";
    return step;
  }
  const bool returning = get(mad + kStatus, 2) & kDirectionBit;
  if (!returning) {
    // Outbound: the sender moved the hop pointer to the hop being taken.
    if (hp == 0 || hp > hc) {
      step.why = "outbound hop pointer outside 1..hop count";
      return step;
    }
    mad[kReturnPath + hp] = static_cast<std::uint8_t>(in_port);
    if (hp == hc) {
      // End of the path: this node's SMA answers.
      mad[kHopPointer] = static_cast<std::uint8_t>(hp + 1);
      step.action = DrAction::Local;
      return step;
    }
    if (!is_switch) {
      step.why = "a channel adapter does not forward directed-route SMPs";
      return step;
    }
    const std::uint32_t out = mad[kInitialPath + hp + 1];
    if (out < 1 || out > num_ports) {
      step.why = "initial path names a port this switch does not have";
      return step;
    }
    mad[kHopPointer] = static_cast<std::uint8_t>(hp + 1);
    step.action = DrAction::Forward;
    step.out_port = out;
    return step;
  }
  // Returning: the responder (or the previous hop) moved the pointer back.
  if (hp == 1) {
    // Back at the start of the path: the SM's node.
    mad[kHopPointer] = 0;
    step.action = DrAction::Local;
    return step;
  }
  if (hp < 2 || hp > hc || !is_switch) {
    step.why = "returning hop pointer outside 1..hop count, or not a switch";
    return step;
  }
  const std::uint32_t out = mad[kReturnPath + hp - 1];
  if (out < 1 || out > num_ports) {
    step.why = "return path names a port this switch does not have";
    return step;
  }
  mad[kHopPointer] = static_cast<std::uint8_t>(hp - 1);
  step.action = DrAction::Forward;
  step.out_port = out;
  return step;
}

std::uint32_t dr_turn_around(std::uint8_t* mad) {
  using namespace smp;
  put(mad + kStatus, 2, get(mad + kStatus, 2) | kDirectionBit);
  const std::uint8_t hp = mad[kHopPointer];  // hop count + 1 at the destination
  mad[kHopPointer] = static_cast<std::uint8_t>(hp - 1);
  return mad[kReturnPath + hp - 1];
}

// ---- SMP packets ------------------------------------------------------------------------

namespace {
constexpr std::uint8_t kUdSendOnly = 0x64;
}

bool parse_smp(const Packet& p, SmpPacket& out, const char** why) {
  const ib::ParsedPacket pp = ib::parse_packet(std::span<const std::uint8_t>(p.bytes.data(), p.bytes.size()), true);
  if (!pp.ok()) {
    *why = ib::verdict_name(pp.verdict);
    return false;
  }
  if (pp.hdr.bth.opcode != kUdSendOnly || pp.hdr.bth.dest_qp != 0 || pp.hdr.lrh.vl != kVl15) {
    *why = "not a UD send to QP0 on VL15";
    return false;
  }
  if (pp.payload.size() != smp::kMadBytes) {
    *why = "MAD is not 256 bytes";
    return false;
  }
  out.dlid = static_cast<std::uint16_t>(pp.hdr.lrh.dlid);
  out.slid = static_cast<std::uint16_t>(pp.hdr.lrh.slid);
  std::memcpy(out.mad, pp.payload.data(), smp::kMadBytes);
  return true;
}

Packet* make_smp_packet(PacketPool& pool, std::uint32_t src_device, const SmpPacket& s) {
  ib::PacketHeaders h;
  h.lrh.vl = kVl15;
  h.lrh.sl = 0;
  h.lrh.dlid = s.dlid;
  h.lrh.slid = s.slid;
  h.bth.opcode = kUdSendOnly;
  h.bth.m = 1;
  h.bth.p_key = 0xffff;
  h.bth.dest_qp = 0;
  h.ext.deth.q_key = 0;
  h.ext.deth.src_qp = 0;
  const std::size_t len = ib::packet_size(h, smp::kMadBytes);
  Packet* p = pool.get(len);
  std::size_t written = 0;
  ib::build_packet(h, std::span<const std::uint8_t>(s.mad, smp::kMadBytes),
                   std::span<std::uint8_t>(p->bytes.data(), len), &written, true);
  p->meta.src_node = src_device;
  p->meta.slid = s.slid;
  p->meta.dlid = s.dlid;
  p->meta.vl = kVl15;
  p->meta.kind = kPacketIb;
  p->meta.created = now();
  p->ready_at = now();
  return p;
}

}  // namespace nicsim::fabric
