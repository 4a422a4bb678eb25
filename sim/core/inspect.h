// Objects the debugger can show as a table: a layer gives each object it
// wants shown (a queue pair's context, a completion queue, a DMA queue, a
// link's queues) an Inspectable, which registers the object under its name
// and type for as long as it lives. Showing it calls the layer's function,
// which writes (field, value) rows; nothing is computed otherwise.
#pragma once
#include <string>
#include <vector>

namespace nicsim {

struct InspectRow {
  std::string field;
  std::string value;
};
using InspectRows = std::vector<InspectRow>;

class Inspectable {
 public:
  using Fn = void (*)(const void* object, InspectRows& rows);
  // Registers `object` as `name` of `type` (e.g. "h0.nic.cq2", "cq").
  Inspectable(std::string type, std::string name, Fn fn, const void* object);
  ~Inspectable();
  Inspectable(const Inspectable&) = delete;
  Inspectable& operator=(const Inspectable&) = delete;

  const std::string& type() const { return type_; }
  const std::string& name() const { return name_; }
  InspectRows rows() const;

  // Every registered object, in order of name; one by name (nullptr: none).
  static std::vector<const Inspectable*> all();
  static const Inspectable* find(const std::string& name);

 private:
  std::string type_;
  std::string name_;
  Fn fn_;
  const void* object_;
};

// Adds a (field, value) row.
inline void add_row(InspectRows& rows, std::string field, std::string value) {
  rows.push_back(InspectRow{std::move(field), std::move(value)});
}

}  // namespace nicsim
