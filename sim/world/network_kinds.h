// Network kinds: what a layer that brings its own network registers with the
// core, beside its NIC kind (NicRegistry): switch kinds, topology helpers,
// packet kinds, packet-capture formats, its own scenario fields (a
// kind-owned extension of the scenario schema) and the rules that check
// them, and the set-up a world needs from it (routing, a management agent).
// Layers register from static initialisers in their own files (a plugin
// from its shared object), so the core names no network.
#pragma once
#include <any>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fabric/fabric.h"
#include "scenario/loader.h"
#include "scenario/locator.h"
#include "scenario/topology.h"

namespace google::protobuf {
class Descriptor;
class Message;
}  // namespace google::protobuf

namespace nicsim {

class World;

// A fabric endpoint and the address the world gave it.
struct EndpointAddress {
  fabric::Device* device;
  std::uint32_t port;
  std::uint16_t address;
};

// A kind of switch (scenario field Switch.kind).
struct SwitchKind {
  std::string name;
  std::string param_scope;        // the scope of its parameters (keys of Switch.param)
  std::uint32_t fixed_ports = 0;  // its port count when the scope has no "ports" count
  bool is_default = false;        // the kind of a switch that names none (one kind may be)
  std::string pcap_format;        // capture format of its links (a registered PcapFormat)
  // Why `key` may not be set on this kind, for a key users might carry over
  // from another kind; empty when the scope's own check should answer.
  std::function<std::string(const std::string& key)> key_error;
  std::function<std::unique_ptr<fabric::Device>(fabric::Fabric&, std::uint32_t device_id, const SwitchSpec&,
                                                const Scenario&)>
      make;
  // Static routing when nothing manages the fabric: programs the switches of
  // this kind (scenario order) so that every endpoint (sequential addresses)
  // is reached, and a multicast group's tree. Optional.
  std::function<void(const std::vector<fabric::Device*>& switches, const std::vector<EndpointAddress>& endpoints)>
      program_routes;
  std::function<void(const std::vector<fabric::Device*>& switches, std::uint16_t group,
                     const std::vector<EndpointAddress>& members)>
      program_multicast;
};

// A topology helper: a member of Topology's `shape` (declared as a schema
// field of message "Topology", oneof "shape") that generates hosts, switches
// and links.
struct TopologyHelper {
  std::string field;
  std::string default_nic;  // NIC kind of the hosts when Topology.nic is empty
  std::string switch_kind;  // kind of the switches it generates
  std::function<bool(const google::protobuf::Message& shape, const std::string& host_prefix, topology::Generated* out,
                     topology::ShapeError* error)>
      expand;
};

// A field a layer adds to a message of the scenario schema: scenario files
// write it like any other field, and errors in it carry file:line:column.
struct SchemaField {
  std::string message;  // "Scenario", "Topology", "Node", ... (package nicsim.scenario)
  std::string oneof;    // the oneof it joins, or empty
  std::string name;
  int number = 0;                                      // unique within the message
  const google::protobuf::Descriptor* type = nullptr;  // the layer's message type
  bool repeated = false;
};

// What a scenario rule sees: the scenario being loaded, the file as parsed
// (every kind's fields, read by name through reflection) and where each
// field was written.
struct ScenarioContext {
  Scenario& sc;
  const google::protobuf::Message& file;
  const Locator& root;
  // Fills `out` from the message-typed field `name` of `parent`; false when
  // the file does not set it.
  static bool field(const google::protobuf::Message& parent, const std::string& name, google::protobuf::Message* out);
};

// A layer's scenario rule, run once per load (in registration order) at its
// stage: after links are placed (ports, link parameters and names known),
// or after everything the core parses but the outputs. Throws ScenarioError.
struct ScenarioRule {
  enum class Stage { LinksPlaced, Parsed };
  std::string name;
  Stage stage = Stage::Parsed;
  std::function<void(ScenarioContext&)> apply;
};

// A packet-capture format: the link type of the file and how a packet is
// framed in it.
struct PcapFormat {
  std::string name;
  std::uint32_t link_type = 0;
  int erf_type = -1;  // >= 0: each packet in an ERF record of this type
};

// Set-up a layer does on a built world. `manage_fabric` returns true when it
// takes over addressing and routing (a management agent that configures the
// fabric on the wire); otherwise the world assigns sequential addresses and
// the switch kinds program static routes.
struct WorldHook {
  std::string name;
  std::function<bool(World&)> manage_fabric;
};

class NetworkKinds {
 public:
  static NetworkKinds& instance();

  void add_switch_kind(SwitchKind k);
  void add_topology_helper(TopologyHelper h);
  void add_schema_field(SchemaField f);
  void add_scenario_rule(ScenarioRule r);
  void add_world_hook(WorldHook h);
  // Packet kinds (PacketMeta::kind) are one byte; 0 is the core's raw kind.
  // A second kind with one id is a std::logic_error.
  void add_packet_kind(std::uint8_t id, std::string name);
  void add_pcap_format(PcapFormat f);
  void set_nic_pcap_format(const std::string& nic_kind, const std::string& format);

  const std::vector<SwitchKind>& switch_kinds() const { return switch_kinds_; }
  const SwitchKind* switch_kind(const std::string& name) const;
  const SwitchKind* default_switch_kind() const;
  std::string switch_kind_names() const;  // "a, b or c": the default first, then by name
  const TopologyHelper* topology_helper(const std::string& field) const;
  const std::vector<TopologyHelper>& topology_helpers() const { return helpers_; }
  const std::vector<SchemaField>& schema_fields() const { return fields_; }
  const std::vector<ScenarioRule>& scenario_rules() const { return rules_; }
  const std::vector<WorldHook>& world_hooks() const { return hooks_; }
  const std::string* packet_kind(std::uint8_t id) const;
  const PcapFormat* pcap_format(const std::string& name) const;
  // The capture format of a NIC kind's links; empty when it has none.
  std::string nic_pcap_format(const std::string& nic_kind) const;

 private:
  std::vector<SwitchKind> switch_kinds_;
  std::vector<TopologyHelper> helpers_;
  std::vector<SchemaField> fields_;
  std::vector<ScenarioRule> rules_;
  std::vector<WorldHook> hooks_;
  std::map<std::uint8_t, std::string> packet_kinds_{{0, "raw"}};
  std::vector<PcapFormat> pcap_formats_;
  std::map<std::string, std::string, std::less<>> nic_formats_;
};

}  // namespace nicsim
