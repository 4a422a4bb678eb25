// InfiniBand subnet management pieces shared by every IB device: the logical
// port state machine (PortInfo:PortState), the subnet management packet
// (SMP) layout, the directed-route rules of IBA 14.2.2 that HCAs and
// switches apply to SMPs, and building/parsing the SMP's wire packet (LRH,
// BTH, DETH, 256-byte MAD, ICRC, VCRC, on VL15 to QP0).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "fabric/packet.h"
#include "fabric/port.h"
#include "fsm/fsm.h"

namespace nicsim::fabric {

// ---- port state (IBA 7.2, PortInfo:PortState) -------------------------------

// Enum order + 1 is the PortState code on the wire (1 Down .. 4 Active).
#define NICSIM_IB_PORT_STATES(X) X(Down) X(Init) X(Armed) X(Active)
NICSIM_FSM_ENUM(IbPortStateName, NICSIM_IB_PORT_STATES)
// LinkUp/LinkDown: the physical link became usable or went away. Sm*: the
// subnet manager's Set PortInfo:PortState. StaticActivate: no subnet
// manager, the world configured the subnet (Init -> Armed -> Active).
#define NICSIM_IB_PORT_EVENTS(X) X(LinkUp) X(LinkDown) X(SmDown) X(SmArm) X(SmActivate) X(StaticActivate)
NICSIM_FSM_ENUM(IbPortEvent, NICSIM_IB_PORT_EVENTS)

// FSM "ib.port".
struct IbPortMachine {
  using State = IbPortStateName;
  using Event = IbPortEvent;
  static const FsmType& type();
};

inline constexpr std::uint8_t kPortStateNoChange = 0, kPortStateDown = 1, kPortStateInit = 2, kPortStateArmed = 3,
                              kPortStateActive = 4;

// One port's logical state. Down until the link is up (and, on an HCA, the
// driver enabled the port); then Init, where only VL15 SMPs pass; the subnet
// manager moves it to Armed and Active, where data flows. A link going down
// takes it back to Down from anywhere.
class IbPortState {
 public:
  IbPortState(std::string object, std::uint32_t device);
  std::uint8_t code() const { return static_cast<std::uint8_t>(static_cast<int>(fsm_.state()) + 1); }
  bool active() const { return code() == kPortStateActive; }
  bool down() const { return code() == kPortStateDown; }
  // The physical link came up (enabled port) or went away.
  void link(bool usable, const char* cause);
  // Without a subnet manager: straight to Active through Init and Armed.
  void activate_static();
  // SM Set PortInfo:PortState. False (nothing changed) if the transition is
  // not one IBA allows from here (the SMA then answers "invalid value").
  bool sm_set(std::uint8_t code);

 private:
  Fsm<IbPortMachine> fsm_;
};

// ---- SMP layout (IBA 14.2.1) --------------------------------------------------

namespace smp {
inline constexpr std::size_t kMadBytes = 256;
inline constexpr std::uint8_t kClassLid = 0x01, kClassDirected = 0x81;
inline constexpr std::uint8_t kMethodGet = 0x01, kMethodSet = 0x02, kMethodGetResp = 0x81, kMethodTrap = 0x05,
                              kMethodTrapRepress = 0x07;
// Common header and directed-route fields (byte offsets).
inline constexpr unsigned kBaseVersion = 0, kMgmtClass = 1, kClassVersion = 2, kMethod = 3, kStatus = 4,
                          kHopPointer = 6, kHopCount = 7, kTid = 8, kAttrId = 16, kAttrMod = 20, kMKey = 24,
                          kDrSlid = 32, kDrDlid = 34, kData = 64, kInitialPath = 128, kReturnPath = 192;
inline constexpr std::uint16_t kDirectionBit = 0x8000;  // in Status: the SMP is a response going back
// Attributes.
inline constexpr std::uint16_t kAttrNotice = 0x0002, kAttrNodeDescription = 0x0010, kAttrNodeInfo = 0x0011,
                               kAttrSwitchInfo = 0x0012, kAttrGuidInfo = 0x0014, kAttrPortInfo = 0x0015,
                               kAttrPkeyTable = 0x0016, kAttrLft = 0x0019, kAttrMft = 0x001b;
// MAD status codes (invalid-field code in bits 4..2, IBA 13.4.7).
inline constexpr std::uint16_t kStatusBadVersion = 1 << 2, kStatusBadMethod = 2 << 2, kStatusBadMethodAttr = 3 << 2,
                               kStatusBadValue = 7 << 2;
inline constexpr std::uint8_t kNodeTypeCa = 1, kNodeTypeSwitch = 2;
inline constexpr std::uint16_t kTrapLinkStateChange = 128;
inline constexpr std::uint32_t kMaxHops = 63;

std::uint64_t get(const std::uint8_t* p, unsigned bytes);  // big-endian
void put(std::uint8_t* p, unsigned bytes, std::uint64_t v);
}  // namespace smp

// ---- directed routing (IBA 14.2.2) ----------------------------------------------

enum class DrAction : std::uint8_t { Local, Forward, Discard };
struct DrStep {
  DrAction action = DrAction::Discard;
  std::uint32_t out_port = 0;  // Forward: the port to send on
  const char* why = "";        // Discard: the rule that failed
};

// A node got the directed-route SMP `mad` on `in_port`: updates the hop
// pointer and return path in place and says what to do. Switches forward on
// the intermediate hops; an HCA only ends a path (outbound) or starts it
// (the SM's node, on the way back). Only fully directed SMPs (DrSLID and
// DrDLID both permissive) are routed; LID-routed path segments are not.
DrStep dr_arrive(std::uint8_t* mad, std::uint32_t in_port, bool is_switch, std::uint32_t num_ports);
// Turns a request that reached its destination into the response: D bit set,
// hop pointer moved back; returns the port to send it on.
std::uint32_t dr_turn_around(std::uint8_t* mad);

// ---- SMP packets -----------------------------------------------------------------

struct SmpPacket {
  std::uint16_t dlid = 0, slid = 0;
  std::uint8_t mad[smp::kMadBytes] = {};
};

// Parses an IB packet carrying an SMP (VL15, QP0, UD SEND only, 256-byte
// MAD). False (with `why`) when the bytes are not one.
bool parse_smp(const Packet& p, SmpPacket& out, const char** why);
// A new fabric packet for `s` from `src_device`, sealed (ICRC, VCRC).
Packet* make_smp_packet(PacketPool& pool, std::uint32_t src_device, const SmpPacket& s);

}  // namespace nicsim::fabric
