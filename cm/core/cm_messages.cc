// The CM's messages as bytes (IBA 12.6): one builder per message from a
// connection's fields, and the REQ's parser. Layouts are in mad.h.
#include <rdma/ib_verbs.h>

#include <algorithm>
#include <cstring>

#include "cm/core/cm_messages.h"

namespace nicsim::cm {

using namespace mad;
using namespace mad::cm;

namespace {
void cm_header(std::uint8_t* m, std::uint16_t attr, std::uint64_t tid, const Conn& c) {
  header(m, kClassCm, kCmClassVersion, kMethodSend, attr, tid);
  put(m + kLocalCommId, 4, c.local_id);
  if (attr != kReq) put(m + kRemoteCommId, 4, c.remote_id);
}

void copy_private(std::uint8_t* dst, std::uint32_t room, const std::uint8_t* priv, std::size_t len) {
  if (priv && len) std::memcpy(dst, priv, std::min<std::size_t>(len, room));
}
}  // namespace

void build_req(std::uint8_t* m, std::uint64_t tid, const Conn& c, std::uint64_t ca_guid) {
  cm_header(m, kReq, tid, c);
  put(m + req::kServiceId, 8, c.service_id);
  put(m + req::kLocalCaGuid, 8, ca_guid);
  put(m + req::kW1, 4, (c.local_qpn << 8) | c.resp_res);
  put(m + req::kW2, 4, c.init_depth);
  // Remote EECN 0, Remote CM Response Timeout, transport RC (0), no E2E flow control.
  put(m + req::kW3, 4, static_cast<std::uint32_t>(c.remote_resp_to & 0x1f) << 3);
  put(m + req::kW4, 4, (c.local_psn << 8) | ((c.local_resp_to & 0x1fu) << 3) | (c.retry_cnt & 7u));
  put(m + req::kPkey, 2, c.path.pkey);
  m[req::kB1] = static_cast<std::uint8_t>((c.path.mtu << 4) | (c.rnr_retry & 7));
  m[req::kB2] = static_cast<std::uint8_t>(c.max_retries << 4);
  put(m + req::kPrimaryLocalLid, 2, c.path.slid);
  put(m + req::kPrimaryRemoteLid, 2, c.path.dlid);
  std::memcpy(m + req::kPrimaryLocalGid, c.path.sgid.data(), 16);
  std::memcpy(m + req::kPrimaryRemoteGid, c.path.dgid.data(), 16);
  put(m + req::kFlowRate, 4, c.path.rate & 0x3fu);
  m[req::kHopLimit] = 0;
  m[req::kSlSubnet] = static_cast<std::uint8_t>((c.path.sl << 4) | 0x08);  // subnet local
  m[req::kAckTimeout] = static_cast<std::uint8_t>(c.ack_timeout << 3);
  copy_private(m + req::kPrivate, req::kPrivateBytes, c.req_private.data(), c.req_private.size());
}

void parse_req(const std::uint8_t* m, Conn& c) {
  c.remote_id = static_cast<std::uint32_t>(get(m + kLocalCommId, 4));
  c.service_id = get(m + req::kServiceId, 8);
  c.remote_guid = get(m + req::kLocalCaGuid, 8);
  c.remote_qpn = get_bits(m + req::kW1, 4, 0, 24);
  // The active side's responder resources are what we may initiate, and
  // its initiator depth what we must answer.
  c.init_depth = static_cast<std::uint8_t>(get_bits(m + req::kW1, 4, 24, 8));
  c.resp_res = static_cast<std::uint8_t>(get_bits(m + req::kW2, 4, 24, 8));
  c.remote_resp_to = static_cast<std::uint8_t>(get_bits(m + req::kW3, 4, 24, 5));
  c.remote_psn = get_bits(m + req::kW4, 4, 0, 24);
  c.local_resp_to = static_cast<std::uint8_t>(get_bits(m + req::kW4, 4, 24, 5));
  c.retry_cnt = static_cast<std::uint8_t>(get_bits(m + req::kW4, 4, 29, 3));
  c.path.pkey = static_cast<std::uint16_t>(get(m + req::kPkey, 2));
  c.path.mtu = static_cast<std::uint8_t>(m[req::kB1] >> 4);
  c.rnr_retry = m[req::kB1] & 7;
  c.max_retries = static_cast<std::uint8_t>(m[req::kB2] >> 4);
  // Our view of the path: the REQ's remote port is ours.
  c.path.dlid = static_cast<std::uint16_t>(get(m + req::kPrimaryLocalLid, 2));
  c.path.slid = static_cast<std::uint16_t>(get(m + req::kPrimaryRemoteLid, 2));
  std::memcpy(c.path.dgid.data(), m + req::kPrimaryLocalGid, 16);
  std::memcpy(c.path.sgid.data(), m + req::kPrimaryRemoteGid, 16);
  c.path.rate = static_cast<std::uint8_t>(get_bits(m + req::kFlowRate, 4, 26, 6));
  c.path.sl = static_cast<std::uint8_t>(m[req::kSlSubnet] >> 4);
  c.ack_timeout = static_cast<std::uint8_t>(m[req::kAckTimeout] >> 3);
  c.req_private.assign(m + req::kPrivate, m + req::kPrivate + req::kPrivateBytes);
}

void build_rep(std::uint8_t* m, std::uint64_t tid, const Conn& c, std::uint64_t ca_guid) {
  cm_header(m, kRep, tid, c);
  put(m + rep::kLocalQpn, 4, c.local_qpn << 8);
  put(m + rep::kStartingPsn, 4, c.local_psn << 8);
  m[rep::kRespResources] = c.resp_res;
  m[rep::kInitDepth] = c.init_depth;
  m[rep::kB1] = static_cast<std::uint8_t>(c.ack_timeout << 3);  // target ACK delay
  m[rep::kB2] = static_cast<std::uint8_t>((c.rnr_retry & 7) << 5);
  put(m + rep::kLocalCaGuid, 8, ca_guid);
  copy_private(m + rep::kPrivate, rep::kPrivateBytes, c.rep_private.data(), c.rep_private.size());
}

void parse_rep(const std::uint8_t* m, Conn& c) {
  c.remote_id = static_cast<std::uint32_t>(get(m + kLocalCommId, 4));
  c.remote_qpn = get_bits(m + rep::kLocalQpn, 4, 0, 24);
  c.remote_psn = get_bits(m + rep::kStartingPsn, 4, 0, 24);
  c.init_depth = std::min(c.init_depth, m[rep::kRespResources]);
  c.remote_guid = get(m + rep::kLocalCaGuid, 8);
}

void build_rtu(std::uint8_t* m, std::uint64_t tid, const Conn& c) { cm_header(m, kRtu, tid, c); }

void build_rej(std::uint8_t* m, std::uint64_t tid, const Conn& c, std::uint8_t msg, std::uint16_t reason,
               const std::uint8_t* priv, std::size_t len) {
  cm_header(m, kRej, tid, c);
  m[rej::kMsgRejected] = static_cast<std::uint8_t>(msg << 6);
  put(m + rej::kReason, 2, reason);
  copy_private(m + rej::kPrivate, rej::kPrivateBytes, priv, len);
}

void build_mra(std::uint8_t* m, std::uint64_t tid, const Conn& c, std::uint8_t service_timeout) {
  cm_header(m, kMra, tid, c);
  m[mra::kMsgMraed] = static_cast<std::uint8_t>(mra::kReqMsg << 6);
  m[mra::kTimeout] = static_cast<std::uint8_t>(service_timeout << 3);
}

void build_dreq(std::uint8_t* m, std::uint64_t tid, const Conn& c) {
  cm_header(m, kDreq, tid, c);
  put(m + dreq::kRemoteQpn, 4, c.remote_qpn << 8);
}

void build_drep(std::uint8_t* m, std::uint64_t tid, const Conn& c) { cm_header(m, kDrep, tid, c); }

}  // namespace nicsim::cm
