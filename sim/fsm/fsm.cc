#include "fsm/fsm.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/sim.h"

namespace nicsim {

FsmType::FsmType(std::string name, std::vector<std::string> states,
                 std::vector<FsmTransitionDecl> transitions)
    : name_(std::move(name)),
      states_(std::move(states)),
      transitions_(std::move(transitions)),
      n_(static_cast<int>(states_.size())) {
  legal_.assign(static_cast<std::size_t>(n_ * n_), -1);
  for (std::size_t i = 0; i < transitions_.size(); ++i) {
    const auto& t = transitions_[i];
    if (t.from < 0 || t.from >= n_ || t.to < 0 || t.to >= n_)
      throw std::logic_error(fmt::format("FSM {}: transition '{}' names a state out of range", name_, t.name));
    int& slot = legal_[static_cast<std::size_t>(t.from * n_ + t.to)];
    if (slot != -1)
      throw std::logic_error(fmt::format("FSM {}: {} -> {} declared twice", name_, states_[t.from], states_[t.to]));
    slot = static_cast<int>(i);
  }
}

Fsm::Fsm(const FsmType& type, std::string object, std::uint32_t device, int initial)
    : type_(&type), object_(std::move(object)), device_(device), state_(initial) {}

bool Fsm::to(int next, std::string_view cause) { return Sim::get().fsm().transition(*this, next, cause); }

void FsmRegistry::declare(FsmType& type) { coverage_of(type); }

FsmRegistry::Coverage& FsmRegistry::coverage_of(const FsmType& type) {
  for (auto& c : coverage_)
    if (c.type == &type) return c;
  const_cast<FsmType&>(type).id_ = static_cast<std::uint32_t>(coverage_.size());
  coverage_.push_back(Coverage{&type, std::vector<std::uint64_t>(type.transitions().size(), 0)});
  return coverage_.back();
}

bool FsmRegistry::transition(Fsm& fsm, int next, std::string_view cause) {
  const FsmType& type = fsm.type();
  int from = fsm.state();
  if (next < 0 || next >= static_cast<int>(type.states().size())) {
    Sim::get().error(fsm.object(), fmt::format("{}: transition to undeclared state number {} ({})", type.name(), next, cause));
    return false;
  }
  int t = type.find(from, next);
  if (t < 0) {
    Sim::get().error(fsm.object(), fmt::format("{}: illegal transition {} -> {} ({})", type.name(),
                                               type.state_name(from), type.state_name(next), cause));
    return false;
  }
  fsm.state_ = next;
  ++coverage_of(type).taken[static_cast<std::size_t>(t)];
  FsmTransitionEvent ev{fsm, from, next, t, cause, now()};
  for (auto& l : listeners_) l(ev);
  return true;
}

}  // namespace nicsim
