// The InfiniBand fabric as a network kind: the switch kind "ib" (the
// default), its parameters, static routing for runs without a subnet
// manager, its packets and their capture format.
#include "core/params.h"
#include "fabric/remote_device.h"
#include "ib_fabric/routing.h"
#include "ib_fabric/switch.h"
#include "ib_wire/ib_pcap.h"
#include "ib_wire/ib_wire.h"
#include "world/network_kinds.h"

namespace nicsim::fabric {

namespace {

const ParamRegistration switch_params(
    "switch", "an InfiniBand switch with linear and multicast forwarding tables",
    {
        {"ports", UnitKind::Count, "8", "1", "254", {}, "number of external ports"},
        {"hop_latency",
         UnitKind::Time,
         "200ns",
         "0ps",
         "100us",
         {},
         "head in to head out, port to port (InfiniScale-class)"},
        {"mode",
         UnitKind::Text,
         "cut_through",
         "",
         "",
         {"cut_through", "store_and_forward"},
         "forwarding: start output once the header is in, or once the whole packet is"},
        {"sma_latency",
         UnitKind::Time,
         "1us",
         "0ps",
         "10ms",
         {},
         "management port 0: time the switch's SMA spends on one SMP (answer or directed-route hop)"},
        {"input_queue",
         UnitKind::Text,
         "fifo",
         "",
         "",
         {"fifo", "any"},
         "fifo: an input VL's packets leave in order, one at a time, each waiting until the one ahead has "
         "crossed (head-of-line blocking, as an input-buffered crossbar); any: each goes to its output as soon as "
         "it is routed"},
        {"routing",
         UnitKind::Text,
         "auto",
         "",
         "",
         {"auto", "minhop", "ftree", "updn"},
         "static routing engine when no subnet manager runs (the first IB switch's setting holds for the "
         "fabric): auto = ftree on a fat tree, minhop otherwise (ib_fabric/routing_engine.h)"},
    });

// The routing engine a switch is set to, whichever process runs it.
routing::Engine routing_engine_of(Device* d) {
  if (auto* s = dynamic_cast<Switch*>(d)) return s->routing_engine();
  routing::Engine engine = routing::Engine::Auto;
  if (auto* remote = dynamic_cast<RemoteDevice*>(d)) routing::parse_engine(remote->params().text("routing"), &engine);
  return engine;
}

std::vector<fabric::EndpointAddress> ib_endpoints(const std::vector<nicsim::EndpointAddress>& endpoints) {
  std::vector<fabric::EndpointAddress> out;
  for (const auto& e : endpoints) out.push_back({e.device, e.port, e.address});
  return out;
}

void register_ib_kind() {
  NetworkKinds& kinds = NetworkKinds::instance();
  kinds.add_packet_kind(kPacketIb, "ib");
  kinds.add_pcap_format({"infiniband", kLinktypeErf, kErfTypeInfiniband});
  SwitchKind sw;
  sw.name = "ib";
  sw.param_scope = "switch";
  sw.is_default = true;
  sw.pcap_format = "infiniband";
  sw.make = [](Fabric& fabric, std::uint32_t id, const SwitchSpec& spec, const Scenario&) -> std::unique_ptr<Device> {
    return std::make_unique<Switch>(fabric, id, spec.name, spec.params);
  };
  sw.program_routes = [](const std::vector<Device*>& switches, const std::vector<nicsim::EndpointAddress>& endpoints) {
    if (!switches.empty())
      program_unicast_routes(switches, ib_endpoints(endpoints), routing_engine_of(switches.front()));
  };
  sw.program_multicast = [](const std::vector<Device*>& switches, std::uint16_t group,
                            const std::vector<nicsim::EndpointAddress>& members) {
    program_multicast_tree(switches, group, ib_endpoints(members));
  };
  kinds.add_switch_kind(std::move(sw));
}

const bool registered = (register_ib_kind(), true);

}  // namespace
}  // namespace nicsim::fabric
