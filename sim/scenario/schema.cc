#include "scenario/schema.h"

#include <fmt/format.h>
#include <google/protobuf/descriptor.pb.h>

#include <stdexcept>

#include "scenario.pb.h"
#include "world/network_kinds.h"

namespace nicsim {

namespace gp = google::protobuf;

namespace {

gp::DescriptorProto* message_named(gp::FileDescriptorProto& file, const std::string& name) {
  for (gp::DescriptorProto& m : *file.mutable_message_type())
    if (m.name() == name) return &m;
  return nullptr;
}

// Adds `f` to the message of `file` it extends; a member of a oneof goes
// right after the oneof's last field (a oneof's fields are consecutive).
void add_field(gp::FileDescriptorProto& file, const SchemaField& f) {
  gp::DescriptorProto* m = message_named(file, f.message);
  if (!m) throw std::logic_error(fmt::format("scenario field '{}' extends unknown message '{}'", f.name, f.message));
  gp::FieldDescriptorProto field;
  field.set_name(f.name);
  field.set_number(f.number);
  field.set_label(f.repeated ? gp::FieldDescriptorProto::LABEL_REPEATED : gp::FieldDescriptorProto::LABEL_OPTIONAL);
  field.set_type(gp::FieldDescriptorProto::TYPE_MESSAGE);
  field.set_type_name("." + f.type->full_name());
  int position = m->field_size();
  if (!f.oneof.empty()) {
    int oneof = -1;
    for (int i = 0; i < m->oneof_decl_size(); ++i)
      if (m->oneof_decl(i).name() == f.oneof) oneof = i;
    if (oneof < 0)
      throw std::logic_error(fmt::format("scenario field '{}' joins unknown oneof {}.{}", f.name, f.message, f.oneof));
    field.set_oneof_index(oneof);
    for (int i = 0; i < m->field_size(); ++i)
      if (m->field(i).has_oneof_index() && m->field(i).oneof_index() == oneof) position = i + 1;
  }
  *m->add_field() = field;
  for (int i = m->field_size() - 1; i > position; --i) m->mutable_field()->SwapElements(i, i - 1);
}

}  // namespace

void ScenarioSchema::add_file(const gp::FileDescriptor* file) {
  if (pool_.FindFileByName(file->name())) return;
  for (int i = 0; i < file->dependency_count(); ++i) add_file(file->dependency(i));
  gp::FileDescriptorProto proto;
  file->CopyTo(&proto);
  if (!pool_.BuildFile(proto)) throw std::logic_error(fmt::format("schema file '{}' does not build", file->name()));
}

ScenarioSchema::ScenarioSchema() {
  const gp::FileDescriptor* core = scenario::Scenario::descriptor()->file();
  gp::FileDescriptorProto merged;
  core->CopyTo(&merged);
  for (int i = 0; i < core->dependency_count(); ++i) add_file(core->dependency(i));
  for (const SchemaField& f : NetworkKinds::instance().schema_fields()) {
    add_file(f.type->file());
    bool listed = false;
    for (const std::string& d : merged.dependency()) listed = listed || d == f.type->file()->name();
    if (!listed) merged.add_dependency(f.type->file()->name());
    add_field(merged, f);
  }
  const gp::FileDescriptor* built = pool_.BuildFile(merged);
  if (!built) throw std::logic_error("the scenario schema with the network kinds' fields does not build");
  scenario_ = built->FindMessageTypeByName("Scenario");
}

std::unique_ptr<gp::Message> ScenarioSchema::new_scenario() {
  return std::unique_ptr<gp::Message>(factory_.GetPrototype(scenario_)->New());
}

}  // namespace nicsim
