#include "fsm/fsm.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>

#include "core/sim.h"

namespace nicsim {

namespace {
std::uint32_t next_type_id() {
  static std::atomic<std::uint32_t> next{0};
  return next++;
}
}  // namespace

FsmType::FsmType(std::string name, std::vector<std::string> states, std::vector<std::string> events,
                 std::vector<FsmRow> rows)
    : name_(std::move(name)),
      states_(std::move(states)),
      events_(std::move(events)),
      rows_(std::move(rows)),
      n_events_(static_cast<int>(events_.size())),
      id_(next_type_id()) {
  const int n_states = static_cast<int>(states_.size());
  table_.assign(static_cast<std::size_t>(n_states * n_events_), -1);
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    const FsmRow& r = rows_[i];
    if (r.from < 0 || r.from >= n_states || r.to < 0 || r.to >= n_states || r.event < 0 || r.event >= n_events_)
      throw std::logic_error(fmt::format("FSM {}: row '{}' names a state or event out of range", name_, r.action));
    int& slot = table_[static_cast<std::size_t>(r.from * n_events_ + r.event)];
    if (slot != -1)
      throw std::logic_error(
          fmt::format("FSM {}: state {} handles event {} twice", name_, states_[r.from], events_[r.event]));
    slot = static_cast<int>(i);
  }
}

FsmBase::FsmBase(const FsmType& type, std::string object, std::uint32_t device, int initial)
    : type_(&type), object_(std::move(object)), device_(device), state_(initial) {
  enlist();
}

FsmBase::FsmBase(const FsmBase& o) : type_(o.type_), object_(o.object_), device_(o.device_), state_(o.state_) {
  enlist();
}

FsmBase& FsmBase::operator=(const FsmBase& o) {
  type_ = o.type_;
  object_ = o.object_;
  device_ = o.device_;
  state_ = o.state_;
  return *this;
}

FsmBase::~FsmBase() {
  // The registry may be gone with its Sim (an instance that outlived it).
  if (registry_ && Sim::exists() && &Sim::get().fsm() == registry_) registry_->instances_.erase(this);
}

void FsmBase::enlist() {
  if (!Sim::exists()) return;
  registry_ = &Sim::get().fsm();
  registry_->instances_.emplace(this, registry_->created_++);
}

std::vector<const FsmBase*> FsmRegistry::instances() const {
  std::vector<std::pair<std::uint64_t, const FsmBase*>> by_creation;
  by_creation.reserve(instances_.size());
  for (const auto& [fsm, n] : instances_) by_creation.emplace_back(n, fsm);
  std::sort(by_creation.begin(), by_creation.end());
  std::vector<const FsmBase*> out;
  out.reserve(by_creation.size());
  for (const auto& [n, fsm] : by_creation) out.push_back(fsm);
  return out;
}

bool FsmBase::fire_index(int event, std::string_view cause) { return Sim::get().fsm().fire(*this, event, cause); }

FsmRegistry::Coverage& FsmRegistry::coverage_of(const FsmType& type) {
  if (type.id() >= slot_.size()) slot_.resize(type.id() + 1, -1);
  int& slot = slot_[type.id()];
  if (slot < 0) {
    slot = static_cast<int>(coverage_.size());
    coverage_.push_back(Coverage{&type, std::vector<std::uint64_t>(type.rows().size(), 0)});
  }
  return coverage_[static_cast<std::size_t>(slot)];
}

bool FsmRegistry::fire(FsmBase& fsm, int event, std::string_view cause) {
  const FsmType& type = fsm.type();
  const int from = fsm.state_;
  const int row = type.find(from, event);
  if (row < 0) {
    Sim::get().error(fsm.object(), fmt::format("{} {}: state {} does not handle event {} ({})", type.name(),
                                               fsm.object(), type.state_name(from), type.event_name(event), cause));
    return false;
  }
  const int to = type.rows()[static_cast<std::size_t>(row)].to;
  fsm.state_ = to;
  // A device another process runs (its replica here changes state while
  // the world is set up) is that process's to count and report.
  if (!counted_devices_.empty() && fsm.device() < counted_devices_.size() && !counted_devices_[fsm.device()])
    return true;
  ++transitions_;
  ++coverage_of(type).taken[static_cast<std::size_t>(row)];
  const FsmTransitionEvent ev{fsm, from, to, event, row, cause, now()};
  for (auto& l : listeners_)
    if (l) l(ev);
  return true;
}

}  // namespace nicsim
