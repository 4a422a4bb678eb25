// CA access (open, query, modify, close), protection domains, the reliable
// datagram verbs (unsupported), address vectors and local MADs.
#include <cstring>
#include <iterator>

#include "verbs/driver/driver.h"
#include "verbs/driver/mad.h"

namespace nicsim::verbs {

namespace {

// PortInfo:CapabilityMask bits (IBA 14.2.5.6), the ib_port_cap_t field for
// each and the ci_modify_ca bit that sets it.
struct CapBit {
  ib_ca_mod_t mod;
  boolean_t ib_port_cap_t::*field;
  std::uint32_t bit;
};
constexpr CapBit kCapBits[] = {
    {IB_CA_MOD_IS_SM, &ib_port_cap_t::sm, 1u << 1},
    {IB_CA_MOD_IS_NOTICE_SUPPORTED, &ib_port_cap_t::notice, 1u << 2},
    {IB_CA_MOD_IS_TRAP_SUPPORTED, &ib_port_cap_t::trap, 1u << 3},
    {IB_CA_MOD_IS_APM_SUPPORTED, &ib_port_cap_t::apm, 1u << 5},
    {IB_CA_MOD_IS_SLMAP_SUPPORTED, &ib_port_cap_t::slmap, 1u << 6},
    {IB_CA_MOD_IS_MKEY_NVRAM_SUPPORTED, &ib_port_cap_t::mkey_nvram, 1u << 7},
    {IB_CA_MOD_IS_PKEY_NVRAM_SUPPORTED, &ib_port_cap_t::pkey_nvram, 1u << 8},
    {IB_CA_MOD_IS_LEDINFO_SUPPORTED, &ib_port_cap_t::ledinfo, 1u << 9},
    {IB_CA_MOD_IS_SM_DISABLED, &ib_port_cap_t::sm_disable, 1u << 10},
    {IB_CA_MOD_IS_SYSGUID_SUPPORTED, &ib_port_cap_t::sysguid, 1u << 11},
    {IB_CA_MOD_IS_CM_SUPPORTED, &ib_port_cap_t::cm, 1u << 16},
    {IB_CA_MOD_IS_SNMP_SUPPORTED, &ib_port_cap_t::snmp, 1u << 17},
    {IB_CA_MOD_IS_REINIT_SUPORTED, &ib_port_cap_t::reinit, 1u << 18},
    {IB_CA_MOD_IS_DEV_MGMT_SUPPORTED, &ib_port_cap_t::dev_mgmt, 1u << 19},
    {IB_CA_MOD_IS_VEND_SUPPORTED, &ib_port_cap_t::vend, 1u << 20},
    {IB_CA_MOD_IS_DR_NOTICE_SUPPORTED, &ib_port_cap_t::dr_notice, 1u << 21},
    {IB_CA_MOD_IS_CAPM_NOTICE_SUPPORTED, &ib_port_cap_t::capm_notice, 1u << 22},
    {IB_CA_MOD_IS_BOOT_MGMT_SUPPORTED, &ib_port_cap_t::boot_mgmt, 1u << 23},
};

// PortInfo:VLCap code -> number of data VLs.
constexpr std::uint16_t kVlCount[] = {0, 1, 2, 4, 8, 15};

constexpr std::size_t align8(std::size_t n) { return (n + 7) & ~std::size_t{7}; }

std::size_t ca_attr_size(const Caps& c) {
  std::size_t n =
      align8(sizeof(ib_ca_attr_t)) + align8(sizeof(std::uint32_t)) + align8(sizeof(ib_port_attr_t) * c.num_ports);
  for (std::uint8_t p = 1; p <= c.num_ports; ++p)
    n += align8(sizeof(ib_gid_t) * c.guid_cap[p]) + align8(sizeof(ib_net16_t) * c.partition_cap);
  return n;
}

bool valid_port(const Device& d, std::uint8_t port) { return port >= 1 && port <= d.caps().num_ports; }

// Fills one port's attributes and tables with SMPs to the local SMA.
ib_api_status_t query_port(Device& d, std::uint8_t port, ib_port_attr_t& pa) {
  std::uint8_t r[kMadBytes];
  if (smp_get(d, port, mad_attr::kPortInfo, port, r) != IB_SUCCESS) return IB_ERROR;
  const std::uint8_t* pi = r + kSmpData;
  pa.port_num = port;
  pa.mtu = pi[41] & 0x0f;        // InitTypeReply | MTUCap (IBA 14.2.5.6)
  pa.max_msg_size = 1ULL << 31;  // IBA: 2^31 bytes
  std::memcpy(&pa.lid, pi + 16, 2);
  pa.lmc = pi[34] & 7;
  pa.link_width_supported = pi[30];
  const unsigned vlcap = pi[37] >> 4;
  pa.max_vls = vlcap < std::size(kVlCount) ? kVlCount[vlcap] : 0;
  std::memcpy(&pa.sm_lid, pi + 18, 2);
  pa.sm_sl = pi[36] & 0x0f;
  pa.link_state = pi[32] & 0x0f;
  pa.init_type_reply = pi[41] >> 4;
  pa.subnet_timeout = pi[51] & 0x1f;
  const auto capmask = static_cast<std::uint32_t>(be(pi + 20, 4));
  for (const CapBit& b : kCapBits) pa.cap.*b.field = (capmask & b.bit) ? TRUE : FALSE;
  pa.cap.port_active = pa.link_state == IB_LINK_ACTIVE;
  pa.pkey_ctr = static_cast<std::uint16_t>(be(pi + 46, 2));
  pa.qkey_ctr = static_cast<std::uint16_t>(be(pi + 48, 2));
  std::uint8_t prefix[8];
  std::memcpy(prefix, pi + 8, 8);
  // GUIDInfo: 8 GUIDs per block; GIDs are the subnet prefix + each GUID.
  for (std::uint16_t i = 0; i < pa.num_gids; i += 8) {
    if (smp_get(d, port, mad_attr::kGuidInfo, i / 8u, r) != IB_SUCCESS) return IB_ERROR;
    for (std::uint16_t j = i; j < pa.num_gids && j < i + 8; ++j) {
      std::memcpy(pa.p_gid_table[j].raw, prefix, 8);
      std::memcpy(pa.p_gid_table[j].raw + 8, r + kSmpData + 8 * (j - i), 8);
    }
  }
  std::memcpy(&pa.port_guid, pa.p_gid_table[0].raw + 8, 8);
  // P_KeyTable: 32 P_Keys per block.
  for (std::uint16_t i = 0; i < pa.num_pkeys; i += 32) {
    if (smp_get(d, port, mad_attr::kPkeyTable, i / 32u, r) != IB_SUCCESS) return IB_ERROR;
    for (std::uint16_t j = i; j < pa.num_pkeys && j < i + 32; ++j)
      std::memcpy(&pa.p_pkey_table[j], r + kSmpData + 2 * (j - i), 2);
  }
  return IB_SUCCESS;
}

}  // namespace

ib_api_status_t smp_get(Device& dev, std::uint8_t port, std::uint16_t attr, std::uint32_t modifier,
                        std::uint8_t* resp) {
  std::uint8_t m[kMadBytes] = {};
  m[0] = 1;     // BaseVersion
  m[1] = 0x01;  // MgmtClass: LID-routed SMP
  m[2] = 1;     // ClassVersion
  m[3] = 0x01;  // Method: Get
  m[16] = static_cast<std::uint8_t>(attr >> 8);
  m[17] = static_cast<std::uint8_t>(attr);
  for (int i = 0; i < 4; ++i) m[20 + i] = static_cast<std::uint8_t>(modifier >> (24 - 8 * i));
  const CmdResult r = dev.command(hca::Command::MAD_IFC, port, m, kMadBytes, resp, kMadBytes);
  if (!r.ok()) return status_of(r);
  return (be(resp + 4, 2) & 0x7fff) == 0 ? IB_SUCCESS : IB_ERROR;
}

// ---- CA access ---------------------------------------------------------------

ib_api_status_t open_ca(const ib_net64_t ca_guid, const ci_completion_cb_t pfn_completion_cb,
                        const ci_async_event_cb_t pfn_async_event_cb, const void* const ca_context,
                        ib_ca_handle_t* ph_ca) {
  NICSIM_API_CALL_NAMED("ci_open_ca");
  if (!ca_guid || !pfn_completion_cb || !pfn_async_event_cb || !ph_ca) return IB_INVALID_PARAMETER;
  Device* d = Device::current();
  if (!d || d->ci().guid != ca_guid) return IB_NOT_FOUND;
  if (d->open_instance()) return IB_RESOURCE_BUSY;
  d->cpu("verbs_open_ca");
  Ca* ca = d->make<Ca>();
  ca->completion_cb = pfn_completion_cb;
  ca->async_cb = pfn_async_event_cb;
  ca->context = ca_context;
  d->set_open_instance(ca);
  *ph_ca = ca->handle();
  return IB_SUCCESS;
}

// open_ca of nicsim_sm_ci_interface(): the subnet manager's instance, one
// per CA like the consumer's, independent of it.
ib_api_status_t open_ca_agent(const ib_net64_t ca_guid, const ci_completion_cb_t pfn_completion_cb,
                              const ci_async_event_cb_t pfn_async_event_cb, const void* const ca_context,
                              ib_ca_handle_t* ph_ca) {
  if (!ca_guid || !pfn_completion_cb || !pfn_async_event_cb || !ph_ca) return IB_INVALID_PARAMETER;
  Device* d = Device::current();
  if (!d || d->ci().guid != ca_guid) return IB_NOT_FOUND;
  if (d->agent_instance()) return IB_RESOURCE_BUSY;
  d->cpu("verbs_open_ca");
  Ca* ca = d->make<Ca>();
  ca->completion_cb = pfn_completion_cb;
  ca->async_cb = pfn_async_event_cb;
  ca->context = ca_context;
  d->set_agent_instance(ca);
  *ph_ca = ca->handle();
  return IB_SUCCESS;
}

Ca* Device::instance_of(const Pd* pd) const { return pd && pd->ca ? pd->ca : ca_; }

ib_api_status_t query_ca(const ib_ca_handle_t h_ca, ib_ca_attr_t* p_ca_attr, size_t* p_size, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_query_ca");
  Ca* ca = lookup<Ca>(h_ca);
  if (!ca) return IB_INVALID_CA_HANDLE;
  if (!p_size) return IB_INVALID_PARAMETER;
  Device& d = *ca->dev;
  const Caps& c = d.caps();
  const std::size_t need = ca_attr_size(c);
  if (!p_ca_attr || *p_size < need) {
    *p_size = need;
    return IB_INSUFFICIENT_MEMORY;
  }
  d.cpu("verbs_query_ca");
  std::uint8_t hw[hca::caps::kSize];
  CmdResult r = d.command(hca::Command::QUERY_HCA, 0, nullptr, 0, hw, sizeof hw);
  if (!r.ok()) return status_of(r);
  std::uint8_t ni[kMadBytes];
  if (smp_get(d, 1, mad_attr::kNodeInfo, 0, ni) != IB_SUCCESS) return IB_ERROR;

  // Build in a scratch copy so that nothing partial reaches the caller.
  std::vector<std::uint8_t> buf(need, 0);
  auto* a = reinterpret_cast<ib_ca_attr_t*>(buf.data());
  std::size_t off = align8(sizeof(ib_ca_attr_t));
  auto* page_sizes = reinterpret_cast<std::uint32_t*>(buf.data() + off);
  off += align8(sizeof(std::uint32_t));
  auto* ports = reinterpret_cast<ib_port_attr_t*>(buf.data() + off);
  off += align8(sizeof(ib_port_attr_t) * c.num_ports);
  auto g32 = [&](hca::Field f) { return static_cast<std::uint32_t>(hca::get(hw, f)); };
  a->ca_guid = cl_hton64(hca::get(hw, hca::caps::node_guid));
  a->vend_id = d.ci().vend_id;
  a->dev_id = d.ci().dev_id;
  a->revision = d.ci().dev_revision;
  a->fw_ver = 0;  // the HCA does not report a firmware version
  a->size = static_cast<std::uint32_t>(need);
  a->max_qps = g32(hca::caps::max_qp);
  a->max_wrs = g32(hca::caps::max_qp_wr);
  a->max_sges = g32(hca::caps::max_sge);
  a->max_rd_sges = 0;  // no reliable datagram service
  a->max_cqs = g32(hca::caps::max_cq);
  a->max_cqes = g32(hca::caps::max_cqe);
  a->max_pds = g32(hca::caps::max_pd);
  a->init_regions = g32(hca::caps::max_mpt);
  a->init_region_size = static_cast<std::uint64_t>(g32(hca::caps::max_mtt)) << c.page_size_log;
  a->init_windows = g32(hca::caps::max_mpt);  // regions and windows share the MPT
  a->max_addr_handles = Device::kMaxAvs;
  a->max_partitions = c.partition_cap;
  const auto atomic = static_cast<std::uint8_t>(hca::get(hw, hca::caps::atomic_cap));
  a->atomicity = atomic == 0 ? IB_ATOMIC_NONE : atomic == 1 ? IB_ATOMIC_LOCAL : IB_ATOMIC_GLOBAL;
  a->max_qp_resp_res = static_cast<std::uint8_t>(g32(hca::caps::max_qp_resp_rd_atom));
  a->max_resp_res = a->max_qp_resp_res;
  a->max_qp_init_depth = static_cast<std::uint8_t>(g32(hca::caps::max_qp_init_rd_atom));
  // InfiniHost had no reliable datagram: no EE contexts, no RDDs.
  a->max_eec_resp_res = 0;
  a->max_eec_init_depth = 0;
  a->max_eecs = 0;
  a->max_rdds = 0;
  a->max_ipv6_qps = 0;
  a->max_ether_qps = 0;
  a->max_mcast_grps = g32(hca::caps::max_mcg);
  a->max_qps_per_mcast_grp = g32(hca::caps::max_qp_per_mcg);
  a->max_mcast_qps = a->max_mcast_grps * a->max_qps_per_mcast_grp;
  a->max_fmr = 0;
  a->max_map_per_fmr = 0;
  a->local_ack_delay = static_cast<std::uint8_t>(hca::get(hw, hca::caps::local_ack_delay));
  a->bad_pkey_ctr_support = TRUE;
  a->bad_qkey_ctr_support = TRUE;
  a->raw_mcast_support = FALSE;
  a->apm_support = FALSE;
  a->av_port_check = FALSE;
  a->change_primary_port = FALSE;
  a->modify_wr_depth = FALSE;
  a->current_qp_state_support = TRUE;
  a->shutdown_port_capability = TRUE;
  a->init_type_support = FALSE;
  a->port_active_event_support = TRUE;
  a->system_image_guid_support = TRUE;
  a->hw_agents = TRUE;  // the HCA answers SMPs itself
  std::memcpy(&a->system_image_guid, ni + kSmpData + 4, 8);
  a->num_page_sizes = 1;
  page_sizes[0] = 1u << c.page_size_log;
  a->num_ports = c.num_ports;
  for (std::uint8_t p = 1; p <= c.num_ports; ++p) {
    ib_port_attr_t& pa = ports[p - 1];
    pa.num_gids = c.guid_cap[p];
    pa.num_pkeys = c.partition_cap;
    pa.p_gid_table = reinterpret_cast<ib_gid_t*>(buf.data() + off);
    off += align8(sizeof(ib_gid_t) * pa.num_gids);
    pa.p_pkey_table = reinterpret_cast<ib_net16_t*>(buf.data() + off);
    off += align8(sizeof(ib_net16_t) * pa.num_pkeys);
    if (ib_api_status_t s = query_port(d, p, pa); s != IB_SUCCESS) return s;
  }
  // Relocate the internal pointers to the caller's buffer and copy.
  auto* base = reinterpret_cast<std::uint8_t*>(p_ca_attr);
  auto relocate = [&](auto* p) {
    return reinterpret_cast<decltype(p)>(base + (reinterpret_cast<std::uint8_t*>(p) - buf.data()));
  };
  for (std::uint8_t p = 0; p < c.num_ports; ++p) {
    ports[p].p_gid_table = relocate(ports[p].p_gid_table);
    ports[p].p_pkey_table = relocate(ports[p].p_pkey_table);
  }
  a->p_page_size = relocate(page_sizes);
  a->p_port_attr = relocate(ports);
  std::memcpy(base, buf.data(), need);
  *p_size = need;
  return IB_SUCCESS;
}

ib_api_status_t modify_ca(const ib_ca_handle_t h_ca, const uint8_t port_num, const ib_ca_mod_t ca_mod,
                          const ib_port_attr_mod_t* p_port_attr_mod) {
  NICSIM_API_CALL_NAMED("ci_modify_ca");
  Ca* ca = lookup<Ca>(h_ca);
  if (!ca) return IB_INVALID_CA_HANDLE;
  Device& d = *ca->dev;
  if (!valid_port(d, port_num)) return IB_INVALID_PORT;
  ib_ca_mod_t known = IB_CA_MOD_QKEY_CTR | IB_CA_MOD_PKEY_CTR | IB_CA_MOD_SHUTDOWN_PORT | IB_CA_MOD_INIT_TYPE_VALUE |
                      IB_CA_MOD_SYSTEM_IMAGE_GUID;
  ib_ca_mod_t cap_mods = 0;
  for (const CapBit& b : kCapBits) cap_mods |= b.mod;
  known |= cap_mods;
  if (!ca_mod || (ca_mod & ~known)) return IB_INVALID_PARAMETER;
  // The HCA keeps neither an InitType nor a settable SystemImageGUID.
  if (ca_mod & (IB_CA_MOD_INIT_TYPE_VALUE | IB_CA_MOD_SYSTEM_IMAGE_GUID)) return IB_UNSUPPORTED;
  if ((ca_mod & cap_mods) && !p_port_attr_mod) return IB_INVALID_PARAMETER;
  d.cpu("verbs_modify_ca");
  std::uint8_t ps[hca::portset::kSize] = {};
  std::uint32_t set = 0, clear = 0;
  for (const CapBit& b : kCapBits) {
    if (!(ca_mod & b.mod)) continue;
    (p_port_attr_mod->cap.*b.field ? set : clear) |= b.bit;
  }
  hca::put(ps, hca::portset::cap_mask_set, set);
  hca::put(ps, hca::portset::cap_mask_clear, clear);
  hca::put(ps, hca::portset::reset_qkey_violations, (ca_mod & IB_CA_MOD_QKEY_CTR) ? 1 : 0);
  hca::put(ps, hca::portset::reset_pkey_violations, (ca_mod & IB_CA_MOD_PKEY_CTR) ? 1 : 0);
  if (ca_mod & ~IB_CA_MOD_SHUTDOWN_PORT) {
    CmdResult r = d.command(hca::Command::SET_IB, port_num, ps, sizeof ps);
    if (!r.ok()) return status_of(r);
  }
  if (ca_mod & IB_CA_MOD_SHUTDOWN_PORT) {
    CmdResult r = d.command(hca::Command::CLOSE_IB, port_num);
    // Already closed is not an error for the consumer: the port is down.
    if (!r.ok() && !(r.issued && r.status == hca::CmdStatus::BAD_SYS_STATE)) return status_of(r);
  }
  return IB_SUCCESS;
}

ib_api_status_t close_ca(ib_ca_handle_t h_ca) {
  NICSIM_API_CALL_NAMED("ci_close_ca");
  Ca* ca = lookup<Ca>(h_ca);
  if (!ca) return IB_INVALID_CA_HANDLE;
  Device& d = *ca->dev;
  // The seed forbids this from a CI callback: there it would wait for
  // itself. The host reports the blocking call with its call site.
  if (!d.host().may_block("ci_close_ca", std::source_location::current())) return IB_RESOURCE_BUSY;
  if (!(ca = lookup_charged<Ca>(h_ca, "verbs_close_ca"))) return IB_INVALID_CA_HANDLE;
  if (ca->pds) return IB_RESOURCE_BUSY;
  while (d.callbacks_running) d.callbacks_done.wait();
  if (d.agent_instance() == ca)
    d.set_agent_instance(nullptr);
  else
    d.set_open_instance(nullptr);
  d.kill(ca);
  return IB_SUCCESS;
}

// ---- protection domains ------------------------------------------------------------

ib_api_status_t allocate_pd(const ib_ca_handle_t h_ca, ib_pd_handle_t* ph_pd, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_allocate_pd");
  Ca* ca = lookup<Ca>(h_ca);
  if (!ca) return IB_INVALID_CA_HANDLE;
  if (!ph_pd) return IB_INVALID_PARAMETER;
  Device& d = *ca->dev;
  std::uint32_t pdn;
  if (!d.pdns.alloc(pdn)) return IB_INSUFFICIENT_RESOURCES;
  d.cpu("verbs_pd");
  Pd* pd = d.make<Pd>();
  pd->ca = ca;
  pd->pdn = pdn;
  ++ca->pds;
  *ph_pd = pd->handle();
  return IB_SUCCESS;
}

ib_api_status_t deallocate_pd(ib_pd_handle_t h_pd, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_deallocate_pd");
  Pd* pd = lookup_charged<Pd>(h_pd, "verbs_pd");
  if (!pd) return IB_INVALID_PD_HANDLE;
  if (pd->users) return IB_RESOURCE_BUSY;
  Device& d = *pd->dev;
  --pd->ca->pds;
  d.pdns.release(pd->pdn);
  d.kill(pd);
  return IB_SUCCESS;
}

// ---- reliable datagram: not on this HCA ------------------------------------------------
// InfiniHost had no RD service, and query_ca says so (max_rdds = max_eecs =
// 0). No RDD or EE context can ever exist: allocate_rdd, the verb that would
// make the first one, answers IB_UNSUPPORTED; every verb that takes an RDD
// or EEC handle answers the seed's invalid-handle code for it, as the
// seed's note on ci_deallocate_rdd asks ("If the CA does not support RD
// service, this routine shall return INVALID_RDD_HANDLE, instead of the
// IB_UNSUPPORTED return value"). The handle is checked before the other
// arguments, as in every other verb.

ib_api_status_t allocate_rdd(const ib_ca_handle_t h_ca, ib_rdd_handle_t*, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_allocate_rdd");
  return lookup<Ca>(h_ca) ? IB_UNSUPPORTED : IB_INVALID_CA_HANDLE;
}

ib_api_status_t deallocate_rdd(ib_rdd_handle_t, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_deallocate_rdd");
  return IB_INVALID_RDD_HANDLE;
}

ib_api_status_t create_eec(const ib_rdd_handle_t, const void*, ib_eec_attr_t*, ib_eec_handle_t*, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_create_eec");
  return IB_INVALID_RDD_HANDLE;
}

ib_api_status_t query_eec(const ib_eec_handle_t, ib_eec_attr_t*, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_query_eec");
  return IB_INVALID_EEC_HANDLE;
}

ib_api_status_t modify_eec(const ib_eec_handle_t, const ib_eec_mod_t*, ib_eec_attr_t*, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_modify_eec");
  return IB_INVALID_EEC_HANDLE;
}

ib_api_status_t destroy_eec(const ib_eec_handle_t, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_destroy_eec");
  return IB_INVALID_EEC_HANDLE;
}

// ---- address vectors (driver memory; copied into each UD WQE) ------------------------------

ib_api_status_t create_av(const ib_pd_handle_t h_pd, const ib_av_attr_t* p_av_attr, ib_av_handle_t* ph_av,
                          ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_create_av");
  Pd* pd = lookup<Pd>(h_pd);
  if (!pd) return IB_INVALID_PD_HANDLE;
  if (!p_av_attr || !ph_av) return IB_INVALID_PARAMETER;
  Device& d = *pd->dev;
  if (!valid_port(d, p_av_attr->port_num)) return IB_INVALID_PORT;
  if (d.avs >= Device::kMaxAvs) return IB_INSUFFICIENT_RESOURCES;
  d.cpu("verbs_av");
  Av* av = d.make<Av>();
  av->pd = pd;
  av->attr = *p_av_attr;
  ++pd->users;
  ++d.avs;
  *ph_av = av->handle();
  return IB_SUCCESS;
}

ib_api_status_t query_av(const ib_av_handle_t h_av, ib_av_attr_t* p_av_attr, ib_pd_handle_t* ph_pd, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_query_av");
  Av* av = lookup_charged<Av>(h_av, "verbs_av");
  if (!av) return IB_INVALID_AV_HANDLE;
  if (!p_av_attr || !ph_pd) return IB_INVALID_PARAMETER;
  *p_av_attr = av->attr;
  *ph_pd = av->pd->handle();
  return IB_SUCCESS;
}

ib_api_status_t modify_av(const ib_av_handle_t h_av, const ib_av_attr_t* p_av_attr, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_modify_av");
  Av* av = lookup_charged<Av>(h_av, "verbs_av");
  if (!av) return IB_INVALID_AV_HANDLE;
  if (!p_av_attr) return IB_INVALID_PARAMETER;
  if (!valid_port(*av->dev, p_av_attr->port_num)) return IB_INVALID_PORT;
  av->attr = *p_av_attr;
  return IB_SUCCESS;
}

ib_api_status_t destroy_av(const ib_av_handle_t h_av, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_destroy_av");
  Av* av = lookup_charged<Av>(h_av, "verbs_av");
  if (!av) return IB_INVALID_AV_HANDLE;
  Device& d = *av->dev;
  --av->pd->users;
  --d.avs;
  d.kill(av);
  return IB_SUCCESS;
}

// ---- local MADs ------------------------------------------------------------------------------

ib_api_status_t local_mad(const ib_ca_handle_t h_ca, const uint8_t port_num, const void* p_mad_in, void* p_mad_out) {
  NICSIM_API_CALL_NAMED("ci_local_mad");
  Ca* ca = lookup<Ca>(h_ca);
  if (!ca) return IB_INVALID_CA_HANDLE;
  Device& d = *ca->dev;
  if (!valid_port(d, port_num)) return IB_INVALID_PORT;
  if (!p_mad_in || !p_mad_out) return IB_INVALID_PARAMETER;
  d.cpu("verbs_local_mad", kMadBytes);
  std::uint8_t out[kMadBytes];
  const CmdResult r = d.command(hca::Command::MAD_IFC, port_num, p_mad_in, kMadBytes, out, sizeof out);
  if (!r.ok()) return status_of(r);
  std::memcpy(p_mad_out, out, kMadBytes);
  return IB_SUCCESS;
}

}  // namespace nicsim::verbs
