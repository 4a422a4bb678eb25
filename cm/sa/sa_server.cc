// The subnet administrator (program "ib_sa"): answers Subnet Administration
// MADs (class 0x03) on its node's QP1. It keeps the ServiceRecords nodes
// register (SubnAdmSet), learning each registering port's LID from the
// packet's source LID, answers ServiceRecord Get by the component mask's
// fields (service id, GID, ServiceData8 bytes), and PathRecord Get and
// GetTable between two ports it knows (the answer in one MAD: GetTable's
// RMPP header marks it the first and last segment). Unknown records get
// status ERR_NO_RECORDS. As a workload it sets itself a daemon: the run does
// not wait for it.
#include <rdma/ib_verbs.h>

#include <cstring>
#include <map>
#include <utility>

#include "cm/core/cm_node.h"
#include "core/params.h"
#include "nicsim/app.h"
#include "world/programs.h"

namespace nicsim::cm {
namespace {

using namespace mad;

const ParamRegistration sa_params(
    "host", "",
    {
        {"sa.path_mtu",
         UnitKind::Count,
         "4",
         "1",
         "5",
         {},
         "the MTU code the SA's PathRecords give (1 = 256 ... 5 = 4096 bytes)"},
        {"sa.path_rate", UnitKind::Count, "3", "2", "10", {}, "the rate code of its PathRecords (3 = 10 Gb/s)"},
        {"sa.packet_lifetime",
         UnitKind::Count,
         "4",
         "0",
         "63",
         {},
         "the PacketLifeTime exponent of its PathRecords (4.096 us * 2^n)"},
    });

struct Registration {
  std::array<std::uint8_t, sa::service::kBytes> record{};
  std::uint16_t lid = 0;
};

class SubnetAdministrator {
 public:
  explicit SubnetAdministrator(CmNode& n) : n_(n) {}
  void on_mad(const std::uint8_t* m, const MadSource& from);
  std::uint64_t answered = 0;

 private:
  void service(const std::uint8_t* m, const MadSource& from, std::uint8_t* resp);
  void path(const std::uint8_t* m, std::uint8_t* resp);
  bool lid_of(const std::uint8_t* gid, std::uint16_t& lid) const;
  CmNode& n_;
  std::map<std::pair<std::uint64_t, std::array<std::uint8_t, 16>>, Registration> records_;
};

bool matches(const std::uint8_t* rec, const std::uint8_t* query, std::uint64_t mask) {
  if ((mask & sa::service::kMaskId) && std::memcmp(rec, query, 8)) return false;
  if ((mask & sa::service::kMaskGid) && std::memcmp(rec + sa::service::kGid, query + sa::service::kGid, 16))
    return false;
  for (unsigned i = 0; i < 16; ++i)  // ServiceData8[i]: mask bit 7 + i
    if ((mask & (1ull << (7 + i))) && rec[sa::service::kData8 + i] != query[sa::service::kData8 + i]) return false;
  return true;
}

void SubnetAdministrator::service(const std::uint8_t* m, const MadSource& from, std::uint8_t* resp) {
  const std::uint8_t* q = m + sa::kData;
  const std::uint64_t mask = get(m + sa::kCompMask, 8);
  if (m[kMethod] == kMethodSet) {
    std::array<std::uint8_t, 16> gid;
    std::memcpy(gid.data(), q + sa::service::kGid, 16);
    Registration& r = records_[{get(q, 8), gid}];
    std::memcpy(r.record.data(), q, sa::service::kBytes);
    r.lid = from.slid;
    std::memcpy(resp + sa::kData, q, sa::service::kBytes);
    return;
  }
  for (const auto& [key, r] : records_) {
    if (!matches(r.record.data(), q, mask)) continue;
    std::memcpy(resp + sa::kData, r.record.data(), sa::service::kBytes);
    return;
  }
  put(resp + kStatus, 2, sa::kStatusNoRecords);
}

bool SubnetAdministrator::lid_of(const std::uint8_t* gid, std::uint16_t& lid) const {
  if (!std::memcmp(gid, n_.gid().data(), 16)) return lid = n_.lid(), true;
  for (const auto& [key, r] : records_)
    if (!std::memcmp(key.second.data(), gid, 16)) return lid = r.lid, true;
  return false;
}

void SubnetAdministrator::path(const std::uint8_t* m, std::uint8_t* resp) {
  const std::uint8_t* q = m + sa::kData;
  std::uint16_t slid = 0, dlid = 0;
  if (!lid_of(q + sa::path::kSgid, slid) || !lid_of(q + sa::path::kDgid, dlid))
    return put(resp + kStatus, 2, sa::kStatusNoRecords);
  const host::Host& h = n_.host();
  std::uint8_t* r = resp + sa::kData;
  std::memcpy(r + sa::path::kDgid, q + sa::path::kDgid, 16);
  std::memcpy(r + sa::path::kSgid, q + sa::path::kSgid, 16);
  put(r + sa::path::kDlid, 2, dlid);
  put(r + sa::path::kSlid, 2, slid);
  put(r + sa::path::kFlowHop, 4, 0);
  r[sa::path::kNumbPath] = 0x80 | 1;  // reversible, one path
  put(r + sa::path::kPkey, 2, kDefaultPkey);
  put(r + sa::path::kSl, 2, 0);
  r[sa::path::kMtu] = static_cast<std::uint8_t>(0x80 | h.params().count("sa.path_mtu"));  // selector: exactly
  r[sa::path::kRate] = static_cast<std::uint8_t>(0x80 | h.params().count("sa.path_rate"));
  r[sa::path::kLifetime] = static_cast<std::uint8_t>(0x80 | h.params().count("sa.packet_lifetime"));
}

void SubnetAdministrator::on_mad(const std::uint8_t* m, const MadSource& from) {
  const std::uint8_t method = m[kMethod];
  if (method != kMethodGet && method != kMethodSet && method != kMethodGetTable) return;
  std::uint8_t resp[kBytes];
  const std::uint16_t attr = static_cast<std::uint16_t>(get(m + kAttrId, 2));
  header(resp, kClassSa, kSaClassVersion, method == kMethodGetTable ? kMethodGetTableResp : kMethodGetResp, attr,
         get(m + kTid, 8));
  std::memcpy(resp + sa::kAttrOffset, m + sa::kAttrOffset, 12);
  if (attr == sa::kServiceRecord) {
    service(m, from, resp);
  } else if (attr == sa::kPathRecord) {
    path(m, resp);
  } else {
    put(resp + kStatus, 2, 0x000c);  // unsupported method/attribute combination
  }
  if (method == kMethodGetTable) {
    resp[sa::kRmppVersion] = 1;
    resp[sa::kRmppType] = 1;      // DATA
    resp[sa::kRmppFlags] = 0x07;  // active, first and last segment
    put(resp + sa::kRmppSegment, 4, 1);
    put(resp + sa::kRmppLength, 4, 20 + sa::path::kBytes);
  }
  ++answered;
  n_.send_mad(from.slid, resp);
}

int sa_main(int, char**) {
  std::shared_ptr<SubnetAdministrator> sa;
  const auto attach = [&sa](CmNode& node) {
    sa = std::make_shared<SubnetAdministrator>(node);
    node.set_class_handler(kClassSa, [sa](const std::uint8_t* m, const MadSource& from) { sa->on_mad(m, from); });
  };
  CmNode* n = node_cm(attach);
  // A program of the same node may have started the CM first (its
  // registration waits for the port, so the SA is there in time).
  if (n && !sa) attach(*n);
  if (!n) return nicsim_log("ib_sa: no InfiniBand device on this node"), 1;
  if (ProgramInstance* p = current_program()) p->become_daemon();
  host::WaitQueue forever(n->host());
  for (;;) forever.wait();
}

const BuiltinProgram reg(
    "ib_sa", sa_main,
    "the subnet administrator: ServiceRecords (address translation) and PathRecords on QP1; "
    "run it as a workload on the subnet manager's node (a daemon). It has no options and leaves any "
    "argument to the other workloads (--arg reaches every workload)");

}  // namespace
}  // namespace nicsim::cm
