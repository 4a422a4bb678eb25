// The per-node driver instance: binding to the HCA's PCI function,
// loading (identification, capabilities, the event queue, special QPs,
// ports), the HCR command path, doorbells, DMA memory, CPU charging, the
// handle registry and resource pools.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/sim.h"
#include "host/pci.h"
#include "verbs/driver/driver.h"
#include "verbs/driver/mad.h"

namespace nicsim::verbs {

namespace {

constexpr const char* kDriverName = "verbs";

// The driver drives the InfiniHost's PCI function; the node's bus probe
// binds one instance to it, owned by the bus for the node's lifetime.
const bool registered = host::DriverRegistry::instance().add(
    host::Driver{kDriverName,
                 {{hca::reg::kVendorMellanox, hca::reg::kDeviceMt23108}},
                 [](const host::DriverContext& c) -> std::unique_ptr<host::BoundDriver> {
                   return std::make_unique<Device>(c.host, c.bus, c.function);
                 }});

Device* bound_device(const host::Host& h) { return static_cast<Device*>(host::find_bound_driver(h, kDriverName)); }

// A command that does not finish within this much simulated time means the
// HCA is wedged; the driver gives up on it as a real one would.
constexpr Tick kCommandTimeout = 1 * kSec;
// Busy-poll the go bit this many times, then sleep between polls.
constexpr unsigned kBusyPolls = 16;
constexpr Tick kPollSleep = 5 * kUs;
constexpr std::uint32_t kEqEntries = 512;
constexpr std::size_t kQuarantine = 65536;
constexpr std::size_t kMailboxBytes = 4096;

}  // namespace

// ---- pools -----------------------------------------------------------------

bool IdPool::alloc(std::uint32_t& id) {
  // Fresh numbers first, so a number is reused as late as possible.
  if (next_ < limit_) {
    id = next_++;
    return true;
  }
  if (free_.empty()) return false;
  id = *free_.begin();
  free_.erase(free_.begin());
  return true;
}

bool ExtentPool::alloc(std::uint32_t count, std::uint32_t& first) {
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < count) continue;
    first = it->first;
    const std::uint32_t rest = it->second - count;
    free_.erase(it);
    if (rest) free_[first + count] = rest;
    return true;
  }
  return false;
}

void ExtentPool::release(std::uint32_t first, std::uint32_t count) {
  if (!count) return;
  auto [it, _] = free_.emplace(first, count);
  auto next = std::next(it);
  if (next != free_.end() && it->first + it->second == next->first) {
    it->second += next->second;
    free_.erase(next);
  }
  if (it != free_.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      free_.erase(it);
    }
  }
}

// ---- finding the driver -------------------------------------------------------

Device* Device::current() {
  const sc_core::sc_object* process;
  return current(process);
}

Cq* Device::polled_cq_slow(const void* handle, host::Host* h, Device*& dev) {
  dev = of_host(h);
  Cq* cq = dev ? dev->find<Cq>(handle) : nullptr;
  if (cq) last_poll_ = {h, h->serial(), handle, cq, dev};
  return cq;
}

Device* Device::of_host(host::Host* h) {
  Device* d = h ? bound_device(*h) : nullptr;
  return d && d->load_ == LoadState::Ready ? d : nullptr;
}

Device* Device::load_current() {
  host::Host* h = host::Host::current_host();
  if (!h) return nullptr;
  auto* d = static_cast<Device*>(host::bound_driver(*h, kDriverName));
  if (!d) return nullptr;
  if (d->load_ != LoadState::NotYet) {
    // Another thread of this node may be loading the driver right now.
    while (d->load_ == LoadState::Loading) {
      if (!d->loaded_.wait()) return nullptr;
    }
    return d->load_ == LoadState::Ready ? d : nullptr;
  }
  if (h->in_interrupt()) return nullptr;
  d->load_ = LoadState::Loading;
  const bool ok = d->init();
  d->load_ = ok ? LoadState::Ready : LoadState::Failed;
  d->loaded_.notify_all();
  if (ok && ib_register_ca(&d->ci_) != IB_SUCCESS) d->load_ = LoadState::Failed;
  return d->load_ == LoadState::Ready ? d : nullptr;
}

Device* Device::owner_of(const ci_interface_t* ci) {
  host::Host* h = host::Host::current_host();
  Device* d = h ? bound_device(*h) : nullptr;
  return d && (&d->ci_ == ci || &d->agent_ci_ == ci) ? d : nullptr;
}

Device::Device(host::Host& host, host::HostBus& bus, const host::pci::Function& function)
    : callbacks_done(host),
      host_(host),
      bus_(bus),
      bar0_(function.bars[0].base),
      irq_line_(function.irq_line),
      loaded_(host),
      cmd_mutex_(host) {}

Device::~Device() {
  if (last_poll_.dev == this) last_poll_ = {};
  // Node memory belongs to the node and goes with it; only C++ objects here.
  for (auto& [_, o] : live_) delete o;
}

// ---- loading -------------------------------------------------------------------

bool Device::init() {
  using namespace hca;
  auto fail = [&](const std::string& why) {
    Sim::get().error(host_.name(), "verbs driver: " + why);
    return false;
  };
  if (!bar0_) return fail("BAR 0 is not assigned");
  if (irq_line_ == host::pci::kNoLine) return fail("the HCA's interrupt pin is not connected");
  if (!bus_.mmio_read(bar0_ + reg::id_vendor.offset, &vendor_, 4) ||
      !bus_.mmio_read(bar0_ + reg::id_device.offset, &device_id_, 4) ||
      !bus_.mmio_read(bar0_ + reg::id_revision.offset, &revision_, 4) ||
      !bus_.mmio_read(bar0_ + reg::id_node_guid.offset, &guid_, 8))
    return fail("cannot read the HCA identification registers");
  mbox_in_ = alloc_dma(kMailboxBytes);
  mbox_out_ = alloc_dma(kMailboxBytes);
  if (!mbox_in_ || !mbox_out_) return fail("no node memory for command mailboxes");

  std::uint8_t c[caps::kSize] = {};
  CmdResult r = command(Command::QUERY_HCA, 0, nullptr, 0, c, sizeof c);
  if (!r.ok()) return fail(fmt::format("QUERY_HCA failed ({})", cmd_status_name(static_cast<std::uint8_t>(r.status))));
  auto g32 = [&](Field f) { return static_cast<std::uint32_t>(get(c, f)); };
  caps_.max_qp = g32(caps::max_qp);
  caps_.max_qp_wr = g32(caps::max_qp_wr);
  caps_.max_sge = g32(caps::max_sge);
  caps_.max_cq = g32(caps::max_cq);
  caps_.max_cqe = g32(caps::max_cqe);
  caps_.max_mpt = g32(caps::max_mpt);
  caps_.max_mtt = g32(caps::max_mtt);
  caps_.max_pd = g32(caps::max_pd);
  caps_.max_init_rd_atom = g32(caps::max_qp_init_rd_atom);
  caps_.max_resp_rd_atom = g32(caps::max_qp_resp_rd_atom);
  caps_.max_mcg = g32(caps::max_mcg);
  caps_.max_qp_per_mcg = g32(caps::max_qp_per_mcg);
  caps_.max_inline = g32(caps::max_inline);
  caps_.max_eq = g32(caps::max_eq);
  caps_.num_ports = static_cast<std::uint8_t>(get(c, caps::num_ports));
  caps_.max_mtu = static_cast<std::uint8_t>(get(c, caps::max_mtu));
  caps_.local_ack_delay = static_cast<std::uint8_t>(get(c, caps::local_ack_delay));
  caps_.atomic_cap = static_cast<std::uint8_t>(get(c, caps::atomic_cap));
  caps_.page_size_log = static_cast<std::uint8_t>(get(c, caps::page_size_log));
  caps_.node_guid = get(c, caps::node_guid);
  if (caps_.num_ports == 0) return fail("the HCA reports no ports");

  // PD 0 and MPT index 0 stay unused so that a zero key or PD number in a
  // descriptor never matches a real object.
  pdns.reset(1, caps_.max_pd);
  cqns.reset(0, caps_.max_cq);
  mpts.reset(1, caps_.max_mpt);
  mtts.reset(caps_.max_mtt);
  mpt_tags.assign(caps_.max_mpt, 0);

  // Event queue 0 takes every event but COMMAND_DONE: commands are polled.
  eq_entries_ = kEqEntries;
  eq_ring_ = alloc_dma(static_cast<std::size_t>(eq_entries_) * eqe::kSize);
  if (!eq_ring_) return fail("no node memory for the event queue");
  if (!host_.irq().request(irq_line_, "hca_eq0", [this] { eq_interrupt(); }))
    return fail(fmt::format("cannot take interrupt line {}", irq_line_));
  irq_vector_ = irq_line_;
  std::uint8_t eq[eqc::kSize] = {};
  put(eq, eqc::base, reinterpret_cast<std::uint64_t>(eq_ring_));
  put(eq, eqc::entries, eq_entries_);
  put(eq, eqc::irq_vector, static_cast<std::uint32_t>(irq_vector_));
  put(eq, eqc::event_mask, ~(1ULL << static_cast<unsigned>(Event::CommandDone)));
  r = command(Command::SW2HW_EQ, 0, eq, sizeof eq);
  if (!r.ok()) return fail("SW2HW_EQ failed");

  for (std::uint8_t port = 1; port <= caps_.num_ports; ++port) {
    r = command(Command::CONF_SPECIAL_QP, static_cast<std::uint32_t>(port) << 24, nullptr, 0, nullptr, 0,
                special_qpn(port, false), true);
    if (!r.ok()) return fail(fmt::format("CONF_SPECIAL_QP for port {} failed", port));
    r = command(Command::INIT_IB, port);
    if (!r.ok()) return fail(fmt::format("INIT_IB for port {} failed", port));
  }

  // Static facts the CA attribute size depends on.
  std::uint8_t resp[kMadBytes];
  if (smp_get(*this, 1, mad_attr::kNodeInfo, 0, resp) != IB_SUCCESS) return fail("NodeInfo SMP failed");
  caps_.partition_cap = static_cast<std::uint16_t>(be(resp + kSmpData + 28, 2));
  if (caps_.partition_cap == 0) caps_.partition_cap = 1;
  caps_.guid_cap.assign(caps_.num_ports + 1, 1);
  caps_.port_guid.assign(caps_.num_ports + 1, 0);
  for (std::uint8_t port = 1; port <= caps_.num_ports; ++port) {
    if (smp_get(*this, port, mad_attr::kPortInfo, port, resp) != IB_SUCCESS) return fail("PortInfo SMP failed");
    caps_.guid_cap[port] = std::max<std::uint8_t>(1, resp[kSmpData + 50]);
    if (smp_get(*this, port, mad_attr::kGuidInfo, 0, resp) != IB_SUCCESS) return fail("GUIDInfo SMP failed");
    std::memcpy(&caps_.port_guid[port], resp + kSmpData, 8);
  }

  ci_.guid = cl_hton64(guid_);
  ci_.vend_id = vendor_;
  ci_.dev_id = static_cast<std::uint16_t>(device_id_);
  ci_.dev_revision = static_cast<std::uint16_t>(revision_);
  // No user-mode library: libname stays all zeros (seed).
  ci_.version = IB_CI_VERSION;
  ci_.open_ca = open_ca;
  ci_.query_ca = query_ca;
  ci_.modify_ca = modify_ca;
  ci_.close_ca = close_ca;
  ci_.allocate_pd = allocate_pd;
  ci_.deallocate_pd = deallocate_pd;
  ci_.allocate_rdd = allocate_rdd;
  ci_.deallocate_rdd = deallocate_rdd;
  ci_.create_av = create_av;
  ci_.query_av = query_av;
  ci_.modify_av = modify_av;
  ci_.destroy_av = destroy_av;
  ci_.create_qp = create_qp;
  ci_.create_spl_qp = create_spl_qp;
  ci_.modify_qp = modify_qp;
  ci_.query_qp = query_qp;
  ci_.destroy_qp = destroy_qp;
  ci_.create_cq = create_cq;
  ci_.resize_cq = resize_cq;
  ci_.query_cq = query_cq;
  ci_.destroy_cq = destroy_cq;
  ci_.create_eec = create_eec;
  ci_.query_eec = query_eec;
  ci_.modify_eec = modify_eec;
  ci_.destroy_eec = destroy_eec;
  ci_.register_mr = register_mr;
  ci_.register_pmr = register_pmr;
  ci_.query_mr = query_mr;
  ci_.modify_mr = modify_mr;
  ci_.modify_pmr = modify_pmr;
  ci_.register_smr = register_smr;
  ci_.deregister_mr = deregister_mr;
  ci_.create_mw = create_mw;
  ci_.query_mw = query_mw;
  ci_.bind_mw = bind_mw;
  ci_.destroy_mw = destroy_mw;
  ci_.post_send = post_send;
  ci_.post_recv = post_recv;
  ci_.poll_cq = poll_cq;
  ci_.enable_cq_notify = enable_cq_notify;
  ci_.attach_mcast = attach_mcast;
  ci_.detach_mcast = detach_mcast;
  ci_.local_mad = local_mad;
  agent_ci_ = ci_;
  agent_ci_.open_ca = open_ca_agent;
  return true;
}

// ---- hardware access -------------------------------------------------------------

CmdResult Device::command(hca::Command op, std::uint32_t in_mod, const void* in, std::size_t in_bytes, void* out,
                          std::size_t out_bytes, std::uint64_t in_param_override, bool use_override) {
  using namespace hca;
  CmdResult r;
  if (in_bytes > kMailboxBytes || out_bytes > kMailboxBytes) return r;
  // One HCR per HCA: commands are serialised. From interrupt context the
  // lock reports a blocking call and fails, and so does the command.
  if (!cmd_mutex_.lock()) return r;
  if (in_bytes) std::memcpy(mbox_in_, in, in_bytes);
  cpu("verbs_cmd", in_bytes);
  std::uint8_t hcr[reg::hcr_go_opcode.offset] = {};
  put(hcr, reg::hcr_in_param, use_override ? in_param_override : reinterpret_cast<std::uint64_t>(mbox_in_));
  put(hcr, reg::hcr_in_modifier, in_mod);
  put(hcr, reg::hcr_out_param, reinterpret_cast<std::uint64_t>(mbox_out_));
  put(hcr, reg::hcr_token, ++token_);
  const std::uint32_t go = reg::kHcrGo | static_cast<std::uint16_t>(op);
  bool bus_ok = bus_.mmio_write(bar0_ + reg::hcr_in_param.offset, hcr, sizeof hcr) &&
                bus_.mmio_write(bar0_ + reg::hcr_go_opcode.offset, &go, 4);
  std::uint32_t v = reg::kHcrGo;
  const Tick deadline = now() + kCommandTimeout;
  for (unsigned polls = 0; bus_ok; ++polls) {
    if (!bus_.mmio_read(bar0_ + reg::hcr_go_opcode.offset, &v, 4)) {
      bus_ok = false;
      break;
    }
    if (!(v & reg::kHcrGo)) break;
    if (now() > deadline) {
      Sim::get().error(host_.name(),
                       fmt::format("verbs driver: command {} did not complete within {}",
                                   command_name(static_cast<std::uint16_t>(op)), format_time(kCommandTimeout)));
      bus_ok = false;
      break;
    }
    if (polls >= kBusyPolls) host_.sleep(kPollSleep);
  }
  if (bus_ok) {
    r.issued = true;
    r.status = static_cast<CmdStatus>(v >> reg::kHcrStatusShift);
    if (r.status == CmdStatus::OK && out_bytes) std::memcpy(out, mbox_out_, out_bytes);
  }
  cmd_mutex_.unlock();
  return r;
}

void Device::doorbell(hca::Field db, std::uint32_t word0, std::uint32_t word1) {
  const std::uint32_t w[2] = {word0, word1};
  bus_.mmio_write(bar0_ + db.offset, w, sizeof w);
}

std::uint8_t* Device::alloc_dma(std::size_t bytes, std::size_t align) {
  return static_cast<std::uint8_t*>(host_.memory().alloc(bytes, align));
}

void Device::free_dma(void* p) {
  if (p) host_.memory().free(p);
}

Object* Device::find_object(const void* handle, ObjType type) {
  if (!handle) return nullptr;
  auto it = live_.find(handle);
  if (it == live_.end() || it->second->type != type) return nullptr;
  return it->second;
}

void Device::kill(Object* o) {
  if (last_poll_.cq == o) last_poll_ = {};
  live_.erase(o->handle_key);
  quarantine_.emplace_back(o);
  if (quarantine_.size() > kQuarantine) quarantine_.pop_front();
}

std::uint32_t Device::new_key(std::uint32_t index) {
  // A new tag on every use of the index: a key of an earlier region or
  // binding never matches the new one.
  const std::uint8_t tag = ++mpt_tags.at(index);
  return (index << 8) | tag;
}

bool Device::alloc_qpn(std::uint32_t& qpn) {
  // Cyclic, so a QPN is reused as late as possible: completions of a
  // destroyed QP still in a CQ must not be taken for a new QP's.
  const std::uint32_t limit = std::min<std::uint32_t>(caps_.max_qp, hca::kMaxQpn + 1);
  if (limit <= kFirstQpn) return false;
  const std::uint32_t span = limit - kFirstQpn;
  if (used_qpns_.size() >= span) return false;
  for (std::uint32_t i = 0; i < span; ++i) {
    const std::uint32_t n = qpn_cursor_;
    qpn_cursor_ = qpn_cursor_ + 1 >= limit ? kFirstQpn : qpn_cursor_ + 1;
    if (used_qpns_.insert(n).second) {
      qpn = n;
      return true;
    }
  }
  return false;
}

// ---- conversions -----------------------------------------------------------------------

ib_api_status_t status_of(const CmdResult& r) {
  using S = hca::CmdStatus;
  if (!r.issued) return IB_ERROR;
  static constexpr struct {
    S hw;
    ib_api_status_t ib;
  } kMap[] = {
      {S::OK, IB_SUCCESS},
      {S::BAD_OP, IB_ERROR},
      {S::BAD_PARAM, IB_INVALID_PARAMETER},
      {S::BAD_SYS_STATE, IB_INVALID_STATE},
      {S::BAD_RESOURCE, IB_INSUFFICIENT_RESOURCES},
      {S::RESOURCE_BUSY, IB_RESOURCE_BUSY},
      {S::EXCEED_LIM, IB_INSUFFICIENT_RESOURCES},
      {S::BAD_QP_STATE, IB_INVALID_QP_STATE},
      {S::BAD_INDEX, IB_INVALID_PARAMETER},
      {S::BAD_MAILBOX, IB_INSUFFICIENT_MEMORY},
  };
  for (const auto& m : kMap)
    if (m.hw == r.status) return m.ib;
  return IB_ERROR;
}

std::uint32_t mpt_access(ib_access_t a) {
  static constexpr struct {
    ib_access_t ib;
    std::uint32_t hw;
  } kMap[] = {
      {IB_AC_LOCAL_WRITE, hca::mpt::kLocalWrite}, {IB_AC_RDMA_READ, hca::mpt::kRemoteRead},
      {IB_AC_RDMA_WRITE, hca::mpt::kRemoteWrite}, {IB_AC_ATOMIC, hca::mpt::kRemoteAtomic},
      {IB_AC_MW_BIND, hca::mpt::kMwBind},
  };
  std::uint32_t f = 0;
  for (const auto& m : kMap)
    if (a & m.ib) f |= m.hw;
  return f;
}

namespace {
constexpr struct {
  ib_qp_state_t ib;
  hca::QpState hw;
} kStates[] = {
    {IB_QPS_RESET, hca::QpState::Reset}, {IB_QPS_INIT, hca::QpState::Init}, {IB_QPS_RTR, hca::QpState::Rtr},
    {IB_QPS_RTS, hca::QpState::Rts},     {IB_QPS_SQD, hca::QpState::Sqd},   {IB_QPS_SQERR, hca::QpState::Sqe},
    {IB_QPS_ERROR, hca::QpState::Error},
};
}  // namespace

hca::QpState hw_state(ib_qp_state_t s, bool& ok) {
  for (const auto& m : kStates)
    if (m.ib == s) {
      ok = true;
      return m.hw;
    }
  ok = false;
  return hca::QpState::Reset;
}

ib_qp_state_t ib_state(hca::QpState s) {
  for (const auto& m : kStates)
    if (m.hw == s) return m.ib;
  return IB_QPS_ERROR;
}

std::uint32_t next_pow2(std::uint32_t v) {
  std::uint32_t p = 1;
  while (p < v && p < 0x80000000u) p <<= 1;
  return p;
}

unsigned log2_of(std::uint32_t pow2) {
  unsigned l = 0;
  while ((1u << l) < pow2) ++l;
  return l;
}

}  // namespace nicsim::verbs
