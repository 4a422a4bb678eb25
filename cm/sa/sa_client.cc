// The node's SA client: queries to the subnet administrator with timeouts
// and retries, the node's address registration (a ServiceRecord of the
// address translation service, IPv4 in ServiceData8[12..15]), address
// resolution (ServiceRecord by IPv4, then PathRecord by GIDs) with a cache,
// and the reverse look-up (ServiceRecord by GID).
#include <rdma/ib_verbs.h>

#include <cstdio>
#include <cstring>

#include "cm/core/cm_node.h"
#include "core/sim.h"
#include "nicsim/app.h"

namespace nicsim::cm {

using namespace mad;

std::uint32_t default_ipv4(std::uint32_t node_id) { return 0x0a000000u + node_id + 1; }

std::string format_ipv4(std::uint32_t ip) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
  return buf;
}

void CmNode::sa_query(std::uint8_t method, std::uint16_t attr, std::uint64_t mask, const std::uint8_t* record,
                      std::uint32_t record_bytes, std::function<void(bool, const std::uint8_t*)> done) {
  auto q = std::make_unique<SaQuery>();
  q->tid = next_tid();
  header(q->mad.data(), kClassSa, kSaClassVersion, method, attr, q->tid);
  put(q->mad.data() + sa::kAttrOffset, 2, record_bytes / 8);
  put(q->mad.data() + sa::kCompMask, 8, mask);
  std::memcpy(q->mad.data() + sa::kData, record, record_bytes);
  q->done = std::move(done);
  const std::uint64_t tid = q->tid;
  q->timer = make_timer("ib_sa_query", [this, tid] {
    auto it = sa_queries_.find(tid);
    if (it == sa_queries_.end()) return;
    if (it->second->sends <= host_.params().count("cm.sa_retries")) {
      ++counters_.sa_retries;
      return sa_send(*it->second);
    }
    auto fn = std::move(it->second->done);
    sa_queries_.erase(it);
    counters_.sa_queries_live = static_cast<std::uint32_t>(sa_queries_.size());
    fn(false, nullptr);
  });
  ++counters_.sa_queries;
  SaQuery& ref = *q;
  sa_queries_[tid] = std::move(q);
  counters_.sa_queries_live = static_cast<std::uint32_t>(sa_queries_.size());
  sa_send(ref);
}

void CmNode::sa_send(SaQuery& q) {
  ++q.sends;
  send_mad(sa_lid_, q.mad.data());
  q.timer->start(host_.params().time("cm.sa_timeout"));
}

void CmNode::on_sa_response(const std::uint8_t* m) {
  auto it = sa_queries_.find(get(m + kTid, 8));
  if (it == sa_queries_.end()) return;  // a late duplicate
  auto fn = std::move(it->second->done);
  sa_queries_.erase(it);
  counters_.sa_queries_live = static_cast<std::uint32_t>(sa_queries_.size());
  const bool ok = (get(m + kStatus, 2) & 0x7fff) == 0;
  fn(ok, ok ? m + sa::kData : nullptr);
}

bool CmNode::register_address() {
  std::uint8_t rec[sa::service::kBytes] = {};
  put(rec + sa::service::kId, 8, sa::service::kAtsServiceId);
  std::memcpy(rec + sa::service::kGid, gid_.data(), 16);
  put(rec + sa::service::kPkey, 2, kDefaultPkey);
  put(rec + sa::service::kLease, 4, 0xffffffffu);
  std::memcpy(rec + sa::service::kName, sa::service::kAtsName, std::strlen(sa::service::kAtsName));
  put(rec + sa::service::kIpv4, 4, ipv4_);
  host::WaitQueue done_wq(host_);
  bool done = false;
  post([&] {
    sa_query(kMethodSet, sa::kServiceRecord, sa::service::kMaskId | sa::service::kMaskGid | sa::service::kMaskIpv4, rec,
             sizeof rec, [&](bool ok, const std::uint8_t*) {
               registered_ = ok;
               done = true;
               done_wq.notify_all();
             });
  });
  while (!done) done_wq.wait();
  if (!registered_) nicsim_log("ib_cm: the SA did not register %s", format_ipv4(ipv4_).c_str());
  return registered_;
}

namespace {
Path path_of(const std::uint8_t* r) {
  Path p;
  std::memcpy(p.dgid.data(), r + sa::path::kDgid, 16);
  std::memcpy(p.sgid.data(), r + sa::path::kSgid, 16);
  p.dlid = static_cast<std::uint16_t>(get(r + sa::path::kDlid, 2));
  p.slid = static_cast<std::uint16_t>(get(r + sa::path::kSlid, 2));
  p.pkey = static_cast<std::uint16_t>(get(r + sa::path::kPkey, 2));
  p.sl = static_cast<std::uint8_t>(get(r + sa::path::kSl, 2) & 0xf);
  p.mtu = r[sa::path::kMtu] & 0x3f;
  p.rate = r[sa::path::kRate] & 0x3f;
  p.lifetime = r[sa::path::kLifetime] & 0x3f;
  return p;
}
}  // namespace

void CmNode::resolve(std::uint32_t ip, std::function<void(bool, const Path&)> done) {
  if (auto it = path_cache_.find(ip); it != path_cache_.end() && it->second.expires > now()) {
    ++counters_.cache_hits;
    return done(true, it->second.path);
  }
  std::uint8_t rec[sa::service::kBytes] = {};
  put(rec + sa::service::kId, 8, sa::service::kAtsServiceId);
  put(rec + sa::service::kIpv4, 4, ip);
  auto on_service = [this, ip, done](bool ok, const std::uint8_t* r) {
    if (!ok) return done(false, Path{});
    std::uint8_t pr[sa::path::kBytes] = {};
    std::memcpy(pr + sa::path::kDgid, r + sa::service::kGid, 16);
    std::memcpy(pr + sa::path::kSgid, gid_.data(), 16);
    pr[sa::path::kNumbPath] = 1;
    sa_query(kMethodGetTable, sa::kPathRecord, sa::path::kMaskDgid | sa::path::kMaskSgid | sa::path::kMaskNumbPath, pr,
             sizeof pr, [this, ip, done](bool ok2, const std::uint8_t* r2) {
               if (!ok2) return done(false, Path{});
               const Path p = path_of(r2);
               if (const Tick life = host_.params().time("cm.path_cache_lifetime"))
                 path_cache_[ip] = CacheEntry{p, now() + life};
               done(true, p);
             });
  };
  sa_query(kMethodGet, sa::kServiceRecord, sa::service::kMaskId | sa::service::kMaskIpv4, rec, sizeof rec, on_service);
}

void CmNode::reverse(const std::array<std::uint8_t, 16>& gid, std::function<void(std::uint32_t)> done) {
  std::uint8_t rec[sa::service::kBytes] = {};
  put(rec + sa::service::kId, 8, sa::service::kAtsServiceId);
  std::memcpy(rec + sa::service::kGid, gid.data(), 16);
  sa_query(kMethodGet, sa::kServiceRecord, sa::service::kMaskId | sa::service::kMaskGid, rec, sizeof rec,
           [done](bool ok, const std::uint8_t* r) {
             done(ok ? static_cast<std::uint32_t>(get(r + sa::service::kIpv4, 4)) : 0);
           });
}

}  // namespace nicsim::cm
