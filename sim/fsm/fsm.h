// The FSM registry: one way to declare a protocol state machine type and one
// transition call that every FSM in nicsim uses. A type declares its states
// and its legal transitions (each with a name); an instance names its object.
// transition() checks legality, applies, and reports (object, from, to,
// cause, time) to every listener: the tracer, the timeline, the debugger.
// The registry counts taken transitions per type for the coverage report.
// An illegal transition changes nothing and is a SimError naming both states.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.h"

namespace nicsim {

struct FsmTransitionDecl {
  int from;
  int to;
  const char* name;  // e.g. "link_down"
};

class FsmType {
 public:
  FsmType(std::string name, std::vector<std::string> states,
          std::vector<FsmTransitionDecl> transitions);
  const std::string& name() const { return name_; }
  const std::vector<std::string>& states() const { return states_; }
  const std::vector<FsmTransitionDecl>& transitions() const { return transitions_; }
  const std::string& state_name(int s) const { return states_.at(static_cast<std::size_t>(s)); }
  // Index into transitions(), or -1 when from->to is not declared.
  int find(int from, int to) const { return legal_[static_cast<std::size_t>(from * n_ + to)]; }
  std::uint32_t id() const { return id_; }

 private:
  friend class FsmRegistry;
  std::string name_;
  std::vector<std::string> states_;
  std::vector<FsmTransitionDecl> transitions_;
  std::vector<int> legal_;
  int n_;
  std::uint32_t id_ = 0;
};

// One state machine instance: the object it belongs to and its state.
class Fsm {
 public:
  Fsm(const FsmType& type, std::string object, std::uint32_t device, int initial);
  const FsmType& type() const { return *type_; }
  const std::string& object() const { return object_; }
  std::uint32_t device() const { return device_; }
  int state() const { return state_; }
  const std::string& state_name() const { return type_->state_name(state_); }
  // The one transition call. Returns false (and reports an error) if illegal.
  bool to(int next, std::string_view cause);

 private:
  friend class FsmRegistry;
  const FsmType* type_;
  std::string object_;
  std::uint32_t device_;
  int state_;
};

struct FsmTransitionEvent {
  const Fsm& fsm;
  int from;
  int to;
  int transition;  // index into fsm.type().transitions()
  std::string_view cause;
  Tick time;
};

class FsmRegistry {
 public:
  // Types are registered once per process (function-local statics are fine);
  // the registry does not own them.
  void declare(FsmType& type);
  bool transition(Fsm& fsm, int next, std::string_view cause);
  using Listener = std::function<void(const FsmTransitionEvent&)>;
  void listen(Listener l) { listeners_.push_back(std::move(l)); }

  struct Coverage {
    const FsmType* type;
    std::vector<std::uint64_t> taken;  // per declared transition
  };
  const std::vector<Coverage>& coverage() const { return coverage_; }

 private:
  Coverage& coverage_of(const FsmType& type);
  std::vector<Listener> listeners_;
  std::vector<Coverage> coverage_;
};

// Declares `enum class Name` plus `Name##_names()` from an X-macro list, so
// state names are generated from the enum and never kept as a second list.
#define NICSIM_FSM_STATES(Name, LIST)                                     \
  enum class Name : int { LIST(NICSIM_FSM_ENUM_ITEM) };                   \
  inline std::vector<std::string> Name##_names() { return {LIST(NICSIM_FSM_NAME_ITEM)}; }
#define NICSIM_FSM_ENUM_ITEM(s) s,
#define NICSIM_FSM_NAME_ITEM(s) #s,

}  // namespace nicsim
