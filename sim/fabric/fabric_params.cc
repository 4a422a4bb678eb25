// Parameters of links and the raw NIC. Link defaults describe a 4X SDR-class
// link: 10 Gb/s signalling is 8 Gb/s of data after 8b/10b coding; about
// 5 ns per metre of copper.
#include "core/params.h"

namespace nicsim::fabric {
namespace {

const ParamRegistration link_params(
    "link", "a full-duplex fabric link (both directions alike)",
    {
        {"bandwidth",
         UnitKind::Bandwidth,
         "8Gbps",
         "1Mbps",
         "1Tbps",
         {},
         "data rate per direction (after line coding)"},
        {"delay", UnitKind::Time, "5ns", "0ps", "1s", {}, "propagation delay (about 5 ns per metre of copper)"},
        {"vls", UnitKind::Count, "1", "1", "15", {}, "data virtual lanes"},
        {"vl_buffer",
         UnitKind::Size,
         "8KiB",
         "64B",
         "1MiB",
         {},
         "receive buffer per VL at each end; credits are 64-byte blocks of it"},
        {"vl15_buffer",
         UnitKind::Count,
         "2",
         "1",
         "64",
         {},
         "VL15 (subnet management) receive buffer at each end, in packets; VL15 has no credits, "
         "a packet arriving at a full buffer is dropped"},
        {"drop_rate", UnitKind::Ratio, "0", "0", "1", {}, "probability that a packet is lost on the wire"},
        {"bit_error_rate",
         UnitKind::Ratio,
         "0",
         "0",
         "0.001",
         {},
         "probability that any one bit is flipped (one flip per hit packet)"},
    });

const ParamRegistration raw_nic_params(
    "nic.raw", "a bare fabric endpoint: injects and sinks raw packets (for fabric studies)",
    {
        {"ports", UnitKind::Count, "1", "1", "2", {}, "fabric ports"},
        {"rx_rate",
         UnitKind::Bandwidth,
         "0bps",
         "0bps",
         "1Tbps",
         {},
         "rate at which received packets are drained; 0 = as fast as they arrive"},
        {"tx_queue",
         UnitKind::Count,
         "64",
         "1",
         "65536",
         {},
         "packets the source queue holds; generated packets beyond it are counted and discarded"},
        {"verify", UnitKind::Bool, "true", "", "", {}, "check every received payload byte"},
    });

}  // namespace
}  // namespace nicsim::fabric
