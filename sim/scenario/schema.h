// The scenario schema as scenario files are read: sim/proto/scenario.proto
// plus every field the network kinds add to its messages (SchemaField), so
// that a kind's settings are written like any other field and its errors
// carry file:line:column.
#pragma once
#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>

#include <memory>

namespace nicsim {

class ScenarioSchema {
 public:
  ScenarioSchema();  // from NetworkKinds::instance().schema_fields()
  ScenarioSchema(const ScenarioSchema&) = delete;
  const google::protobuf::Descriptor* scenario() const { return scenario_; }
  std::unique_ptr<google::protobuf::Message> new_scenario();

 private:
  void add_file(const google::protobuf::FileDescriptor* file);

  google::protobuf::DescriptorPool pool_;
  google::protobuf::DynamicMessageFactory factory_{&pool_};
  const google::protobuf::Descriptor* scenario_ = nullptr;
};

}  // namespace nicsim
