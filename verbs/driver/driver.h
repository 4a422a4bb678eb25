// The verbs driver for the nicsim HCA: the objects behind every handle the
// ci_interface_t verbs return, and the per-node Device that owns them and
// talks to the HCA model through the host bus only (hca_model/hca_regs.h).
//
// Handles are pointers to driver objects (Object and its subclasses). A
// handle is never dereferenced before it is found in its node's registry of
// live objects with the expected type tag, so NULL, stale (destroyed),
// wrong-type and other-node handles are all rejected with the seed's
// status. Destroyed objects are kept in a bounded quarantine instead of
// being freed at once, so a new object does not reappear at the address of
// a recently destroyed one and revive a stale handle.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "host/api_call.h"
#include "hca_model/hca_regs.h"
#include "host/bus.h"
#include "host/host.h"
#include "host/pci.h"
#include "iba/ib_ci.h"

struct _ib_ca {};
struct _ib_pd {};
struct _ib_av {};
struct _ib_cq {};
struct _ib_qp {};
struct _ib_mr {};
struct _ib_mw {};
struct _ib_mcast {};

namespace nicsim::verbs {

class Device;

enum class ObjType : std::uint8_t { Ca, Pd, Av, Cq, Qp, Mr, Mw, Mcast };

struct Object {
  Object(ObjType t, Device& d) : type(t), dev(&d) {}
  virtual ~Object() = default;
  ObjType type;
  Device* dev;                       // the node's driver instance that owns the object
  const void* handle_key = nullptr;  // the handle value consumers hold
};

// One open instance of the CA (ci_open_ca).
struct Ca : Object, _ib_ca {
  static constexpr ObjType kType = ObjType::Ca;
  using HandleBase = _ib_ca;
  HandleBase* handle() { return this; }
  explicit Ca(Device& d) : Object(kType, d) {}
  ci_completion_cb_t completion_cb = nullptr;
  ci_async_event_cb_t async_cb = nullptr;
  const void* context = nullptr;
  std::uint32_t pds = 0;  // live protection domains
};

struct Pd : Object, _ib_pd {
  static constexpr ObjType kType = ObjType::Pd;
  using HandleBase = _ib_pd;
  HandleBase* handle() { return this; }
  explicit Pd(Device& d) : Object(kType, d) {}
  Ca* ca = nullptr;
  std::uint32_t pdn = 0;
  std::uint32_t users = 0;  // AVs, CQs, QPs, MRs and MWs in this PD
};

struct Av : Object, _ib_av {
  static constexpr ObjType kType = ObjType::Av;
  using HandleBase = _ib_av;
  HandleBase* handle() { return this; }
  explicit Av(Device& d) : Object(kType, d) {}
  Pd* pd = nullptr;
  ib_av_attr_t attr{};
};

struct Cq : Object, _ib_cq {
  static constexpr ObjType kType = ObjType::Cq;
  using HandleBase = _ib_cq;
  HandleBase* handle() { return this; }
  explicit Cq(Device& d) : Object(kType, d) {}
  Pd* pd = nullptr;
  const void* context = nullptr;
  std::uint32_t cqn = 0;
  std::uint8_t* ring = nullptr;
  std::uint32_t entries = 0;   // ring entries, a power of two
  std::uint32_t consumer = 0;  // CQEs taken, modulo 2^32
  std::uint32_t reported = 0;  // consumer count the HCA was last told
  // Entry `consumer` of the ring and the owner value it has once it is the
  // consumer's (cq.cc): kept with ring, entries and consumer, so an empty
  // poll reads one byte and compares.
  const std::uint8_t* next_cqe = nullptr;
  std::uint8_t next_owner = 0;
  std::uint32_t qps = 0;  // QPs using this CQ
  bool resizing = false;
};

// One work queue ring in node memory and the driver's view of it.
struct WorkQueue {
  std::uint8_t* ring = nullptr;
  std::uint32_t entries = 0;  // ring slots, a power of two
  std::uint8_t stride_log = 0;
  std::uint32_t depth = 0;  // outstanding WRs the consumer asked for
  std::uint32_t max_sge = 0;
  std::uint32_t head = 0;              // WQEs posted
  std::uint32_t tail = 0;              // WQEs retired by completions polled
  std::vector<std::uint8_t> signaled;  // per slot (send queue only)
  std::vector<std::uint64_t> wr_ids;   // per slot (send queue only)
  std::uint8_t* slot(std::uint32_t count) const {
    return ring + (static_cast<std::size_t>(count & (entries - 1)) << stride_log);
  }
  std::uint32_t outstanding() const { return head - tail; }
};

struct Qp : Object, _ib_qp {
  static constexpr ObjType kType = ObjType::Qp;
  using HandleBase = _ib_qp;
  HandleBase* handle() { return this; }
  explicit Qp(Device& d) : Object(kType, d) {}
  Pd* pd = nullptr;
  Cq* send_cq = nullptr;
  Cq* recv_cq = nullptr;
  const void* context = nullptr;
  ib_qp_type_t type = IB_QPT_RELIABLE_CONN;
  hca::QpType hw_type = hca::QpType::Rc;
  std::uint32_t qpn = 0;       // the HCA's QP number
  std::uint32_t wire_qpn = 0;  // what consumers see (0/1 for special QPs)
  std::uint8_t special_port = 0;
  bool sq_signaled = false;
  WorkQueue sq, rq;
  hca::QpState state = hca::QpState::Reset;
  bool has_context = false;  // the HCA has seen a RESET->INIT for it
  std::uint32_t mcasts = 0;  // multicast attachments
  // Attributes as last set, for ib_qp_attr_t.
  ib_access_t access = 0;
  std::uint16_t pkey_index = 0;
  std::uint32_t qkey = 0, dest_qpn = 0, sq_psn = 0, rq_psn = 0;
  std::uint8_t port = 1, init_depth = 0, resp_res = 0;
  ib_av_attr_t av{};
};

struct Mr : Object, _ib_mr {
  static constexpr ObjType kType = ObjType::Mr;
  using HandleBase = _ib_mr;
  HandleBase* handle() { return this; }
  explicit Mr(Device& d) : Object(kType, d) {}
  Pd* pd = nullptr;
  std::uint64_t start = 0, length = 0;  // virtual range the keys cover
  ib_access_t access = 0;
  std::uint32_t key = 0;
  std::uint32_t mtt_first = 0, mtt_count = 0;
  Mr* parent = nullptr;          // register_smr: the region whose pages we share
  std::uint32_t sharers = 0;     // shared regions over our pages
  const void* pinned = nullptr;  // start of the pin this region holds, if any
};

struct Mw : Object, _ib_mw {
  static constexpr ObjType kType = ObjType::Mw;
  using HandleBase = _ib_mw;
  HandleBase* handle() { return this; }
  explicit Mw(Device& d) : Object(kType, d) {}
  Pd* pd = nullptr;
  std::uint32_t key = 0;  // current key (changes on every bind)
};

struct Mcast : Object, _ib_mcast {
  static constexpr ObjType kType = ObjType::Mcast;
  using HandleBase = _ib_mcast;
  HandleBase* handle() { return this; }
  explicit Mcast(Device& d) : Object(kType, d) {}
  Qp* qp = nullptr;
  ib_gid_t gid{};
  std::uint16_t mlid = 0;  // host order
};

// HCA capabilities (QUERY_HCA) and static port facts read at load.
struct Caps {
  std::uint32_t max_qp = 0, max_qp_wr = 0, max_sge = 0, max_cq = 0, max_cqe = 0, max_mpt = 0, max_mtt = 0, max_pd = 0,
                max_init_rd_atom = 0, max_resp_rd_atom = 0, max_mcg = 0, max_qp_per_mcg = 0, max_inline = 0, max_eq = 0;
  std::uint8_t num_ports = 0, max_mtu = 0, local_ack_delay = 0, atomic_cap = 0, page_size_log = 12;
  std::uint64_t node_guid = 0;
  std::uint16_t partition_cap = 1;     // NodeInfo:PartitionCap (P_Key table size)
  std::vector<std::uint8_t> guid_cap;  // per port, PortInfo:GUIDCap
  std::vector<ib_net64_t> port_guid;   // per port (GUIDInfo entry 0), network order
};

// A free-list allocator of small integers in [first, limit).
class IdPool {
 public:
  void reset(std::uint32_t first, std::uint32_t limit) {
    next_ = first;
    limit_ = limit;
    free_.clear();
  }
  bool alloc(std::uint32_t& id);
  void release(std::uint32_t id) { free_.insert(id); }

 private:
  std::uint32_t next_ = 0, limit_ = 0;
  std::set<std::uint32_t> free_;
};

// First-fit allocator of contiguous MTT entries.
class ExtentPool {
 public:
  void reset(std::uint32_t size) {
    free_.clear();
    if (size) free_[0] = size;
  }
  bool alloc(std::uint32_t count, std::uint32_t& first);
  void release(std::uint32_t first, std::uint32_t count);

 private:
  std::map<std::uint32_t, std::uint32_t> free_;  // start -> length
};

// Status of one HCR command.
struct CmdResult {
  bool issued = false;  // false: the driver could not run it at all
  hca::CmdStatus status = hca::CmdStatus::OK;
  bool ok() const { return issued && status == hca::CmdStatus::OK; }
};

class Device : public host::BoundDriver {
 public:
  // The driver instance of the calling thread's node (nullptr if the node
  // has no HCA, the driver is not loaded, or the caller is no host thread).
  static Device* current();
  // The same, also giving the calling process for cpu_as().
  static Device* current(const sc_core::sc_object*& process) { return of_host(host::Host::current_host(process)); }
  // The driver instance of host `h` (nullptr: none ready, or no host).
  static Device* of_host(host::Host* h);
  // poll_cq's lookup: the CQ `handle` names on the driver of the caller's
  // host `h` (and that driver in `dev`), or nullptr. Hot: a busy loop polls
  // the same CQ from the same thread again and again, so the last one found
  // is remembered with its host. Forgotten when the CQ is destroyed or its
  // driver goes; a host of a later world has another serial number.
  static Cq* polled_cq(const void* handle, host::Host* h, Device*& dev) {
    const LastPoll& p = last_poll_;
    if (h && h == p.host && handle == p.handle && h->serial() == p.serial) {
      dev = p.dev;
      return p.cq;
    }
    return polled_cq_slow(handle, h, dev);
  }
  // True while polled_cq remembers `cq` (so it was not destroyed since).
  static bool poll_remembers(const Cq* cq) { return last_poll_.cq == cq; }
  // Loads the driver on the calling thread's node if needed (after the
  // node's bus probe, which this runs if the node has not yet); nullptr if
  // no HCA function is on the node's bus or initialisation failed.
  static Device* load_current();
  // For ib_deregister_ca: the calling node's device if this is its interface.
  static Device* owner_of(const ci_interface_t* ci);

  // Bound to the HCA's PCI function when the node probes its bus
  // (host/pci.h): BAR 0 and the interrupt line come from its record.
  Device(host::Host& host, host::HostBus& bus, const host::pci::Function& function);
  ~Device() override;
  bool init();  // runs on a thread of `host`

  host::Host& host() { return host_; }
  const Caps& caps() const { return caps_; }
  const ci_interface_t& ci() const { return ci_; }
  Ca* open_instance() const { return ca_; }
  void set_open_instance(Ca* ca) { ca_ = ca; }
  // The subnet manager's own open instance (nicsim_sm_ci_interface): the
  // seed allows one open instance per CA, which is the consumer's; the SM
  // is a kernel agent beside it, as it sits beside the consumers above
  // IBAL's access layer (nicsim has no access layer to multiplex one open).
  const ci_interface_t& agent_ci() const { return agent_ci_; }
  Ca* agent_instance() const { return agent_; }
  void set_agent_instance(Ca* ca) { agent_ = ca; }
  // The open instance a CQ's or QP's events go to.
  Ca* instance_of(const Pd* pd) const;

  // ---- handle registry ----------------------------------------------------
  template <class T>
  T* find(const void* handle) {
    return static_cast<T*>(find_object(handle, T::kType));
  }
  template <class T>
  T* make() {
    auto* o = new T(*this);
    o->handle_key = static_cast<const void*>(static_cast<typename T::HandleBase*>(o));
    live_.emplace(o->handle_key, o);
    return o;
  }
  void kill(Object* o);  // removes from the registry, quarantines the memory

  // ---- CPU ------------------------------------------------------------------
  // Charges cost.<cls> (+ bytes at copy bandwidth) to the caller: a CPU of
  // the node on a thread, a stall of the handler in interrupt context.
  void cpu(std::string_view cls, std::uint64_t bytes = 0) { host_.work(cls, bytes); }
  // The same, for hot paths.
  void cpu(const host::CostClass& cls, std::uint64_t bytes = 0) { host_.work(cls, bytes); }

  // ---- the hardware interface ----------------------------------------------
  // Runs one HCR command: `in` (in_bytes) is copied into the input mailbox,
  // the output mailbox (out_bytes) is copied to `out`. Blocks (polls go).
  CmdResult command(hca::Command op, std::uint32_t in_mod, const void* in = nullptr, std::size_t in_bytes = 0,
                    void* out = nullptr, std::size_t out_bytes = 0, std::uint64_t in_param_override = 0,
                    bool use_override = false);
  void doorbell(hca::Field db, std::uint32_t word0, std::uint32_t word1);
  std::uint8_t* alloc_dma(std::size_t bytes, std::size_t align = 4096);
  void free_dma(void* p);

  // ---- resources ------------------------------------------------------------
  IdPool pdns, cqns, mpts;
  ExtentPool mtts;
  std::uint32_t avs = 0;
  static constexpr std::uint32_t kMaxAvs = 65536;
  std::vector<std::uint8_t> mpt_tags;  // per MPT index: the tag of its last key
  std::uint32_t new_key(std::uint32_t index);
  bool alloc_qpn(std::uint32_t& qpn);
  void release_qpn(std::uint32_t qpn) { used_qpns_.erase(qpn); }
  std::uint32_t special_qpn(std::uint8_t port, bool gsi) const { return kSpecialQpBase + 2u * (port - 1) + gsi; }
  std::map<std::uint32_t, Cq*> cq_by_num;
  std::map<std::uint32_t, Qp*> qp_by_num;
  // Pins of consumer buffers that are not node memory, shared by every
  // region over the same range.
  struct Pin {
    std::uint64_t bytes;
    std::uint32_t refs;
  };
  std::map<std::uint64_t, Pin> pins;

  // Interrupt-level consumer callbacks in progress (close_ca waits for them).
  std::uint32_t callbacks_running = 0;
  host::WaitQueue callbacks_done;

  static constexpr std::uint32_t kFirstQpn = 0x40;
  static constexpr std::uint32_t kSpecialQpBase = 0x10;

 private:
  static Cq* polled_cq_slow(const void* handle, host::Host* h, Device*& dev);
  struct LastPoll {
    const host::Host* host;
    std::uint64_t serial;
    const void* handle;
    Cq* cq;
    Device* dev;
  };
  static inline LastPoll last_poll_{};

  void eq_interrupt();
  void dispatch_event(const std::uint8_t* eqe);
  host::Host& host_;
  host::HostBus& bus_;
  std::uint64_t bar0_;
  std::uint8_t irq_line_;
  enum class LoadState : std::uint8_t { NotYet, Loading, Ready, Failed } load_ = LoadState::NotYet;
  host::WaitQueue loaded_;  // threads waiting while another loads the driver
  Caps caps_;
  std::uint64_t guid_ = 0;
  std::uint32_t vendor_ = 0, device_id_ = 0, revision_ = 0;
  ci_interface_t ci_{};
  ci_interface_t agent_ci_{};
  Ca* agent_ = nullptr;
  host::Mutex cmd_mutex_;
  std::uint8_t* mbox_in_ = nullptr;
  std::uint8_t* mbox_out_ = nullptr;
  std::uint32_t token_ = 0;
  std::uint8_t* eq_ring_ = nullptr;
  std::uint32_t eq_entries_ = 0, eq_consumer_ = 0;
  int irq_vector_ = -1;
  Ca* ca_ = nullptr;
  Object* find_object(const void* handle, ObjType type);
  std::unordered_map<const void*, Object*> live_;
  std::deque<std::unique_ptr<Object>> quarantine_;
  std::uint32_t qpn_cursor_ = kFirstQpn;
  std::set<std::uint32_t> used_qpns_;
};

// Finds a handle of type T on the calling node's driver.
template <class T>
T* lookup(const void* handle) {
  Device* d = Device::current();
  return d ? d->find<T>(handle) : nullptr;
}

// Charges `cls` to the caller first, then finds the handle again: another
// thread of the node may have destroyed the object while this one was
// charged. The verb then checks and acts without letting others run.
template <class T>
T* lookup_charged(const void* handle, std::string_view cls) {
  T* o = lookup<T>(handle);
  if (!o) return nullptr;
  Device& d = *o->dev;
  d.cpu(cls);
  return d.find<T>(handle);
}

// ---- conversions shared by the verb files ---------------------------------
// The integer a consumer stored in an enum field: C code may store any
// value there, which C++ must not load as the enum type.
template <class E>
std::underlying_type_t<E> raw_enum(const E& e) {
  std::underlying_type_t<E> v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}
ib_api_status_t status_of(const CmdResult& r);     // generic command status mapping
std::uint32_t mpt_access(ib_access_t access);      // IB_AC_* -> hca::mpt flags
hca::QpState hw_state(ib_qp_state_t s, bool& ok);  // IB_QPS_* -> hardware state
ib_qp_state_t ib_state(hca::QpState s);
std::uint32_t next_pow2(std::uint32_t v);
unsigned log2_of(std::uint32_t pow2);
void fill_qp_attr(const Qp& qp, ib_qp_attr_t* attr);
// Bookkeeping for one CQE of `qp`: frees the work queue slots it retires.
void retire_wqes(Qp& qp, bool is_recv, bool error, std::uint64_t wr_id);
// Asks the HCA for the QP's state (it moves QPs to SQE/Error by itself).
void refresh_state(Qp& qp);

// The 43 verbs (ci_interface_t order), defined across the driver's files.
ib_api_status_t open_ca(const ib_net64_t, const ci_completion_cb_t, const ci_async_event_cb_t, const void* const,
                        ib_ca_handle_t*);
ib_api_status_t query_ca(const ib_ca_handle_t, ib_ca_attr_t*, size_t*, ci_umv_buf_t*);
ib_api_status_t modify_ca(const ib_ca_handle_t, const uint8_t, const ib_ca_mod_t, const ib_port_attr_mod_t*);
ib_api_status_t close_ca(ib_ca_handle_t);
ib_api_status_t allocate_pd(const ib_ca_handle_t, ib_pd_handle_t*, ci_umv_buf_t*);
ib_api_status_t deallocate_pd(ib_pd_handle_t, ci_umv_buf_t*);
ib_api_status_t allocate_rdd(const ib_ca_handle_t, ib_rdd_handle_t*, ci_umv_buf_t*);
ib_api_status_t deallocate_rdd(ib_rdd_handle_t, ci_umv_buf_t*);
ib_api_status_t create_av(const ib_pd_handle_t, const ib_av_attr_t*, ib_av_handle_t*, ci_umv_buf_t*);
ib_api_status_t query_av(const ib_av_handle_t, ib_av_attr_t*, ib_pd_handle_t*, ci_umv_buf_t*);
ib_api_status_t modify_av(const ib_av_handle_t, const ib_av_attr_t*, ci_umv_buf_t*);
ib_api_status_t destroy_av(const ib_av_handle_t, ci_umv_buf_t*);
ib_api_status_t create_qp(const ib_pd_handle_t, const void*, const ib_qp_create_t*, ib_qp_attr_t*, ib_qp_handle_t*,
                          ci_umv_buf_t*);
ib_api_status_t create_spl_qp(const ib_pd_handle_t, const uint8_t, const void*, const ib_qp_create_t*, ib_qp_attr_t*,
                              ib_qp_handle_t*);
ib_api_status_t modify_qp(const ib_qp_handle_t, const ib_qp_mod_t*, ib_qp_attr_t*, ci_umv_buf_t*);
ib_api_status_t query_qp(const ib_qp_handle_t, ib_qp_attr_t* const, ci_umv_buf_t*);
ib_api_status_t destroy_qp(const ib_qp_handle_t, ci_umv_buf_t*);
ib_api_status_t create_cq(const ib_pd_handle_t, const void*, uint32_t* const, ib_cq_handle_t*, ci_umv_buf_t*);
ib_api_status_t resize_cq(const ib_cq_handle_t, uint32_t* const, ci_umv_buf_t*);
ib_api_status_t query_cq(const ib_cq_handle_t, uint32_t*, ci_umv_buf_t*);
ib_api_status_t destroy_cq(const ib_cq_handle_t, ci_umv_buf_t*);
ib_api_status_t create_eec(const ib_rdd_handle_t, const void*, ib_eec_attr_t*, ib_eec_handle_t*, ci_umv_buf_t*);
ib_api_status_t query_eec(const ib_eec_handle_t, ib_eec_attr_t*, ci_umv_buf_t*);
ib_api_status_t modify_eec(const ib_eec_handle_t, const ib_eec_mod_t*, ib_eec_attr_t*, ci_umv_buf_t*);
ib_api_status_t destroy_eec(const ib_eec_handle_t, ci_umv_buf_t*);
ib_api_status_t register_mr(const ib_pd_handle_t, const ib_mr_create_t* const, uint32_t* const, uint32_t* const,
                            ib_mr_handle_t* const, ci_umv_buf_t*);
ib_api_status_t register_pmr(const ib_pd_handle_t, const ib_phys_create_t* const, void** const, uint32_t* const,
                             uint32_t* const, ib_mr_handle_t* const, ci_umv_buf_t*);
ib_api_status_t query_mr(const ib_mr_handle_t, ib_mr_attr_t* const);
ib_api_status_t modify_mr(const ib_mr_handle_t, const ib_mr_mod_t, const ib_mr_create_t* const, uint32_t* const,
                          uint32_t* const, const ib_pd_handle_t, ci_umv_buf_t*);
ib_api_status_t modify_pmr(const ib_mr_handle_t, const ib_mr_mod_t, const ib_phys_create_t* const, void** const,
                           uint32_t* const, uint32_t* const, const ib_pd_handle_t, ci_umv_buf_t*);
ib_api_status_t register_smr(const ib_mr_handle_t, const ib_pd_handle_t, const ib_access_t, void** const,
                             uint32_t* const, uint32_t* const, ib_mr_handle_t* const, ci_umv_buf_t*);
ib_api_status_t deregister_mr(const ib_mr_handle_t, ci_umv_buf_t*);
ib_api_status_t create_mw(const ib_pd_handle_t, uint32_t*, ib_mw_handle_t*, ci_umv_buf_t*);
ib_api_status_t query_mw(const ib_mw_handle_t, ib_pd_handle_t*, uint32_t*, ci_umv_buf_t*);
ib_api_status_t bind_mw(const ib_mw_handle_t, const ib_qp_handle_t, ib_bind_wr_t* const, uint32_t* const);
ib_api_status_t destroy_mw(const ib_mw_handle_t, ci_umv_buf_t*);
ib_api_status_t post_send(const ib_qp_handle_t, ib_send_wr_t* const, ib_send_wr_t**);
ib_api_status_t post_recv(const ib_qp_handle_t, ib_recv_wr_t* const, ib_recv_wr_t**);
ib_api_status_t poll_cq(const ib_cq_handle_t, ib_wc_t** const, ib_wc_t** const);
ib_api_status_t enable_cq_notify(const ib_cq_handle_t, const boolean_t);
ib_api_status_t attach_mcast(const ib_qp_handle_t, const ib_gid_t*, const ib_net16_t, ib_mcast_handle_t*,
                             ci_umv_buf_t*);
ib_api_status_t detach_mcast(const ib_mcast_handle_t, ci_umv_buf_t*);
ib_api_status_t local_mad(const ib_ca_handle_t, const uint8_t, const void*, void*);
ib_api_status_t open_ca_agent(const ib_net64_t, const ci_completion_cb_t, const ci_async_event_cb_t, const void* const,
                              ib_ca_handle_t*);

// Posts one bind WQE on qp's send queue (post.cc; used by bind_mw).
ib_api_status_t post_bind(Qp& qp, const ib_bind_wr_t& wr, std::uint32_t window_key, std::uint32_t new_key,
                          std::uint32_t mr_key, std::uint32_t access_flags);

}  // namespace nicsim::verbs
