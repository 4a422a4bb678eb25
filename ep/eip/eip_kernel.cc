// The node kernel services of elan3/eip_streams.h: STREAMS messages and
// queues, kernel memory, mutexes and cmn_err on a simulated node. Message
// buffers are node memory (the Elan DMAs them once mapped); every call
// charges the node's CPU through Host::work (host cost classes
// cost.streams_*), so it is correct from threads and interrupt handlers.
// Service procedures run on one kernel thread per node ("streams"), woken
// by qenable, as Solaris runs them in a kernel service thread.
#include <elan3/eip_streams.h>
#include "ep/eip/ip/eip_ip.h"
#include <fmt/format.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/params.h"
#include "core/calendar.h"
#include "core/sim.h"
#include "host/host.h"
#include "trace/trace.h"

namespace nicsim::eip {
namespace {

const ParamRegistration streams_params(
    "host", "",
    {
        {"cost.streams_alloc", UnitKind::Time, "250ns", "0ps", "1s", {},
         "allocb / freeb / kmem_zalloc: a kernel allocator call (zeroing is charged on top at "
         "copy_bandwidth for kmem_zalloc)"},
        {"cost.streams_queue", UnitKind::Time, "100ns", "0ps", "1s", {},
         "putq / getq / putbq / putnext / canput: a STREAMS queue operation"},
        {"cost.streams_copy", UnitKind::Time, "100ns", "0ps", "1s", {},
         "mcopymsg / copymsg set-up; the bytes are charged on top at copy_bandwidth"},
    });

const host::CostClass kAlloc("streams_alloc");
const host::CostClass kQueue("streams_queue");
const host::CostClass kCopy("streams_copy");

// A kernel mutex: a sleeping lock for threads; an interrupt handler may
// take it only when it is free (and holds it until mutex_exit).
struct KMutex {
  explicit KMutex(host::Host& h) : thread_lock(h), handler_done(h) {}
  host::Mutex thread_lock;
  host::WaitQueue handler_done;
  bool handler_holds = false;
};

struct QueueKernel {
  std::unique_ptr<host::WaitQueue> readers;  // eip_getq_wait callers
};

// Per node, kept by its host: the service thread and the queues enabled for
// it, and the kernel's side of the mutexes and queues it made.
struct Kernel : host::HostSoftware {
  explicit Kernel(host::Host& h) : host(h), enabled_wake(h) {}
  host::Host& host;
  host::WaitQueue enabled_wake;
  std::deque<queue_t*> enabled;
  bool service_thread = false;
  std::unordered_map<const KMutex*, std::unique_ptr<KMutex>> mutexes;  // until mutex_destroy
  std::vector<std::unique_ptr<QueueKernel>> queues;                    // those read by eip_getq_wait
  std::unordered_map<const void*, const queue_t*> devices;             // attached devices, their write queues
};

host::Host& current_host(const char* call) {
  host::Host* h = host::Host::current_host();
  if (!h) throw std::logic_error(fmt::format("{} called outside a simulated node", call));
  return *h;
}

Kernel& kernel(host::Host& h) {
  if (Kernel* k = h.software<Kernel>()) return *k;
  return h.add_software(std::make_unique<Kernel>(h));
}

void kernel_error(host::Host& h, const std::string& msg) { Sim::get().error(fmt::format("{}.kernel", h.name()), msg); }

void service_loop(Kernel* k) {
  for (;;) {
    while (k->enabled.empty()) k->enabled_wake.wait();
    queue_t* q = k->enabled.front();
    k->enabled.pop_front();
    q->q_enabled = 0;
    if (q->q_srv) q->q_srv(q);
  }
}

void append(queue_t* q, mblk_t* mp, bool at_head) {
  mp->b_next = mp->b_prev = nullptr;
  if (at_head) {
    mp->b_next = q->q_first;
    if (q->q_first) q->q_first->b_prev = mp;
    q->q_first = mp;
    if (!q->q_last) q->q_last = mp;
  } else {
    mp->b_prev = q->q_last;
    if (q->q_last) q->q_last->b_next = mp;
    q->q_last = mp;
    if (!q->q_first) q->q_first = mp;
  }
  q->q_count += msgdsize(mp);
  if (q->q_kernel) static_cast<QueueKernel*>(q->q_kernel)->readers->notify_one();
}

}  // namespace
}  // namespace nicsim::eip

using nicsim::eip::current_host;
using nicsim::eip::kernel;

extern "C" {

mblk_t* allocb(size_t size, unsigned int) {
  nicsim::host::Host& h = current_host("allocb");
  h.work(nicsim::eip::kAlloc);
  auto* mp = static_cast<mblk_t*>(h.memory().alloc(sizeof(mblk_t) + sizeof(dblk_t), 16));
  void* buf = mp ? h.memory().alloc(size ? size : 1, 64) : nullptr;
  if (!buf) {
    if (mp) h.memory().free(mp);
    return nullptr;
  }
  auto* db = reinterpret_cast<dblk_t*>(mp + 1);
  db->db_base = static_cast<unsigned char*>(buf);
  db->db_lim = db->db_base + size;
  db->db_ref = 1;
  mp->b_next = mp->b_prev = mp->b_cont = nullptr;
  mp->b_rptr = mp->b_wptr = db->db_base;
  mp->b_datap = db;
  return mp;
}

void freeb(mblk_t* mp) {
  if (!mp) return;
  nicsim::host::Host& h = current_host("freeb");
  h.work(nicsim::eip::kAlloc);
  if (--mp->b_datap->db_ref == 0) h.memory().free(mp->b_datap->db_base);
  h.memory().free(mp);
}

void freemsg(mblk_t* mp) {
  while (mp) {
    mblk_t* next = mp->b_cont;
    freeb(mp);
    mp = next;
  }
}

size_t msgdsize(const mblk_t* mp) {
  size_t n = 0;
  for (; mp; mp = mp->b_cont) n += static_cast<size_t>(mp->b_wptr - mp->b_rptr);
  return n;
}

void mcopymsg(mblk_t* mp, unsigned char* buf) {
  nicsim::host::Host& h = current_host("mcopymsg");
  h.work(nicsim::eip::kCopy, msgdsize(mp));
  for (mblk_t* b = mp; b; b = b->b_cont) {
    const size_t n = static_cast<size_t>(b->b_wptr - b->b_rptr);
    std::memcpy(buf, b->b_rptr, n);
    buf += n;
  }
  freemsg(mp);
}

void nicsim_kernel_bcopy(const void* from, void* to, size_t len) {
  current_host("bcopy").work(nicsim::eip::kCopy, len);
  std::memmove(to, from, len);
}

// The IP layer's checksum (ep/eip/ip/eip_ip.h): a pass over the bytes,
// charged as a copy of them.
uint32_t nicsim_kernel_cksum(const void* p, size_t len, uint32_t sum) {
  current_host("ip_cksum").work(nicsim::eip::kCopy, len);
  const auto* b = static_cast<const unsigned char*>(p);
  std::uint64_t s = sum;
  for (size_t i = 0; i + 1 < len; i += 2) s += static_cast<std::uint32_t>(b[i] << 8 | b[i + 1]);
  if (len & 1) s += static_cast<std::uint32_t>(b[len - 1] << 8);
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return static_cast<uint32_t>(s);
}

mblk_t* copymsg(mblk_t* mp) {
  const size_t n = msgdsize(mp);
  mblk_t* c = allocb(n, BPRI_MED);
  if (!c) return nullptr;
  current_host("copymsg").work(nicsim::eip::kCopy, n);
  for (mblk_t* b = mp; b; b = b->b_cont) {
    const size_t len = static_cast<size_t>(b->b_wptr - b->b_rptr);
    std::memcpy(c->b_wptr, b->b_rptr, len);
    c->b_wptr += len;
  }
  return c;
}

int putq(queue_t* q, mblk_t* mp) {
  current_host("putq").work(nicsim::eip::kQueue);
  nicsim::eip::append(q, mp, false);
  qenable(q);
  return 1;
}

int putbq(queue_t* q, mblk_t* mp) {
  current_host("putbq").work(nicsim::eip::kQueue);
  nicsim::eip::append(q, mp, true);
  return 1;
}

mblk_t* getq(queue_t* q) {
  current_host("getq").work(nicsim::eip::kQueue);
  mblk_t* mp = q->q_first;
  if (!mp) return nullptr;
  q->q_first = mp->b_next;
  if (q->q_first)
    q->q_first->b_prev = nullptr;
  else
    q->q_last = nullptr;
  mp->b_next = mp->b_prev = nullptr;
  q->q_count -= msgdsize(mp);
  return mp;
}

void qenable(queue_t* q) {
  if (!q->q_srv || q->q_enabled) return;
  nicsim::host::Host& h = current_host("qenable");
  nicsim::eip::Kernel& k = kernel(h);
  q->q_enabled = 1;
  k.enabled.push_back(q);
  if (!k.service_thread) {
    k.service_thread = true;
    h.spawn("streams", [kp = &k] { nicsim::eip::service_loop(kp); });
  }
  k.enabled_wake.notify_one();
}

int canput(queue_t* q) {
  current_host("canput").work(nicsim::eip::kQueue);
  return q->q_hiwat == 0 || q->q_count < q->q_hiwat;
}

void putnext(queue_t* q, mblk_t* mp) {
  nicsim::host::Host& h = current_host("putnext");
  if (!q->q_next || !q->q_next->q_put) {
    nicsim::eip::kernel_error(h, "putnext on a queue with no next queue or no put procedure");
    freemsg(mp);
    return;
  }
  h.work(nicsim::eip::kQueue);
  q->q_next->q_put(q->q_next, mp);
}

void* kmem_zalloc(size_t size, int flags) {
  nicsim::host::Host& h = current_host("kmem_zalloc");
  if (flags == KM_SLEEP && !h.may_block("kmem_zalloc(KM_SLEEP)", std::source_location::current())) return nullptr;
  h.work(nicsim::eip::kAlloc, size);
  void* p = h.memory().alloc(size ? size : 1, 64);
  if (!p) {
    if (flags == KM_SLEEP) nicsim::eip::kernel_error(h, fmt::format("kmem_zalloc({}, KM_SLEEP): node memory exhausted", size));
    return nullptr;
  }
  std::memset(p, 0, size);
  return p;
}

void kmem_free(void* p, size_t) {
  if (!p) return;
  nicsim::host::Host& h = current_host("kmem_free");
  h.work(nicsim::eip::kAlloc);
  h.memory().free(p);
}

void mutex_init(kmutex_t* m, const char*, int, void*) {
  nicsim::host::Host& h = current_host("mutex_init");
  auto mu = std::make_unique<nicsim::eip::KMutex>(h);
  m->m_owner = mu.get();
  kernel(h).mutexes.emplace(mu.get(), std::move(mu));
}

void mutex_destroy(kmutex_t* m) {
  kernel(current_host("mutex_destroy")).mutexes.erase(static_cast<nicsim::eip::KMutex*>(m->m_owner));
  m->m_owner = nullptr;
}

void mutex_enter(kmutex_t* m) {
  nicsim::host::Host& h = current_host("mutex_enter");
  if (!m->m_owner) mutex_init(m, nullptr, MUTEX_DEFAULT, nullptr);  // a zeroed mutex, as Solaris allows
  auto* mu = static_cast<nicsim::eip::KMutex*>(m->m_owner);
  if (h.in_interrupt()) {
    // A handler cannot sleep: the lock must be free (a thread holding it
    // while the handler spins would be a deadlock on the CPU they share).
    if (mu->thread_lock.locked() || mu->handler_holds)
      nicsim::eip::kernel_error(h, "mutex_enter in an interrupt handler on a held mutex");
    mu->handler_holds = true;
    return;
  }
  while (mu->handler_holds) mu->handler_done.wait();
  mu->thread_lock.lock();
}

void mutex_exit(kmutex_t* m) {
  nicsim::host::Host& h = current_host("mutex_exit");
  auto* mu = static_cast<nicsim::eip::KMutex*>(m->m_owner);
  if (!mu) {
    nicsim::eip::kernel_error(h, "mutex_exit on a mutex that was never entered");
    return;
  }
  if (h.in_interrupt()) {
    mu->handler_holds = false;
    mu->handler_done.notify_all();
    return;
  }
  mu->thread_lock.unlock();
}

void cmn_err(int level, const char* fmt_str, ...) {
  nicsim::host::Host& h = current_host("cmn_err");
  char text[512];
  va_list ap;
  va_start(ap, fmt_str);
  std::vsnprintf(text, sizeof text, fmt_str, ap);
  va_end(ap);
  static const char* const kLevel[] = {"cont", "note", "warn"};
  nicsim::Sim& sim = nicsim::Sim::get();
  if (sim.tracer().on(h.node_id(), nicsim::Component::host))
    sim.tracer().record(nicsim::Calendar::now(), h.node_id(), nicsim::Component::host, "cmn_err",
                        {{"level", level >= 0 && level <= 2 ? kLevel[level] : "?"}, {"text", text}});
  if (std::getenv("NICSIM_VERBOSE")) std::fprintf(stderr, "[%s kernel] %s", h.name(), text);
}

}  // extern "C"

namespace nicsim::eip {

// eip_getq_wait: the consumers of a read queue (sockets, SAP streams) sleep on it.
extern "C" mblk_t* eip_getq_wait(queue_t* q, uint64_t timeout_ns) {
  host::Host& h = current_host("eip_getq_wait");
  if (!q) return nullptr;
  if (h.in_interrupt()) return getq(q);  // what is there: an interrupt handler never waits
  if (!q->q_kernel) {
    auto qk = std::make_unique<QueueKernel>();
    qk->readers = std::make_unique<host::WaitQueue>(h);
    q->q_kernel = kernel(h).queues.emplace_back(std::move(qk)).get();
  }
  auto* qk = static_cast<QueueKernel*>(q->q_kernel);
  const Tick deadline = timeout_ns ? Calendar::now() + timeout_ns * kNs : kTickMax;
  while (!q->q_first) {
    if (timeout_ns == 0) {
      if (!qk->readers->wait()) return nullptr;
    } else if (!qk->readers->wait_until(deadline) && !q->q_first) {
      return nullptr;
    }
  }
  return getq(q);
}

}  // namespace nicsim::eip

extern "C" {

int servicing_interrupt(void) {
  nicsim::host::Host* h = nicsim::host::Host::current_host();
  return h && h->in_interrupt();
}

void nicsim_kernel_dev_attached(void* dev, queue_t* wq) {
  nicsim::eip::kernel(nicsim::eip::current_host("eip_attach")).devices[dev] = wq;
}

void nicsim_kernel_dev_detached(void* dev) {
  nicsim::eip::kernel(nicsim::eip::current_host("eip_detach")).devices.erase(dev);
}

int nicsim_kernel_dev_live(const void* dev) {
  nicsim::host::Host* h = nicsim::host::Host::current_host();
  return dev && h && nicsim::eip::kernel(*h).devices.count(dev);
}

void* nicsim_kernel_dev_of_wq(const queue_t* wq) {
  nicsim::host::Host* h = nicsim::host::Host::current_host();
  if (!wq || !h) return nullptr;
  for (const auto& [dev, q] : nicsim::eip::kernel(*h).devices)
    if (q == wq) return const_cast<void*>(dev);
  return nullptr;
}

}  // extern "C"
