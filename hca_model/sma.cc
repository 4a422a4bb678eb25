#include "hca_model/sma.h"

#include <cstring>

#include "hca_model/hca.h"

namespace nicsim::hca {

std::uint64_t be_get(const std::uint8_t* p, unsigned bytes) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

void be_put(std::uint8_t* p, unsigned bytes, std::uint64_t v) {
  for (unsigned i = bytes; i-- > 0;) {
    p[i] = static_cast<std::uint8_t>(v);
    v >>= 8;
  }
}

namespace {

// Common MAD header offsets (IBA 13.4.2).
constexpr unsigned kBaseVersion = 0, kMgmtClass = 1, kClassVersion = 2, kMethod = 3, kStatus = 4, kAttrId = 16,
                   kAttrMod = 20;

// IB port states and physical states (PortInfo).
constexpr std::uint8_t kPortInit = 2, kPortActive = 4;
constexpr std::uint8_t kPhysPolling = 2, kPhysLinkUp = 5;

void node_description(Hca& hca, std::uint8_t* d) {
  std::memset(d, 0, 64);
  const std::string text = hca.name() + " nicsim HCA (InfiniHost model)";
  std::memcpy(d, text.data(), std::min<std::size_t>(text.size(), 63));
}

void node_info(Hca& hca, std::uint32_t port, std::uint8_t* d) {
  const std::uint64_t guid = hca.params().node_guid;
  d[0] = 1;  // BaseVersion
  d[1] = 1;  // ClassVersion
  d[2] = 1;  // NodeType: channel adapter
  d[3] = static_cast<std::uint8_t>(hca.params().ports);
  be_put(d + 4, 8, guid);                   // SystemImageGUID
  be_put(d + 12, 8, guid);                  // NodeGUID
  be_put(d + 20, 8, guid + port);           // PortGUID
  be_put(d + 28, 2, 64);                    // PartitionCap
  be_put(d + 30, 2, 0x5a44);                // DeviceID
  be_put(d + 32, 4, 0xa1);                  // Revision
  d[36] = static_cast<std::uint8_t>(port);  // LocalPortNum
  be_put(d + 37, 3, 0x0002c9);              // VendorID
}

void port_info(Hca& hca, std::uint32_t port, std::uint8_t* d) {
  const fabric::Port& fp = hca.port(port);
  const bool link = fp.connected() && fp.up();
  const auto& ps = hca.port_state(port);
  const std::uint8_t state = hca.ib_port(port).code();
  std::memset(d, 0, 64);
  be_put(d + 8, 8, 0xfe80000000000000ULL);              // GidPrefix: link-local
  be_put(d + 16, 2, hca.port_lid(port));                // LID
  be_put(d + 18, 2, ps.sm_lid);                         // MasterSMLID
  be_put(d + 20, 4, ps.cap_mask);                       // CapabilityMask
  d[28] = static_cast<std::uint8_t>(port);              // LocalPortNum
  d[29] = 2;                                            // LinkWidthEnabled: 4X
  d[30] = 3;                                            // LinkWidthSupported: 1X, 4X
  d[31] = 2;                                            // LinkWidthActive: 4X
  d[32] = static_cast<std::uint8_t>((1 << 4) | state);  // LinkSpeedSupported 2.5 Gb/s | PortState
  d[33] = static_cast<std::uint8_t>(((link ? kPhysLinkUp : kPhysPolling) << 4) | 2);  // PhysState | DownDefault
  d[34] = ps.lmc & 7;                                                                 // M_KeyProtectBits | LMC
  d[35] = (1 << 4) | 1;                                          // LinkSpeedActive | LinkSpeedEnabled: 2.5 Gb/s
  d[36] = static_cast<std::uint8_t>(hca.params().max_mtu << 4);  // NeighborMTU | MasterSMSL
  d[37] = static_cast<std::uint8_t>(1 << 4);                     // VLCap: VL0
  d[41] = static_cast<std::uint8_t>(hca.params().max_mtu);       // InitTypeReply | MTUCap
  d[42] = 0x1f & 19;                                             // VLStallCount | HOQLife
  d[43] = static_cast<std::uint8_t>(1 << 4);                     // OperationalVLs: 1
  be_put(d + 46, 2, ps.pkey_violations);                         // P_KeyViolations
  be_put(d + 48, 2, ps.qkey_violations);                         // Q_KeyViolations
  d[50] = 1;                                                     // GUIDCap
  d[51] = 18;                                                    // SubnetTimeout
  d[52] = 16;                                                    // RespTimeValue
}

std::uint16_t set_port_info(Hca& hca, std::uint32_t port, const std::uint8_t* d) {
  const auto lid = static_cast<std::uint16_t>(be_get(d + 16, 2));
  if (lid == 0 || lid >= 0xc000) return mad::kStatusBadValue;
  auto& ps = hca.port_state(port);
  const std::uint8_t state = d[32] & 0x0f;
  // PortState: 0 no change, 1 Down, 3 Armed, 4 Active; Init is not settable
  // and the state may only advance one step (IBA 14.2.5.6).
  if (state == kPortInit || state > kPortActive) return mad::kStatusBadValue;
  if (!hca.sm_set_port_state(port, state)) return mad::kStatusBadValue;
  hca.set_port_lid(port, lid);
  ps.sm_lid = static_cast<std::uint16_t>(be_get(d + 18, 2));
  ps.lmc = d[34] & 7;
  return 0;
}

}  // namespace

bool process_local_mad(Hca& hca, std::uint32_t port, const std::uint8_t* in, std::uint8_t* out) {
  const std::uint8_t cls = in[kMgmtClass];
  if (cls != mad::kClassSmpLid && cls != mad::kClassSmpDirected) return false;
  std::memcpy(out, in, kMadSize);
  out[kMethod] = mad::kMethodGetResp;
  if (cls == mad::kClassSmpDirected) out[kStatus] |= 0x80;  // D bit: direction is now return
  std::uint16_t status = 0;
  const std::uint8_t method = in[kMethod];
  const auto attr = static_cast<std::uint16_t>(be_get(in + kAttrId, 2));
  const auto modifier = static_cast<std::uint32_t>(be_get(in + kAttrMod, 4));
  std::uint8_t* data = out + kSmpDataOffset;
  if (in[kBaseVersion] != 1 || in[kClassVersion] != 1) {
    status = mad::kStatusBadVersion;
  } else if (method != mad::kMethodGet && method != mad::kMethodSet) {
    status = mad::kStatusBadMethod;
  } else {
    const std::uint32_t target = (attr == mad::kAttrPortInfo && modifier) ? modifier : port;
    if (target < 1 || target > hca.params().ports) {
      status = mad::kStatusBadValue;
    } else if (method == mad::kMethodSet) {
      if (attr == mad::kAttrPortInfo) {
        status = set_port_info(hca, target, in + kSmpDataOffset);
        if (!status) port_info(hca, target, data);
      } else {
        status = mad::kStatusBadMethodAttr;
      }
    } else {
      switch (attr) {
        case mad::kAttrNodeDescription:
          node_description(hca, data);
          break;
        case mad::kAttrNodeInfo:
          node_info(hca, port, data);
          break;
        case mad::kAttrPortInfo:
          port_info(hca, target, data);
          break;
        case mad::kAttrGuidInfo:
          // Modifier: block of 8 GUIDs. Only GUID index 0 (block 0) is set.
          std::memset(data, 0, 64);
          if ((modifier & 0xff) == 0) be_put(data, 8, hca.params().node_guid + port);
          break;
        case mad::kAttrPkeyTable:
          // Modifier bits 15..0: block of 32 P_Keys. Index 0 holds the
          // default full-member partition; the table has 64 entries.
          std::memset(data, 0, 64);
          if ((modifier & 0xffff) == 0) be_put(data, 2, 0xffff);
          if ((modifier & 0xffff) > 1) status = mad::kStatusBadValue;
          break;
        default:
          status = mad::kStatusBadMethodAttr;
          break;
      }
    }
  }
  be_put(out + kStatus, 2, (be_get(out + kStatus, 2) & 0x8000) | status);
  return true;
}

}  // namespace nicsim::hca
