// Parameters of the Elan3 model (scope "nic.elan3"), default profile
// "elan3-qsnet": a Quadrics QM-400 Elan3 card (100 MHz Elan clock) on a
// 64-bit/66 MHz PCI bus, Elite links at 400 MB/s per direction. Also the
// NIC kind "elan3", and the name tables and CRC of elan3_regs.h.
#include <array>
#include <bit>
#include <cstring>
#include <string>

#include "core/params.h"
#include "elan_model/elan3.h"
#include "world/network_kinds.h"
#include "world/node.h"

namespace nicsim::elan3 {
namespace {

const ParamRegistration elan3_params(
    "nic.elan3", "Quadrics Elan3 NIC, profile elan3-qsnet (use with bus.profile pci-66 and 400MB/s links)",
    {
        {"clock", UnitKind::Frequency, "100MHz", "10MHz", "1GHz", {}, "Elan clock: every engine cost is in its cycles"},
        {"page_size", UnitKind::Size, "8KiB", "8KiB", "8KiB", {}, "Elan MMU page (fixed by the Elan3)"},
        {"tlb_entries", UnitKind::Count, "16", "1", "1024", {}, "MMU TLB entries (fully associative, LRU)"},
        {"max_payload",
         UnitKind::Size,
         "320B",
         "64B",
         "4KiB",
         {},
         "data bytes per network packet (a multiple of 64 B; QsNet DMA packets carry up to 320 B); also the "
         "largest queued DMA",
         "64B"},
        {"tx_window",
         UnitKind::Count,
         "4",
         "1",
         "64",
         {},
         "packets of the active DMA sent and awaiting their ack tokens (hides the PCI read latency)"},
        {"command_cycles", UnitKind::Count, "4", "0", "100000", {}, "decode one command port write"},
        {"desc_cycles", UnitKind::Count, "8", "0", "100000", {}, "decode a fetched DMA descriptor and start it"},
        {"tlb_cycles", UnitKind::Count, "1", "0", "100000", {}, "one TLB lookup (per page)"},
        {"walk_cycles",
         UnitKind::Count,
         "4",
         "0",
         "100000",
         {},
         "a TLB miss: PTE decode and refill, on top of the 8-byte PTE read over the bus"},
        {"tx_packet_cycles", UnitKind::Count, "6", "0", "100000", {}, "build one packet: header, CRC, link start"},
        {"rx_packet_cycles", UnitKind::Count, "8", "0", "100000", {}, "check and dispatch one received packet"},
        {"ack_cycles", UnitKind::Count, "2", "0", "100000", {}, "build, or take in, one ack token"},
        {"event_cycles", UnitKind::Count, "4", "0", "100000", {}, "one event operation (decrement, test, action)"},
        {"queue_cycles", UnitKind::Count, "4", "0", "100000", {}, "input queue full test and pointer update"},
        {"event_cache_entries",
         UnitKind::Count,
         "32",
         "0",
         "4096",
         {},
         "events the event engine holds on the card (filled by prime_event, LRU): a set of a held event "
         "decrements the card's count and writes it through to node memory, with no read over the bus; "
         "0: every set reads the event from node memory"},
        {"pci_read_bytes",
         UnitKind::Size,
         "1KiB",
         "64B",
         "64KiB",
         {},
         "largest PCI read (Memory Read Multiple) the DMA engine issues for DMA data; reads stop at Elan page "
         "ends and never cross the DMA buffer's free space"},
        {"pci_read_cycles",
         UnitKind::Count,
         "2",
         "0",
         "100000",
         {},
         "Elan cycles from the end of one DMA data read to the request of the next: on conventional PCI the "
         "host bridge serves a master's read as a delayed transaction, one at a time, so data reads do not "
         "overlap (the bus's read latency is paid on each)"},
        {"dma_buffer",
         UnitKind::Size,
         "4KiB",
         "1KiB",
         "1MiB",
         {},
         "DMA data buffer: source bytes read ahead of the first unacknowledged byte (resends come from it)"},
        {"ack_timeout",
         UnitKind::Time,
         "20us",
         "100ns",
         "1s",
         {},
         "a packet whose token has not come back by then is resent"},
        {"retry_limit",
         UnitKind::Count,
         "8",
         "0",
         "63",
         {},
         "resends of a DMA after discard tokens or timeouts before a network error"},
        {"retry_backoff", UnitKind::Time, "1us", "0ps", "1s", {}, "wait before resending (times the attempt number)"},
        {"testfail_backoff",
         UnitKind::Time,
         "2us",
         "0ps",
         "1s",
         {},
         "a DMA refused by a full input queue (test-fail) with failCount left goes to the tail of the run queue "
         "and re-runs no earlier than this"},
        {"sdram_size",
         UnitKind::Size,
         "64MiB",
         "1MiB",
         "256MiB",
         {},
         "SDRAM on the card (QM-400: 64 MB), rounded down to a power of two: BAR 1 on the host bus maps all of it; "
         "descriptors, "
         "events, input queues and the interrupt queue live there"},
        {"sdram_cycles",
         UnitKind::Count,
         "8",
         "0",
         "1000",
         {},
         "Elan clock cycles from an SDRAM request to its first data (row activate, CAS, the memory controller)"},
        {"sdram_bandwidth",
         UnitKind::Bandwidth,
         "800MB/s",
         "1MB/s",
         "100GB/s",
         {},
         "SDRAM data rate for the Elan's own accesses (64 bits at the 100 MHz Elan clock); one access at a "
         "time"},
        {"verify_crc",
         UnitKind::Text,
         "touched",
         "",
         "",
         {"touched", "always"},
         "receive-side CRC check of packets and tokens: for those a link's error injection touched (the only "
         "source of changed bytes, so the verdicts are the same), or for every one"},
    });

const bool registered = [] {
  NicRegistry::instance().add(
      "elan3",
      [](NicContext& c) -> std::unique_ptr<fabric::Device> {
        return std::make_unique<Elan3>(c.fabric, c.device_id, c.name, c.node.host(), c.node.bus(), c.params);
      },
      [](fabric::Port& stand_in, const ParamSet& params) {
        stand_in.deliver_after_tail(rx_after_tail(elan3_params_from(params)));
      });
  NetworkKinds::instance().set_nic_pcap_format("elan3", "elan3");
  return true;
}();

// CRC-32C (Castagnoli, reflected polynomial 0x82f63b78): with the SSE 4.2
// crc32 instruction where the CPU has it, else sliced eight bytes at a time.
using CrcTables = std::array<std::array<std::uint32_t, 256>, 8>;
CrcTables make_crc_tables() {
  CrcTables t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0x82f63b78u ^ (c >> 1) : c >> 1;
    t[0][i] = c;
  }
  for (std::uint32_t i = 0; i < 256; ++i)
    for (int k = 1; k < 8; ++k) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
  return t;
}
const CrcTables kCrc = make_crc_tables();

}  // namespace

Tick rx_after_tail(const Elan3Params& p) { return cycles_time(p.rx_packet_cycles, p.clock_hz); }

Elan3Params elan3_params_from(const ParamSet& p) {
  Elan3Params e{};
  auto c = [&](const char* n) { return static_cast<std::uint32_t>(p.count(n)); };
  e.clock_hz = p.frequency("clock");
  e.tlb_entries = c("tlb_entries");
  e.max_payload = static_cast<std::uint32_t>(p.size("max_payload")) / kBlockSize * kBlockSize;
  e.tx_window = c("tx_window");
  e.command_cycles = c("command_cycles");
  e.desc_cycles = c("desc_cycles");
  e.tlb_cycles = c("tlb_cycles");
  e.walk_cycles = c("walk_cycles");
  e.tx_packet_cycles = c("tx_packet_cycles");
  e.rx_packet_cycles = c("rx_packet_cycles");
  e.ack_cycles = c("ack_cycles");
  e.event_cycles = c("event_cycles");
  e.queue_cycles = c("queue_cycles");
  e.event_cache_entries = c("event_cache_entries");
  e.pci_read_bytes = static_cast<std::uint32_t>(p.size("pci_read_bytes"));
  e.pci_read_cycles = c("pci_read_cycles");
  e.dma_buffer = static_cast<std::uint32_t>(p.size("dma_buffer"));
  e.ack_timeout = p.time("ack_timeout");
  e.retry_limit = c("retry_limit");
  e.retry_backoff = p.time("retry_backoff");
  e.testfail_backoff = p.time("testfail_backoff");
  e.verify_crc_always = p.text("verify_crc") == "always";
  e.command_port = 0xf1000000ULL;
  // A PCI BAR is a power of two: a size between two is rounded down.
  e.sdram_bytes = std::bit_floor(p.size("sdram_size"));
  e.sdram_cycles = c("sdram_cycles");
  e.sdram_bps = p.bandwidth("sdram_bandwidth");
  e.sdram_bar = 0xe0000000ULL;
  return e;
}

// ---- names of elan3_regs.h tables ------------------------------------------------

const char* perm::names(std::uint32_t bits) {
  static thread_local std::string s;
  s.clear();
#define NICSIM_X(name, bit, doc) \
  if (bits & (1u << bit)) {      \
    if (!s.empty()) s += '|';    \
    s += #name;                  \
  }
  NICSIM_ELAN3_PERMS(NICSIM_X)
#undef NICSIM_X
  if (s.empty()) s = "none";
  return s.c_str();
}

#define NICSIM_ELAN3_NAME_FN(fn, LIST, ...) \
  const char* fn(std::uint32_t v) {         \
    switch (v) { LIST(__VA_ARGS__) }        \
    return "?";                             \
  }
#define NICSIM_CASE3(name, v, doc) \
  case v:                          \
    return #name;
#define NICSIM_CASE2(name, v) \
  case v:                     \
    return #name;

namespace dma {
NICSIM_ELAN3_NAME_FN(direction_name, NICSIM_ELAN3_DIRECTIONS, NICSIM_CASE3)
NICSIM_ELAN3_NAME_FN(opcode_name, NICSIM_ELAN3_OPCODES, NICSIM_CASE3)
}  // namespace dma
namespace event {
NICSIM_ELAN3_NAME_FN(type_name, NICSIM_ELAN3_EVENT_TYPES, NICSIM_CASE3)
}
namespace intq {
NICSIM_ELAN3_NAME_FN(cause_name, NICSIM_ELAN3_CAUSES, NICSIM_CASE3)
}
NICSIM_ELAN3_NAME_FN(fault_name, NICSIM_ELAN3_FAULTS, NICSIM_CASE3)
namespace pkt {
NICSIM_ELAN3_NAME_FN(trans_name, NICSIM_ELAN3_TRANS, NICSIM_CASE3)
NICSIM_ELAN3_NAME_FN(token_name, NICSIM_ELAN3_TOKENS, NICSIM_CASE3)

namespace {
#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t crc32c_hw(std::uint32_t c, const std::uint8_t* data, std::size_t len) {
  std::uint64_t c64 = c;
  while (len >= 8) {
    std::uint64_t v;
    std::memcpy(&v, data, 8);
    c64 = __builtin_ia32_crc32di(c64, v);
    data += 8;
    len -= 8;
  }
  c = static_cast<std::uint32_t>(c64);
  while (len--) c = __builtin_ia32_crc32qi(c, *data++);
  return c;
}
const bool kHwCrc = __builtin_cpu_supports("sse4.2");
#else
const bool kHwCrc = false;
std::uint32_t crc32c_hw(std::uint32_t c, const std::uint8_t*, std::size_t) { return c; }
#endif
}  // namespace

std::uint32_t crc32_sliced(const std::uint8_t* data, std::size_t len) {
  std::uint32_t c = 0xffffffffu;
  while (len >= 8) {
    std::uint32_t lo, hi;
    std::memcpy(&lo, data, 4);
    std::memcpy(&hi, data + 4, 4);
    lo ^= c;
    c = kCrc[7][lo & 0xff] ^ kCrc[6][(lo >> 8) & 0xff] ^ kCrc[5][(lo >> 16) & 0xff] ^ kCrc[4][lo >> 24] ^
        kCrc[3][hi & 0xff] ^ kCrc[2][(hi >> 8) & 0xff] ^ kCrc[1][(hi >> 16) & 0xff] ^ kCrc[0][hi >> 24];
    data += 8;
    len -= 8;
  }
  while (len--) c = kCrc[0][(c ^ *data++) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

std::uint32_t crc32(const std::uint8_t* data, std::size_t len) {
  if (kHwCrc) return crc32c_hw(0xffffffffu, data, len) ^ 0xffffffffu;
  return crc32_sliced(data, len);
}
}  // namespace pkt

}  // namespace nicsim::elan3
