// Parameters of the HCA model, default profile "infinihost-pcix": an
// InfiniHost-class adapter (MT23108 era) with 4X SDR ports on a 64-bit
// 133 MHz PCI-X bus (the node's bus profile default).
#include "core/params.h"
#include "hca_model/hca.h"

namespace nicsim::hca {
namespace {

const ParamRegistration hca_params(
    "nic.hca", "InfiniBand HCA (InfiniHost-class), profile infinihost-pcix",
    {
        {"ports", UnitKind::Count, "1", "1", "2", {}, "IB ports"},
        {"clock", UnitKind::Frequency, "166MHz", "10MHz", "2GHz", {}, "core clock of the HCA engines"},
        {"max_mtu",
         UnitKind::Size,
         "2KiB",
         "256B",
         "4KiB",
         {"256B", "512B", "1KiB", "2KiB", "4KiB"},
         "largest path MTU the ports support (InfiniHost: 2048)"},
        {"command_latency",
         UnitKind::Time,
         "10us",
         "0ps",
         "10ms",
         {},
         "firmware time to execute one command (context create/modify/destroy)"},
        {"sma_latency",
         UnitKind::Time,
         "2us",
         "0ps",
         "10ms",
         {},
         "firmware subnet management agent: time to answer one SMP that arrived on QP0"},
        {"doorbell_cycles", UnitKind::Count, "20", "0", "100000", {}, "doorbell decode and scheduling"},
        {"wqe_cycles", UnitKind::Count, "150", "0", "100000", {}, "parse one WQE after it is fetched"},
        {"tx_packet_cycles", UnitKind::Count, "90", "0", "100000", {}, "build one outgoing packet (headers, CRCs)"},
        {"rx_packet_cycles",
         UnitKind::Count,
         "160",
         "0",
         "100000",
         {},
         "check and dispatch one incoming packet (CRCs, QP lookup, PSN)"},
        {"tpt_cycles", UnitKind::Count, "12", "0", "100000", {}, "one key lookup and address translation"},
        {"cqe_cycles", UnitKind::Count, "24", "0", "100000", {}, "build one completion entry"},
        {"ack_cycles", UnitKind::Count, "24", "0", "100000", {}, "build one ACK/NAK"},
        {"atomic_cycles", UnitKind::Count, "40", "0", "100000", {}, "execute one atomic at the responder"},
        {"dma_read_depth",
         UnitKind::Count,
         "4",
         "1",
         "64",
         {},
         "payload DMA reads the send engine keeps in flight (hides the bus read latency)"},
        {"port_queue", UnitKind::Count, "2", "1", "64", {}, "packets the send engine keeps queued at a port"},
        {"loopback_bandwidth",
         UnitKind::Bandwidth,
         "8Gbps",
         "1Mbps",
         "1Tbps",
         {},
         "a port's internal loopback (packets to the port's own LID never reach the wire): data rate, "
         "by default the 4X link's"},
        {"loopback_latency",
         UnitKind::Time,
         "100ns",
         "0ps",
         "1ms",
         {},
         "a port's internal loopback: from a packet's tail leaving the transmit side to the receive side"},
        {"wqe_prefetch",
         UnitKind::Count,
         "4",
         "1",
         "64",
         {},
         "send WQEs the requester fetches in one DMA read when the doorbell shows them posted"},
        {"ack_coalesce",
         UnitKind::Count,
         "8",
         "1",
         "1024",
         {},
         "the responder acknowledges at least every N packets even without an AckReq"},
        {"local_ack_delay",
         UnitKind::Count,
         "8",
         "0",
         "31",
         {},
         "reported in the CA attributes: 4.096 us x 2^N the responder may take to ACK"},
        {"max_qp", UnitKind::Count, "65536", "16", "16777215", {}, "queue pairs"},
        {"max_qp_wr", UnitKind::Count, "16384", "1", "1048576", {}, "work requests per queue"},
        {"max_sge", UnitKind::Count, "30", "1", "64", {}, "scatter/gather entries per WQE"},
        {"max_cq", UnitKind::Count, "65536", "1", "16777215", {}, "completion queues"},
        {"max_cqe", UnitKind::Count, "131071", "1", "16777215", {}, "entries per completion queue"},
        {"max_mpt", UnitKind::Count, "131072", "16", "16777215", {}, "memory regions and windows"},
        {"max_mtt", UnitKind::Count, "1048576", "16", "268435456", {}, "translation entries (pages)"},
        {"max_pd", UnitKind::Count, "32768", "1", "16777215", {}, "protection domains"},
        {"max_rd_atom",
         UnitKind::Count,
         "4",
         "1",
         "255",
         {},
         "RDMA read/atomic depth per QP (initiator and responder)"},
        {"max_mcg", UnitKind::Count, "8192", "1", "65536", {}, "multicast groups"},
        {"max_qp_per_mcg", UnitKind::Count, "8", "1", "1024", {}, "QPs attached to one multicast group"},
        {"max_inline", UnitKind::Count, "128", "0", "4096", {}, "bytes of inline data per send WQE"},
        {"verify_crc",
         UnitKind::Text,
         "touched",
         "",
         "",
         {"touched", "always"},
         "receive-side ICRC/VCRC recomputation: for packets a link's error injection touched "
         "(the only source of changed bytes, so the verdicts are the same), or for every packet"},
    });

}  // namespace

HcaParams hca_params_from(const ParamSet& p, std::uint32_t node_id) {
  HcaParams h{};
  h.ports = static_cast<std::uint32_t>(p.count("ports"));
  h.clock_hz = p.frequency("clock");
  const std::uint64_t mtu = p.size("max_mtu");
  h.max_mtu = mtu >= 4096 ? 5 : mtu >= 2048 ? 4 : mtu >= 1024 ? 3 : mtu >= 512 ? 2 : 1;
  h.command_latency = p.time("command_latency");
  h.sma_latency = p.time("sma_latency");
  auto c = [&](const char* n) { return static_cast<std::uint32_t>(p.count(n)); };
  h.doorbell_cycles = c("doorbell_cycles");
  h.wqe_cycles = c("wqe_cycles");
  h.tx_packet_cycles = c("tx_packet_cycles");
  h.rx_packet_cycles = c("rx_packet_cycles");
  h.tpt_cycles = c("tpt_cycles");
  h.cqe_cycles = c("cqe_cycles");
  h.ack_cycles = c("ack_cycles");
  h.atomic_cycles = c("atomic_cycles");
  h.dma_read_depth = c("dma_read_depth");
  h.wqe_prefetch = c("wqe_prefetch");
  h.port_queue = c("port_queue");
  h.loopback_bps = p.bandwidth("loopback_bandwidth");
  h.loopback_latency = p.time("loopback_latency");
  h.ack_coalesce = c("ack_coalesce");
  h.local_ack_delay = static_cast<std::uint8_t>(c("local_ack_delay"));
  h.max_qp = c("max_qp");
  h.max_qp_wr = c("max_qp_wr");
  h.max_sge = c("max_sge");
  h.max_cq = c("max_cq");
  h.max_cqe = c("max_cqe");
  h.max_mpt = c("max_mpt");
  h.max_mtt = c("max_mtt");
  h.max_pd = c("max_pd");
  h.max_rd_atom = c("max_rd_atom");
  h.max_mcg = c("max_mcg");
  h.max_qp_per_mcg = c("max_qp_per_mcg");
  h.max_inline = c("max_inline");
  h.verify_crc_always = p.text("verify_crc") == "always";
  // Mellanox's OUI (00-02-C9) and the node number: unique per simulation.
  h.node_guid = 0x0002c90000000000ULL | (static_cast<std::uint64_t>(node_id + 1) << 8);
  h.bar0 = 0xf0000000ULL;
  return h;
}

}  // namespace nicsim::hca
