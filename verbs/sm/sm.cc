// The subnet manager's transport: QP0 over ci_interface_t, SMP transactions
// with timeouts and retries, and the program entry point.
#include "verbs/sm/sm.h"

#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <system_error>

#include "core/sim.h"
#include "ib_fabric/ib_mgmt.h"
#include "host/host.h"
#include "iba/nicsim_ca.h"
#include "nicsim/app.h"
#include "world/node.h"
#include "world/programs.h"

namespace nicsim::sm {

using namespace fabric::smp;

namespace {
constexpr std::uint32_t kSlots = 16;  // receive WRs kept posted on QP0
constexpr std::uint32_t kGrh = 40;    // UD receive buffers start with room for a GRH
constexpr std::uint32_t kSlotBytes = kGrh + kMadBytes;
constexpr std::uint64_t kSendWrId = ~0ULL;
}  // namespace

SubnetManager::SubnetManager(const ci_interface_t* ci, host::Host& host, SmOptions options)
    : ci_(ci), host_(host), opt_(std::move(options)), wq_(new host::WaitQueue(host)) {}

SubnetManager::~SubnetManager() { delete wq_; }

void SubnetManager::completion_cb(void* cq_context) {
  auto* sm = static_cast<SubnetManager*>(cq_context);
  sm->cq_fired_ = true;
  sm->wq_->notify_all();
}

void SubnetManager::async_cb(const ib_event_rec_t* rec) {
  if (!rec || !rec->context) return;
  auto* sm = static_cast<SubnetManager*>(rec->context);
  // Its own port going down: sweep again (a sweep waits for the link to come
  // back, announced by the neighbour's trap). Going Active is the SM's doing.
  if (rec->type == IB_AE_PORT_DOWN && rec->trap.info.port_num == sm->port_) {
    sm->port_event_ = true;
    sm->wq_->notify_all();
  }
}

bool SubnetManager::start() {
  ib_api_status_t st = ci_->open_ca(ci_->guid, &SubnetManager::completion_cb, &SubnetManager::async_cb, this, &ca_);
  if (st != IB_SUCCESS) return nicsim_log("subnet_manager: open_ca: %s", ib_get_err_str(st)), false;
  if ((st = ci_->allocate_pd(ca_, &pd_, nullptr)) != IB_SUCCESS)
    return nicsim_log("subnet_manager: allocate_pd: %s", ib_get_err_str(st)), false;
  std::uint32_t cq_size = 2 * kSlots;
  if ((st = ci_->create_cq(pd_, this, &cq_size, &cq_, nullptr)) != IB_SUCCESS)
    return nicsim_log("subnet_manager: create_cq: %s", ib_get_err_str(st)), false;
  ib_qp_create_t qc{};
  qc.qp_type = IB_QPT_QP0;
  qc.sq_depth = kSlots;
  qc.rq_depth = kSlots;
  qc.sq_sge = 1;
  qc.rq_sge = 1;
  qc.h_sq_cq = cq_;
  qc.h_rq_cq = cq_;
  qc.sq_signaled = TRUE;
  ib_qp_attr_t qa{};
  if ((st = ci_->create_spl_qp(pd_, port_, this, &qc, &qa, &qp0_)) != IB_SUCCESS)
    return nicsim_log("subnet_manager: create_spl_qp(QP0): %s", ib_get_err_str(st)), false;
  ib_qp_mod_t m{};
  m.req_state = IB_QPS_INIT;
  m.state.init.qkey = 0;
  m.state.init.pkey_index = 0;
  if ((st = ci_->modify_qp(qp0_, &m, &qa, nullptr)) != IB_SUCCESS)
    return nicsim_log("subnet_manager: QP0 to INIT: %s", ib_get_err_str(st)), false;
  std::memset(&m, 0, sizeof m);
  m.req_state = IB_QPS_RTR;
  if ((st = ci_->modify_qp(qp0_, &m, &qa, nullptr)) != IB_SUCCESS)
    return nicsim_log("subnet_manager: QP0 to RTR: %s", ib_get_err_str(st)), false;
  std::memset(&m, 0, sizeof m);
  m.req_state = IB_QPS_RTS;
  m.state.rts.sq_psn = 0;
  if ((st = ci_->modify_qp(qp0_, &m, &qa, nullptr)) != IB_SUCCESS)
    return nicsim_log("subnet_manager: QP0 to RTS: %s", ib_get_err_str(st)), false;
  const std::size_t bytes = kSlots * kSlotBytes + kMaxWireSmps * kMadBytes;
  mem_ = static_cast<std::uint8_t*>(nicsim_alloc(bytes, 64));
  if (!mem_) return nicsim_log("subnet_manager: no node memory for %zu bytes of MAD buffers", bytes), false;
  std::memset(mem_, 0, bytes);
  ib_mr_create_t mc{};
  mc.vaddr = mem_;
  mc.length = bytes;
  mc.access_ctrl = IB_AC_LOCAL_WRITE;
  std::uint32_t rkey = 0;
  if ((st = ci_->register_mr(pd_, &mc, &lkey_, &rkey, &mr_, nullptr)) != IB_SUCCESS)
    return nicsim_log("subnet_manager: register_mr: %s", ib_get_err_str(st)), false;
  // Directed-route SMPs go to the permissive LID; the switches steer them.
  ib_av_attr_t av{};
  av.port_num = port_;
  av.dlid = cl_hton16(fabric::kPermissiveLid);
  if ((st = ci_->create_av(pd_, &av, &av_, nullptr)) != IB_SUCCESS)
    return nicsim_log("subnet_manager: create_av: %s", ib_get_err_str(st)), false;
  for (std::uint32_t i = 0; i < kSlots; ++i) post_recv(i);
  return true;
}

void SubnetManager::post_recv(std::uint32_t slot) {
  ib_local_ds_t ds{};
  ds.vaddr = mem_ + slot * kSlotBytes;
  ds.length = kSlotBytes;
  ds.lkey = lkey_;
  ib_recv_wr_t wr{};
  wr.wr_id = slot;
  wr.num_ds = 1;
  wr.ds_array = &ds;
  ib_recv_wr_t* bad = nullptr;
  if (ib_api_status_t st = ci_->post_recv(qp0_, &wr, &bad); st != IB_SUCCESS)
    nicsim_log("subnet_manager: post_recv: %s", ib_get_err_str(st));
}

void SubnetManager::drain_cq(const std::function<bool(const std::uint8_t* mad)>& take) {
  ib_wc_t wc[8];
  for (;;) {
    for (int i = 0; i < 7; ++i) wc[i].p_next = &wc[i + 1];
    wc[7].p_next = nullptr;
    ib_wc_t* free_list = wc;
    ib_wc_t* done = nullptr;
    if (ci_->poll_cq(cq_, &free_list, &done) != IB_SUCCESS || !done) return;
    for (ib_wc_t* w = done; w; w = w->p_next) {
      if (w->wr_id == kSendWrId) continue;  // our SMP left
      const auto slot = static_cast<std::uint32_t>(w->wr_id);
      const std::uint8_t* mad = mem_ + slot * kSlotBytes + kGrh;
      if (w->status == IB_WCS_SUCCESS && w->wc_type == IB_WC_RECV) {
        if (mad[kMethod] == kMethodTrap)
          trap_seen_ = true;
        else if (mad[kMethod] == kMethodGetResp)
          take(mad);
      }
      if (w->status != IB_WCS_WR_FLUSHED_ERR) post_recv(slot);
    }
  }
}

bool SubnetManager::wait_response(std::uint64_t tid, std::uint8_t* resp, Tick deadline) {
  bool found = false;
  auto take = [&](const std::uint8_t* mad) {
    if (found || get(mad + kTid, 8) != tid) return false;
    std::memcpy(resp, mad, kMadBytes);
    return found = true;
  };
  for (;;) {
    drain_cq(take);
    if (found) return true;
    // tid 0: waiting for a trap or port event (until `deadline`, 0 = forever).
    if (tid == 0 && (trap_seen_ || port_event_)) return true;
    if (deadline && nicsim::now() >= deadline) return false;
    cq_fired_ = false;
    ci_->enable_cq_notify(cq_, FALSE);
    drain_cq(take);  // what arrived before the CQ was armed
    if (found) return true;
    while (!cq_fired_ && !(tid == 0 && (trap_seen_ || port_event_))) {
      if (!deadline) {
        wq_->wait();
      } else if (!wq_->wait_until(deadline)) {
        break;
      }
    }
  }
}

std::uint8_t* SubnetManager::build_smp(std::uint32_t buf, const SmpRequest& req) {
  std::uint8_t* mad = mem_ + kSlots * kSlotBytes + buf * kMadBytes;
  std::memset(mad, 0, kMadBytes);
  mad[kBaseVersion] = 1;
  mad[kMgmtClass] = kClassDirected;
  mad[kClassVersion] = 1;
  mad[kMethod] = req.method;
  put(mad + kAttrId, 2, req.attr);
  put(mad + kAttrMod, 4, req.mod);
  put(mad + kDrSlid, 2, fabric::kPermissiveLid);
  put(mad + kDrDlid, 2, fabric::kPermissiveLid);
  if (req.has_data) std::memcpy(mad + kData, req.data.data(), 64);
  mad[kHopCount] = static_cast<std::uint8_t>(req.path.size());
  for (std::size_t i = 0; i < req.path.size(); ++i) mad[kInitialPath + 1 + i] = req.path[i];
  // The sending SMI's step (IBA 14.2.2.2): the hop pointer moves to the
  // first hop before the SMP leaves, as the MAD layer of a host stack does.
  if (!req.path.empty()) mad[kHopPointer] = 1;
  return mad;
}

// The SM's own port: the CA's SMA through the local MAD interface.
bool SubnetManager::local_smp(SmpRequest& req) {
  std::uint8_t* mad = build_smp(0, req);
  std::uint8_t resp[kMadBytes];
  put(mad + kTid, 8, next_tid_++);
  req.ok = ci_->local_mad(ca_, port_, mad, resp) == IB_SUCCESS && (get(resp + kStatus, 2) & 0x7fff) == 0;
  std::memcpy(req.resp.data(), resp + kData, 64);
  if (!req.ok) ++stats_.failed;
  return req.ok;
}

bool SubnetManager::smp(const std::vector<std::uint8_t>& path, std::uint8_t method, std::uint16_t attr,
                        std::uint32_t mod, const std::uint8_t* data, std::uint8_t* resp) {
  SmpRequest req;
  req.path = path;
  req.method = method;
  req.attr = attr;
  req.mod = mod;
  req.has_data = data != nullptr;
  if (data) std::memcpy(req.data.data(), data, 64);
  ++stats_.smps;
  if (path.empty()) {
    const bool ok = local_smp(req);
    std::memset(resp, 0, kMadBytes);
    std::memcpy(resp + kData, req.resp.data(), 64);
    return ok;
  }
  return transact(build_smp(0, req), av_, resp);
}

// ---- batches: several SMPs in flight --------------------------------------------

bool SubnetManager::post_smp(std::uint8_t* mad, ib_av_handle_t av, std::uint64_t tid) {
  put(mad + kTid, 8, tid);
  ib_local_ds_t ds{};
  ds.vaddr = mad;
  ds.length = kMadBytes;
  ds.lkey = lkey_;
  ib_send_wr_t wr{};
  wr.wr_id = kSendWrId;
  wr.wr_type = WR_SEND;
  wr.send_opt = IB_SEND_OPT_SIGNALED;
  wr.num_ds = 1;
  wr.ds_array = &ds;
  wr.dgrm.ud.remote_qp = 0;
  wr.dgrm.ud.remote_qkey = 0;
  wr.dgrm.ud.h_av = av;
  ib_send_wr_t* bad = nullptr;
  if (ib_api_status_t st = ci_->post_send(qp0_, &wr, &bad); st != IB_SUCCESS) {
    nicsim_log("subnet_manager: post_send: %s", ib_get_err_str(st));
    return false;
  }
  return true;
}

bool SubnetManager::launch(std::vector<SmpRequest>& reqs, std::size_t i, std::uint32_t buf, std::uint32_t attempt,
                           std::map<std::uint64_t, InFlight>& flying) {
  const std::uint64_t tid = next_tid_++;
  if (!post_smp(build_smp(buf, reqs[i]), av_, tid)) return false;
  flying[tid] = {i, buf, attempt, nicsim::now() + opt_.timeout};
  return true;
}

// Requests whose answer is overdue go again, or fail after the retries.
void SubnetManager::expire(std::vector<SmpRequest>& reqs, std::map<std::uint64_t, InFlight>& flying,
                           std::vector<std::uint32_t>& free_bufs, bool& ok) {
  const Tick now = nicsim::now();
  std::vector<InFlight> late;
  for (auto it = flying.begin(); it != flying.end();) {
    if (it->second.deadline > now) {
      ++it;
      continue;
    }
    late.push_back(it->second);
    it = flying.erase(it);
  }
  for (const InFlight& f : late) {
    ++stats_.timeouts;
    if (f.attempt < opt_.retries && launch(reqs, f.req, f.buf, f.attempt + 1, flying)) continue;
    ++stats_.failed;
    ok = false;
    free_bufs.push_back(f.buf);
  }
}

// Sleeps until a completion or the earliest deadline of what is in flight.
void SubnetManager::wait_batch(const std::map<std::uint64_t, InFlight>& flying) {
  Tick deadline = kTickMax;
  for (const auto& [tid, f] : flying) deadline = std::min(deadline, f.deadline);
  cq_fired_ = false;
  ci_->enable_cq_notify(cq_, FALSE);
  while (!cq_fired_ && nicsim::now() < deadline)
    if (!wq_->wait_until(deadline)) break;
}

bool SubnetManager::smp_batch(std::vector<SmpRequest>& reqs) {
  std::map<std::uint64_t, InFlight> flying;  // by TID
  std::vector<std::uint32_t> free_bufs;
  for (std::uint32_t b = opt_.max_wire_smps; b > 0; --b) free_bufs.push_back(b - 1);
  bool ok = true;
  auto take = [&](const std::uint8_t* mad) {
    const auto it = flying.find(get(mad + kTid, 8));
    if (it == flying.end()) return false;
    SmpRequest& req = reqs[it->second.req];
    req.ok = (get(mad + kStatus, 2) & 0x7fff) == 0;
    std::memcpy(req.resp.data(), mad + kData, 64);
    if (!req.ok) ++stats_.failed, ok = false;
    free_bufs.push_back(it->second.buf);
    flying.erase(it);
    return true;
  };
  for (std::size_t next = 0; next < reqs.size() || !flying.empty();) {
    while (next < reqs.size() && (reqs[next].path.empty() || !free_bufs.empty())) {
      ++stats_.smps;
      if (reqs[next].path.empty()) {
        ok = local_smp(reqs[next]) && ok;
      } else if (launch(reqs, next, free_bufs.back(), 0, flying)) {
        free_bufs.pop_back();
      } else {
        ++stats_.failed;
        ok = false;
      }
      ++next;
    }
    if (flying.empty()) continue;
    const std::size_t before = flying.size();
    drain_cq(take);
    if (flying.size() == before) {
      wait_batch(flying);
      drain_cq(take);
    }
    expire(reqs, flying, free_bufs, ok);
  }
  return ok;
}

bool SubnetManager::smp_lid(std::uint16_t dlid, std::uint8_t method, std::uint16_t attr, std::uint32_t mod,
                            const std::uint8_t* data, std::uint8_t* resp) {
  std::uint8_t* mad = mem_ + kSlots * kSlotBytes;
  std::memset(mad, 0, kMadBytes);
  mad[kBaseVersion] = 1;
  mad[kMgmtClass] = kClassLid;
  mad[kClassVersion] = 1;
  mad[kMethod] = method;
  put(mad + kAttrId, 2, attr);
  put(mad + kAttrMod, 4, mod);
  if (data) std::memcpy(mad + kData, data, 64);
  ++stats_.smps;
  ib_av_attr_t a{};
  a.port_num = port_;
  a.dlid = cl_hton16(dlid);
  ib_av_handle_t av = nullptr;
  if (ib_api_status_t st = ci_->create_av(pd_, &a, &av, nullptr); st != IB_SUCCESS) {
    nicsim_log("subnet_manager: create_av(LID %u): %s", dlid, ib_get_err_str(st));
    return ++stats_.failed, false;
  }
  const bool ok = transact(mad, av, resp);
  ci_->destroy_av(av, nullptr);
  return ok;
}

bool SubnetManager::transact(std::uint8_t* mad, ib_av_handle_t av, std::uint8_t* resp) {
  for (std::uint32_t attempt = 0; attempt <= opt_.retries; ++attempt) {
    const std::uint64_t tid = next_tid_++;
    if (!post_smp(mad, av, tid)) return ++stats_.failed, false;
    if (wait_response(tid, resp, nicsim::now() + opt_.timeout))
      return (get(resp + kStatus, 2) & 0x7fff) == 0 || (++stats_.failed, false);
    ++stats_.timeouts;
  }
  ++stats_.failed;
  return false;
}

bool SubnetManager::wait_for_change(Tick deadline) {
  std::uint8_t unused[kMadBytes];
  const bool changed = wait_response(0, unused, deadline);
  trap_seen_ = false;
  port_event_ = false;
  return changed;
}

namespace {

// A whole decimal number in [min, max] and nothing else after it.
bool whole_number(const char* text, long min, long max, long& out) {
  const char* end = text + std::strlen(text);
  const auto [stop, ec] = std::from_chars(text, end, out);
  return ec == std::errc() && stop == end && out >= min && out <= max;
}

}  // namespace

std::string parse_options(int argc, char** argv, SmOptions& out) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i] ? argv[i] : "";
    auto value = [&](const char* key) -> const char* {
      const std::size_t n = std::strlen(key);
      return a.compare(0, n, key) == 0 ? a.c_str() + n : nullptr;
    };
    if (const char* v = value("--mcast=")) {
      McastGroup g;
      char* end = nullptr;
      const unsigned long mlid = std::strtoul(v, &end, 0);
      if (end == v || *end != ':' || mlid < fabric::kMulticastLidBase || mlid >= fabric::kPermissiveLid)
        return fmt::format("{}: want --mcast=<mlid 0xC000..0xFFFE>:<node>[,<node>...]", a);
      g.mlid = static_cast<std::uint16_t>(mlid);
      std::string rest = end + 1;
      for (std::size_t at = 0; at <= rest.size();) {
        const std::size_t comma = std::min(rest.find(',', at), rest.size());
        if (comma > at) g.members.push_back(rest.substr(at, comma - at));
        at = comma + 1;
      }
      if (g.members.empty()) return fmt::format("{}: a group needs members", a);
      out.groups.push_back(std::move(g));
    } else if (const char* v = value("--timeout-us=")) {
      long n = 0;
      if (!whole_number(v, 1, 1000000, n)) return fmt::format("{}: timeout must be 1..1000000 us", a);
      out.timeout = static_cast<Tick>(n) * kUs;
    } else if (const char* v = value("--sweep-interval-us=")) {
      long n = 0;
      if (!whole_number(v, 0, 10000000, n)) return fmt::format("{}: sweep interval must be 0..10000000 us", a);
      out.sweep_interval = static_cast<Tick>(n) * kUs;
    } else if (const char* v = value("--routing=")) {
      if (!fabric::routing::parse_engine(v, &out.routing))
        return fmt::format("{}: the routing engines are {}", a, fabric::routing::engine_names());
    } else if (const char* v = value("--max-wire-smps=")) {
      long n = 0;
      if (!whole_number(v, 1, static_cast<long>(kMaxWireSmps), n))
        return fmt::format("{}: must be 1..{}", a, kMaxWireSmps);
      out.max_wire_smps = static_cast<std::uint32_t>(n);
    } else if (const char* v = value("--retries=")) {
      long n = 0;
      if (!whole_number(v, 0, 100, n)) return fmt::format("{}: retries must be 0..100", a);
      out.retries = static_cast<std::uint32_t>(n);
    } else {
      return fmt::format("unknown argument '{}'", a);
    }
  }
  return "";
}

namespace {

int sm_check(int argc, char** argv) {
  SmOptions opt;
  if (std::string err = parse_options(argc, argv, opt); !err.empty()) {
    nicsim_fail(("subnet_manager: " + err).c_str());
    return -1;
  }
  return 0;
}

int sm_main(int argc, char** argv) {
  SmOptions opt;
  if (std::string err = parse_options(argc, argv, opt); !err.empty()) {
    nicsim_fail(("subnet_manager: " + err).c_str());
    return 2;
  }
  const ci_interface_t* ci = nicsim_sm_ci_interface();
  ProgramInstance* self = current_program();
  if (!ci || !self) {
    nicsim_fail("subnet_manager: this node has no HCA (nic: \"hca\")");
    return 1;
  }
  SubnetManager sm(ci, self->node().host(), std::move(opt));
  if (!sm.start()) {
    nicsim_fail("subnet_manager: could not bring up QP0");
    return 1;
  }
  // An incomplete sweep (SMPs lost beyond the retries, a port that did not
  // answer) is repeated after a pause, a few times, before the SM waits for
  // the fabric to announce a change.
  constexpr std::uint32_t kIncompleteRetries = 4;
  constexpr Tick kIncompletePause = 1 * kMs;
  std::uint32_t incomplete = 0;
  for (;;) {
    const bool ok = sm.sweep();
    const SweepStats& s = sm.last();
    nicsim_log("subnet_manager: sweep %u %s: %zu nodes, %u SMPs (%u timed out), %.3f us", sm.sweeps(),
               ok ? "done" : "incomplete", sm.nodes().size(), s.smps, s.timeouts,
               static_cast<double>(s.finished - s.started) / static_cast<double>(kUs));
    if (sm.sweeps() == 1) {
      nicsim_result("first_sweep", static_cast<double>(s.finished - s.started) / static_cast<double>(kUs), "us");
      nicsim_result("first_sweep_smps", s.smps, "SMPs");
      nicsim_result("first_sweep_timeouts", s.timeouts, "SMPs");
    }
    if (!self->daemon) return ok ? 0 : 1;  // as a workload: one sweep
    incomplete = ok ? 0 : incomplete + 1;
    if (!ok && incomplete <= kIncompleteRetries) {
      sm.wait_for_change(nicsim::now() + kIncompletePause);  // a trap ends the pause early
      continue;
    }
    sm.wait_for_change(sm.options().sweep_interval ? nicsim::now() + sm.options().sweep_interval : 0);
  }
}

__attribute__((constructor)) void register_sm() {
  nicsim_register_program_checked(
      "subnet_manager", sm_main, sm_check,
      "InfiniBand subnet manager over QP0 (directed-route sweep, LIDs, min-hop LFTs, MFTs, port activation). "
      "--mcast=<mlid>:<node>[,<node>...], --timeout-us=100, --retries=3, --sweep-interval-us=0, "
      "--routing=auto|minhop|ftree|updn, --max-wire-smps=4. As a workload it "
      "sweeps once and "
      "exits; the scenario's subnet_manager runs it as a daemon that resweeps on traps and port events");
}

}  // namespace
}  // namespace nicsim::sm
