#include "core/inspect.h"

#include <map>

namespace nicsim {

namespace {
// By name; a name given twice keeps both (the later one is found first).
std::multimap<std::string, const Inspectable*>& registry() {
  static std::multimap<std::string, const Inspectable*> r;
  return r;
}
}  // namespace

Inspectable::Inspectable(std::string type, std::string name, Fn fn, const void* object)
    : type_(std::move(type)), name_(std::move(name)), fn_(fn), object_(object) {
  registry().emplace(name_, this);
}

Inspectable::~Inspectable() {
  auto [first, last] = registry().equal_range(name_);
  for (auto it = first; it != last; ++it)
    if (it->second == this) {
      registry().erase(it);
      return;
    }
}

InspectRows Inspectable::rows() const {
  InspectRows rows;
  fn_(object_, rows);
  return rows;
}

std::vector<const Inspectable*> Inspectable::all() {
  std::vector<const Inspectable*> out;
  for (const auto& [name, i] : registry()) out.push_back(i);
  return out;
}

const Inspectable* Inspectable::find(const std::string& name) {
  auto [first, last] = registry().equal_range(name);
  if (first == last) return nullptr;
  return std::prev(last)->second;
}

}  // namespace nicsim
