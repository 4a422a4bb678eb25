// Parameters of Elan Kernel Comms, in the node's "host" scope: the protocol
// timers (ep.*) and the CPU cost classes (cost.ep_*, charged with
// EpNode::cpu). Cost defaults describe the 2002-era node of host_params.cc
// running the Quadrics kernel module: a call is a few hundred instructions
// plus the cache misses on descriptors the Elan wrote; copies of small
// messages are charged on top at copy_bandwidth.
#include "core/params.h"

namespace nicsim::ep {
namespace {

const ParamRegistration ep_params(
    "host", "",
    {
        {"ep.heartbeat_period", UnitKind::Time, "1ms", "1us", "10s", {},
         "Kernel Comms membership: heartbeat on idle connected circuits and probe of dead nodes, "
         "every this period"},
        {"ep.heartbeat_timeout", UnitKind::Time, "5ms", "2us", "100s", {},
         "a connected circuit with nothing heard from the peer for this long fails (ENETRESET)"},
        {"ep.connect_timeout", UnitKind::Time, "200us", "1us", "10s", {},
         "timeout of the special message that sets up a virtual circuit; expiry marks the node dead"},
        {"ep.reset_hold", UnitKind::Time, "1ms", "0ps", "10s", {},
         "a failed circuit refuses transmits (ENETRESET) this long before it may be set up again"},
        {"ep.special_resend", UnitKind::Time, "5us", "100ns", "1s", {},
         "a special message whose DMA failed on the network is sent again after this, while its timeout "
         "allows (messages refused by a full queue are retried by the Elan3 driver, elan3.dma_retry_*)"},
        {"ep.txd_poll", UnitKind::Time, "2us", "100ns", "1s", {},
         "a transmit that may sleep and finds no free descriptor while the transmitter's others are polled "
         "(EP_NO_INTERRUPT) polls them again this often"},
        {"ep.hw_broadcast", UnitKind::Count, "0", "0", "1", {},
         "1: a multicast whose destination set is one whole contiguous range not holding the sender "
         "sends its envelope by one hardware broadcast (QueuedBroadcast) and every node pulls the data "
         "from the sender; 0 (default): always the arity-3 tree, which spreads the data over the "
         "nodes' links instead of serialising every pull on the sender's"},
        {"cost.ep_call", UnitKind::Time, "200ns", "0ps", "1s", {},
         "entry of any Kernel Comms call: argument checks, locks"},
        {"cost.ep_transmit", UnitKind::Time, "400ns", "0ps", "1s", {},
         "a transmit: descriptor, envelope build, event priming (plus the DMA issue of the driver); "
         "small message data is charged on top at copy_bandwidth"},
        {"cost.ep_receive", UnitKind::Time, "300ns", "0ps", "1s", {},
         "one arrived message in the queue interrupt: envelope read (cache miss), dispatch"},
        {"cost.ep_complete", UnitKind::Time, "250ns", "0ps", "1s", {},
         "one completed transmit or receive: descriptor bookkeeping before its callback"},
        {"cost.ep_poll", UnitKind::Time, "80ns", "0ps", "1s", {},
         "one active transmit looked at by ep_poll_transmits (event word read)"},
        {"cost.ep_queue_receive", UnitKind::Time, "300ns", "0ps", "1s", {},
         "ep_queue_receive / ep_requeue_receive: receive descriptor set-up"},
        {"cost.ep_install", UnitKind::Time, "20us", "0ps", "1s", {},
         "installing or removing a receiver, allocating or freeing a transmitter"},
        {"cost.ep_map", UnitKind::Time, "1us", "0ps", "1s", {},
         "an elan3_dma_* / elan3_dvma_* call (plus the driver's PTE costs)"},
        {"cost.ep_control", UnitKind::Time, "500ns", "0ps", "1s", {},
         "a circuit or membership control message, sent or received"},
    });

}  // namespace
}  // namespace nicsim::ep
