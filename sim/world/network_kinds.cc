#include "world/network_kinds.h"

#include <fmt/format.h>
#include <google/protobuf/message.h>

#include <algorithm>
#include <stdexcept>

namespace nicsim {

NetworkKinds& NetworkKinds::instance() {
  static NetworkKinds kinds;
  return kinds;
}

void NetworkKinds::add_switch_kind(SwitchKind k) {
  if (switch_kind(k.name)) throw std::logic_error(fmt::format("switch kind '{}' registered twice", k.name));
  if (k.is_default && default_switch_kind())
    throw std::logic_error(
        fmt::format("switch kinds '{}' and '{}' both claim to be the default", default_switch_kind()->name, k.name));
  switch_kinds_.push_back(std::move(k));
}

void NetworkKinds::add_topology_helper(TopologyHelper h) {
  if (topology_helper(h.field)) throw std::logic_error(fmt::format("topology helper '{}' registered twice", h.field));
  helpers_.push_back(std::move(h));
}

void NetworkKinds::add_schema_field(SchemaField f) {
  for (const SchemaField& g : fields_)
    if (g.message == f.message && (g.name == f.name || g.number == f.number))
      throw std::logic_error(fmt::format("scenario fields {}.{} and {}.{} clash (name or number {})", g.message, g.name,
                                         f.message, f.name, f.number));
  if (!f.type) throw std::logic_error(fmt::format("scenario field {}.{} has no message type", f.message, f.name));
  fields_.push_back(std::move(f));
}

void NetworkKinds::add_scenario_rule(ScenarioRule r) { rules_.push_back(std::move(r)); }

void NetworkKinds::add_world_hook(WorldHook h) { hooks_.push_back(std::move(h)); }

void NetworkKinds::add_packet_kind(std::uint8_t id, std::string name) {
  auto [it, inserted] = packet_kinds_.try_emplace(id, name);
  if (!inserted)
    throw std::logic_error(fmt::format("packet kind {} registered as '{}' and '{}'", id, it->second, name));
}

void NetworkKinds::add_pcap_format(PcapFormat f) {
  if (pcap_format(f.name)) throw std::logic_error(fmt::format("capture format '{}' registered twice", f.name));
  pcap_formats_.push_back(std::move(f));
}

void NetworkKinds::set_nic_pcap_format(const std::string& nic_kind, const std::string& format) {
  nic_formats_[nic_kind] = format;
}

const SwitchKind* NetworkKinds::switch_kind(const std::string& name) const {
  for (const SwitchKind& k : switch_kinds_)
    if (k.name == name) return &k;
  return nullptr;
}

const SwitchKind* NetworkKinds::default_switch_kind() const {
  for (const SwitchKind& k : switch_kinds_)
    if (k.is_default) return &k;
  return nullptr;
}

std::string NetworkKinds::switch_kind_names() const {
  std::vector<std::string> names;
  if (const SwitchKind* d = default_switch_kind()) names.push_back(d->name);
  std::vector<std::string> rest;
  for (const SwitchKind& k : switch_kinds_)
    if (!k.is_default) rest.push_back(k.name);
  std::sort(rest.begin(), rest.end());
  names.insert(names.end(), rest.begin(), rest.end());
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out.empty() ? "none registered" : out;
}

const TopologyHelper* NetworkKinds::topology_helper(const std::string& field) const {
  for (const TopologyHelper& h : helpers_)
    if (h.field == field) return &h;
  return nullptr;
}

const std::string* NetworkKinds::packet_kind(std::uint8_t id) const {
  auto it = packet_kinds_.find(id);
  return it == packet_kinds_.end() ? nullptr : &it->second;
}

const PcapFormat* NetworkKinds::pcap_format(const std::string& name) const {
  for (const PcapFormat& f : pcap_formats_)
    if (f.name == name) return &f;
  return nullptr;
}

std::string NetworkKinds::nic_pcap_format(const std::string& nic_kind) const {
  auto it = nic_formats_.find(nic_kind);
  return it == nic_formats_.end() ? std::string() : it->second;
}

bool ScenarioContext::field(const google::protobuf::Message& parent, const std::string& name,
                            google::protobuf::Message* out) {
  const google::protobuf::FieldDescriptor* f = parent.GetDescriptor()->FindFieldByName(name);
  if (!f || f->is_repeated() || f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) return false;
  const google::protobuf::Reflection* r = parent.GetReflection();
  if (!r->HasField(parent, f)) return false;
  return out->ParseFromString(r->GetMessage(parent, f).SerializeAsString());
}

}  // namespace nicsim
