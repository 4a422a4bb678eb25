#include "ib_fabric/switch_sma.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/sim.h"
#include "fabric/fabric.h"
#include "ib_fabric/switch.h"
#include "ib_wire/ib_wire.h"
#include "trace/stats.h"
#include "trace/trace.h"

namespace nicsim::fabric {

using namespace smp;

struct SwitchSma::Job {
  SwitchSma* sma;
  bool trap;           // a trap to send, not an SMP to handle
  std::uint32_t port;  // SMP: arrival port; trap: the port that changed
  std::uint64_t pkt_id;
  SmpPacket smp;
  InFlight in_flight{};
};

namespace {
constexpr std::uint16_t kLftCap = 0xc000;  // LinearFDBCap: every unicast LID
constexpr std::uint16_t kMftCap = 1024;    // MulticastFDBCap
constexpr unsigned kLftBlock = 64, kMftBlock = 32;

bool is_request(std::uint8_t method) { return method == kMethodGet || method == kMethodSet; }
}  // namespace

SwitchSma::SwitchSma(Switch& sw, Tick latency)
    : sw_(sw), latency_(latency), guid_(0x0002c90200000000ULL | (static_cast<std::uint64_t>(sw.device_id() + 1) << 8)) {
  auto& st = Sim::get().stats();
  const std::string obj = sw.name() + ".sma";
  st.counter(obj, "smps", "packets", &stats_.smps, "SMPs handled by the management port");
  st.counter(obj, "dr_forwarded", "packets", &stats_.dr_forwarded, "directed-route SMPs sent on to the next hop");
  st.counter(obj, "smp_dropped", "packets", &stats_.smp_dropped, "malformed, or against the directed-route rules");
  st.counter(obj, "traps_sent", "packets", &stats_.traps_sent);
}

SwitchSma::~SwitchSma() = default;

void SwitchSma::set_managed(bool managed) {
  managed_ = managed;
  states_.clear();
  if (!managed) return;
  for (std::uint32_t p = 0; p <= sw_.num_ports(); ++p) {
    states_.push_back(std::make_unique<IbPortState>(fmt::format("{}.port{}", sw_.name(), p), sw_.device_id()));
    const bool up = p == 0 || (sw_.port(p).connected() && sw_.port(p).up());
    states_.back()->link(up, "link_up");
  }
}

std::uint8_t SwitchSma::port_state(std::uint32_t port) const {
  if (managed_) return states_[port]->code();
  return port == 0 || sw_.port(port).up() ? kPortStateActive : kPortStateDown;
}

void SwitchSma::link_changed(std::uint32_t port, bool up) {
  if (!managed_) return;
  states_[port]->link(up, up ? "link_up" : "link_down");
  port_state_change_ = true;
  trap_link_change(port);
}

void SwitchSma::drop(const char* why, std::uint64_t pkt) {
  ++stats_.smp_dropped;
  if (Sim::get().tracer().on(sw_.device_id(), Component::fabric))
    Sim::get().tracer().record(now(), sw_.device_id(), Component::fabric, "smp_drop", {{"pkt", pkt}, {"why", why}});
}

void SwitchSma::receive(Port& in, Packet* p) {
  SmpPacket s;
  const char* why = "";
  const bool ok = p->meta.kind == kPacketIb && parse_smp(*p, s, &why);
  if (ok && s.mad[kMgmtClass] == kClassLid && s.dlid != lid_ && s.dlid != kPermissiveLid) {
    // LID-routed SMP for someone else: forwarded by the LFT like data, on VL15.
    const std::uint32_t out = sw_.route(s.dlid);
    if (out != 0 && out != in.number()) {
      p->ready_at = now() + sw_.hop_latency();
      sw_.port(out).send(p);
      return;
    }
    why = "no route for a LID-routed SMP";
  }
  const std::uint64_t id = p->meta.id;
  const Tick start = std::max(now(), busy_until_);
  in.release(*p, ok ? start : now());
  sw_.fabric().pool().put(p);
  if (!ok || (s.mad[kMgmtClass] != kClassLid && s.mad[kMgmtClass] != kClassDirected) ||
      (s.mad[kMgmtClass] == kClassLid && *why)) {
    drop(*why ? why : "not a subnet management class", id);
    return;
  }
  busy_until_ = start + latency_;
  Sim::get().calendar().at(busy_until_, &SwitchSma::run_thunk, jobs_.add(new Job{this, false, in.number(), id, s}));
}

void SwitchSma::run_thunk(void* job, std::uint64_t) {
  std::unique_ptr<Job> j(static_cast<Job*>(job));
  j->sma->run(*j);
}

void SwitchSma::run(Job& j) {
  ++stats_.smps;
  SmpPacket& s = j.smp;
  if (j.trap) {
    const std::uint32_t out = sw_.route(sm_lid_);
    if (out == 0) return drop("no route to the SM for a trap", j.pkt_id);
    ++stats_.traps_sent;
    send_on(out, s);
    return;
  }
  if (s.mad[kMgmtClass] == kClassLid) {
    if (!is_request(s.mad[kMethod])) return drop("LID-routed SMP to a switch is not a request", j.pkt_id);
    answer(j.port, s);
    return;
  }
  const bool returning = get(s.mad + kStatus, 2) & kDirectionBit;
  const DrStep step = dr_arrive(s.mad, j.port, true, sw_.num_ports());
  if (step.action == DrAction::Discard) return drop(step.why, j.pkt_id);
  if (step.action == DrAction::Forward) {
    ++stats_.dr_forwarded;
    send_on(step.out_port, s);
    return;
  }
  if (returning || !is_request(s.mad[kMethod]))
    return drop("directed-route SMP ends at a switch but is no request", j.pkt_id);
  answer(j.port, s);
}

void SwitchSma::send_on(std::uint32_t port, const SmpPacket& s) {
  Port& out = sw_.port(port);
  if (!out.connected() || !out.up()) return drop("output link down", 0);
  out.send(make_smp_packet(sw_.fabric().pool(), sw_.device_id(), s));
}

void SwitchSma::answer(std::uint32_t in_port, SmpPacket& req) {
  SmpPacket resp;
  std::memcpy(resp.mad, req.mad, kMadBytes);
  resp.mad[kMethod] = kMethodGetResp;
  const auto attr = static_cast<std::uint16_t>(get(req.mad + kAttrId, 2));
  const auto mod = static_cast<std::uint32_t>(get(req.mad + kAttrMod, 4));
  std::uint16_t status = 0;
  std::uint8_t* data = resp.mad + kData;
  if (req.mad[kBaseVersion] != 1 || req.mad[kClassVersion] != 1) {
    status = kStatusBadVersion;
  } else {
    if (req.mad[kMethod] == kMethodSet) status = set_attr(attr, mod, req.mad + kData);
    if (!status) status = get_attr(attr, mod, in_port, data);
  }
  put(resp.mad + kStatus, 2, (get(resp.mad + kStatus, 2) & kDirectionBit) | status);
  std::uint32_t out;
  if (req.mad[kMgmtClass] == kClassDirected) {
    out = dr_turn_around(resp.mad);
    resp.dlid = resp.slid = kPermissiveLid;
  } else {
    resp.dlid = req.slid;
    resp.slid = lid_;
    out = sw_.route(req.slid);
    if (out == 0) return drop("no route back for a LID-routed response", 0);
  }
  send_on(out, resp);
}

std::uint16_t SwitchSma::get_attr(std::uint16_t attr, std::uint32_t mod, std::uint32_t in_port, std::uint8_t* d) {
  const std::uint32_t n = sw_.num_ports();
  std::memset(d, 0, 64);
  switch (attr) {
    case kAttrNodeDescription: {
      const std::string text = sw_.name() + " nicsim switch (InfiniScale model)";
      std::memcpy(d, text.data(), std::min<std::size_t>(text.size(), 63));
      return 0;
    }
    case kAttrNodeInfo:
      d[0] = 1;  // BaseVersion
      d[1] = 1;  // ClassVersion
      d[2] = kNodeTypeSwitch;
      d[3] = static_cast<std::uint8_t>(n);
      put(d + 4, 8, guid_);                        // SystemImageGUID
      put(d + 12, 8, guid_);                       // NodeGUID
      put(d + 20, 8, guid_);                       // PortGUID: a switch's ports share port 0's GUID
      put(d + 28, 2, 64);                          // PartitionCap
      put(d + 30, 2, 0xa87c);                      // DeviceID: InfiniScale
      put(d + 32, 4, 0xa0);                        // Revision
      d[36] = static_cast<std::uint8_t>(in_port);  // LocalPortNum
      put(d + 37, 3, 0x0002c9);
      return 0;
    case kAttrSwitchInfo:
      put(d + 0, 2, kLftCap);                                                       // LinearFDBCap
      put(d + 2, 2, 0);                                                             // RandomFDBCap
      put(d + 4, 2, kMftCap);                                                       // MulticastFDBCap
      put(d + 6, 2, lft_top_);                                                      // LinearFDBTop
      d[8] = 0;                                                                     // DefaultPort
      d[11] = static_cast<std::uint8_t>((18 << 3) | (port_state_change_ ? 4 : 0));  // LifeTimeValue | PortStateChange
      return 0;
    case kAttrPortInfo: {
      if (mod > n) return kStatusBadValue;
      const bool up = mod == 0 || (sw_.port(mod).connected() && sw_.port(mod).up());
      put(d + 8, 8, 0xfe80000000000000ULL);  // GidPrefix
      put(d + 16, 2, lid_);
      put(d + 18, 2, sm_lid_);
      d[28] = static_cast<std::uint8_t>(in_port);                     // LocalPortNum
      d[29] = 2;                                                      // LinkWidthEnabled: 4X
      d[30] = 3;                                                      // LinkWidthSupported: 1X, 4X
      d[31] = 2;                                                      // LinkWidthActive: 4X
      d[32] = static_cast<std::uint8_t>((1 << 4) | port_state(mod));  // LinkSpeedSupported | PortState
      d[33] = static_cast<std::uint8_t>(((up ? 5 : 2) << 4) | 2);     // PhysState LinkUp/Polling | DownDefault
      d[34] = lmc_ & 7;
      d[35] = (1 << 4) | 1;  // LinkSpeedActive | Enabled: 2.5 Gb/s
      d[36] = 4 << 4;        // NeighborMTU 2048
      d[37] = 1 << 4;        // VLCap: VL0
      d[41] = 4;             // InitTypeReply | MTUCap 2048
      d[42] = 19;            // VLStallCount | HOQLife
      d[43] = 1 << 4;        // OperationalVLs: 1
      d[51] = 18;            // SubnetTimeout
      return 0;
    }
    case kAttrLft: {
      if (mod >= kLftCap / kLftBlock) return kStatusBadValue;
      for (unsigned i = 0; i < kLftBlock; ++i) {
        const auto lid = static_cast<std::uint16_t>(mod * kLftBlock + i);
        const std::uint32_t r = sw_.route(lid);
        d[i] = lid != 0 && lid == lid_ ? 0 : r ? static_cast<std::uint8_t>(r) : 0xff;
      }
      return 0;
    }
    case kAttrMft: {
      const std::uint32_t block = mod & 0x1ff, pos = mod >> 28;
      if (block >= kMftCap / kMftBlock) return kStatusBadValue;
      for (unsigned i = 0; i < kMftBlock; ++i) {
        std::uint16_t mask = 0;
        for (std::uint32_t p :
             sw_.multicast_ports(static_cast<std::uint16_t>(kMulticastLidBase + block * kMftBlock + i)))
          if (p / 16 == pos) mask |= static_cast<std::uint16_t>(1u << (p % 16));
        put(d + 2 * i, 2, mask);
      }
      return 0;
    }
    default:
      return kStatusBadMethodAttr;
  }
}

std::uint16_t SwitchSma::set_attr(std::uint16_t attr, std::uint32_t mod, const std::uint8_t* d) {
  const std::uint32_t n = sw_.num_ports();
  switch (attr) {
    case kAttrSwitchInfo:
      lft_top_ = static_cast<std::uint16_t>(get(d + 6, 2));
      if (d[11] & 4) port_state_change_ = false;  // writing 1 clears it
      return 0;
    case kAttrPortInfo: {
      if (mod > n) return kStatusBadValue;
      const std::uint8_t state = d[32] & 0x0f;
      if (state == kPortStateInit || state > kPortStateActive) return kStatusBadValue;
      if (managed_ && !states_[mod]->sm_set(state)) return kStatusBadValue;
      if (mod == 0) {
        const auto lid = static_cast<std::uint16_t>(get(d + 16, 2));
        if (lid == 0 || lid >= kMulticastLidBase) return kStatusBadValue;
        lid_ = lid;
        sm_lid_ = static_cast<std::uint16_t>(get(d + 18, 2));
        lmc_ = d[34] & 7;
      }
      return 0;
    }
    case kAttrLft: {
      if (mod >= kLftCap / kLftBlock) return kStatusBadValue;
      for (unsigned i = 0; i < kLftBlock; ++i)
        if (d[i] != 0xff && d[i] > n) return kStatusBadValue;
      for (unsigned i = 0; i < kLftBlock; ++i) {
        const auto lid = static_cast<std::uint16_t>(mod * kLftBlock + i);
        sw_.set_route(lid, d[i] == 0xff ? 0 : d[i]);
      }
      return 0;
    }
    case kAttrMft: {
      const std::uint32_t block = mod & 0x1ff, pos = mod >> 28;
      if (block >= kMftCap / kMftBlock || pos * 16 > n) return kStatusBadValue;
      for (unsigned i = 0; i < kMftBlock; ++i) {
        const auto mlid = static_cast<std::uint16_t>(kMulticastLidBase + block * kMftBlock + i);
        const auto mask = static_cast<std::uint16_t>(get(d + 2 * i, 2));
        std::vector<std::uint32_t> ports;
        for (std::uint32_t p : sw_.multicast_ports(mlid))
          if (p / 16 != pos) ports.push_back(p);
        for (unsigned b = 0; b < 16; ++b) {
          const std::uint32_t p = pos * 16 + b;
          if ((mask >> b & 1) && p >= 1 && p <= n) ports.push_back(p);
        }
        std::sort(ports.begin(), ports.end());
        if (!ports.empty() || !sw_.multicast_ports(mlid).empty()) sw_.set_multicast(mlid, std::move(ports));
      }
      return 0;
    }
    default:
      return kStatusBadMethodAttr;
  }
}

void SwitchSma::trap_link_change(std::uint32_t port) {
  if (lid_ == 0 || sm_lid_ == 0) return;  // no SM has configured this switch yet
  SmpPacket t;
  std::uint8_t* m = t.mad;
  m[kBaseVersion] = 1;
  m[kMgmtClass] = kClassLid;
  m[kClassVersion] = 1;
  m[kMethod] = kMethodTrap;
  put(m + kTid, 8, (static_cast<std::uint64_t>(sw_.device_id()) << 32) | ++trap_tid_);
  put(m + kAttrId, 2, kAttrNotice);
  std::uint8_t* d = m + kData;
  d[0] = 0x80 | 1;                 // IsGeneric | Type: urgent
  put(d + 1, 3, kNodeTypeSwitch);  // ProducerType
  put(d + 4, 2, kTrapLinkStateChange);
  put(d + 6, 2, lid_);                      // IssuerLID
  put(d + 10, 2, lid_);                     // DataDetails: LIDADDR
  d[12] = static_cast<std::uint8_t>(port);  // (nicsim: the port that changed, in the reserved bytes)
  t.dlid = sm_lid_;
  t.slid = lid_;
  const Tick start = std::max(now(), busy_until_);
  busy_until_ = start + latency_;
  Sim::get().calendar().at(busy_until_, &SwitchSma::run_thunk, jobs_.add(new Job{this, true, port, 0, t}));
}

}  // namespace nicsim::fabric
