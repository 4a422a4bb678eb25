// The FSM registry: typed machines fire events from a (state, event) table,
// report (object, from, to, event, cause, time) to listeners, refuse an
// event the state does not handle, and count (state, event) pairs taken.
#include <gtest/gtest.h>

#include <memory>

#include <stdexcept>
#include <string>
#include <vector>

#include "core/sim.h"
#include "fsm/fsm.h"

using namespace nicsim;

namespace {

#define TEST_DOOR_STATES(X) X(Closed) X(Open) X(Locked)
#define TEST_DOOR_EVENTS(X) X(Push) X(Pull) X(Lock) X(Unlock) X(Kick)
NICSIM_FSM_ENUM(DoorState, TEST_DOOR_STATES)
NICSIM_FSM_ENUM(DoorEvent, TEST_DOOR_EVENTS)

struct DoorMachine {
  using State = DoorState;
  using Event = DoorEvent;
  static const FsmType& type() {
    using S = DoorState;
    using E = DoorEvent;
    // Kick opens a closed door and a locked one alike: one event, two pairs.
    static const FsmType t = make_fsm_type<DoorMachine>("door", {{S::Closed, E::Push, S::Open, "open"},
                                                                 {S::Open, E::Pull, S::Closed, "close"},
                                                                 {S::Closed, E::Lock, S::Locked, "lock"},
                                                                 {S::Locked, E::Unlock, S::Closed, "unlock"},
                                                                 {S::Closed, E::Kick, S::Open, "break_in"},
                                                                 {S::Locked, E::Kick, S::Open, "break_in"}});
    return t;
  }
};

struct Seen {
  std::string object, from, to, event, cause;
  DoorEvent typed_event;
  DoorState typed_to;
  Tick time;
};

TEST(Fsm, NamesComeFromTheEnums) {
  EXPECT_STREQ(fsm_name(DoorState::Locked), "Locked");
  EXPECT_STREQ(fsm_name(DoorEvent::Unlock), "Unlock");
  const FsmType& t = DoorMachine::type();
  EXPECT_EQ(t.name(), "door");
  EXPECT_EQ(t.states(), (std::vector<std::string>{"Closed", "Open", "Locked"}));
  EXPECT_EQ(t.events(), (std::vector<std::string>{"Push", "Pull", "Lock", "Unlock", "Kick"}));
  EXPECT_EQ(Fsm<DoorMachine>::next(DoorState::Locked, DoorEvent::Kick), DoorState::Open);
  EXPECT_EQ(Fsm<DoorMachine>::next(DoorState::Open, DoorEvent::Lock), std::nullopt);
}

TEST(Fsm, LegalEventsMoveTheMachineAndReachListeners) {
  Sim sim(1);
  sim.fsm().declare<DoorMachine>();
  Fsm<DoorMachine> door("front_door", 3, DoorState::Closed);
  std::vector<Seen> seen;
  sim.fsm().listen([&](const FsmTransitionEvent& ev) {
    ASSERT_TRUE(ev.is<DoorMachine>());
    EXPECT_EQ(&ev.fsm, &door);
    const FsmType& t = ev.fsm.type();
    seen.push_back({ev.fsm.object(), t.state_name(ev.from), t.state_name(ev.to), t.event_name(ev.event),
                    std::string(ev.cause), ev.event_as<DoorMachine>(), ev.to_as<DoorMachine>(), ev.time});
  });
  EXPECT_TRUE(door.handles(DoorEvent::Push));
  EXPECT_FALSE(door.handles(DoorEvent::Pull));
  EXPECT_TRUE(door.fire(DoorEvent::Push, "visitor"));
  EXPECT_EQ(door.state(), DoorState::Open);
  EXPECT_EQ(door.state_name(), "Open");
  EXPECT_TRUE(door.fire(DoorEvent::Pull, "draught"));
  EXPECT_EQ(door.state(), DoorState::Closed);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].object, "front_door");
  EXPECT_EQ(seen[0].from, "Closed");
  EXPECT_EQ(seen[0].to, "Open");
  EXPECT_EQ(seen[0].event, "Push");
  EXPECT_EQ(seen[0].cause, "visitor");
  EXPECT_EQ(seen[0].typed_event, DoorEvent::Push);
  EXPECT_EQ(seen[0].typed_to, DoorState::Open);
  EXPECT_EQ(seen[0].time, 0u);
  EXPECT_EQ(seen[1].event, "Pull");
  EXPECT_EQ(seen[1].cause, "draught");
  EXPECT_TRUE(sim.errors().empty());
}

TEST(Fsm, TheRegistryKnowsEveryLiveInstanceInOrderOfCreation) {
  Sim sim(1);
  auto back = std::make_unique<Fsm<DoorMachine>>("back_door", 1, DoorState::Closed);
  Fsm<DoorMachine> front("front_door", 1, DoorState::Open);
  std::vector<Fsm<DoorMachine>> copies(2, front);  // copies are instances too
  auto names = [&] {
    std::vector<std::string> out;
    for (const FsmBase* f : sim.fsm().instances()) out.push_back(f->object() + ":" + f->state_name());
    return out;
  };
  EXPECT_EQ(names(),
            (std::vector<std::string>{"back_door:Closed", "front_door:Open", "front_door:Open", "front_door:Open"}));
  back.reset();
  copies.clear();
  EXPECT_EQ(names(), (std::vector<std::string>{"front_door:Open"}));
  EXPECT_TRUE(front.fire(DoorEvent::Pull, "wind"));
  EXPECT_EQ(sim.fsm().transitions(), 1u);
}

TEST(Fsm, UnhandledEventIsAnErrorNamingMachineObjectStateAndEvent) {
  Sim sim(1);
  sim.fsm().declare<DoorMachine>();
  Fsm<DoorMachine> door("front_door", 0, DoorState::Open);
  int seen = 0;
  sim.fsm().listen([&](const FsmTransitionEvent&) { ++seen; });
  EXPECT_FALSE(door.fire(DoorEvent::Lock, "burglar alarm"));  // Open does not handle Lock
  EXPECT_EQ(door.state(), DoorState::Open);
  EXPECT_EQ(seen, 0);
  ASSERT_EQ(sim.errors().all().size(), 1u);
  const SimError& e = sim.errors().all()[0];
  EXPECT_EQ(e.where, "front_door");
  for (const char* part : {"door", "front_door", "Open", "Lock", "burglar alarm"})
    EXPECT_NE(e.message.find(part), std::string::npos) << part << " missing from: " << e.message;
  ASSERT_EQ(sim.fsm().coverage().size(), 1u);
  for (std::uint64_t n : sim.fsm().coverage()[0].taken) EXPECT_EQ(n, 0u);
}

TEST(Fsm, CoverageCountsStateEventPairs) {
  Sim sim(1);
  sim.fsm().declare<DoorMachine>();
  Fsm<DoorMachine> a("a", 0, DoorState::Closed), b("b", 0, DoorState::Closed);
  a.fire(DoorEvent::Kick, "t");  // (Closed, Kick)
  b.fire(DoorEvent::Lock, "t");
  b.fire(DoorEvent::Kick, "t");  // (Locked, Kick): the same event, another pair
  a.fire(DoorEvent::Pull, "t");
  a.fire(DoorEvent::Kick, "t");  // (Closed, Kick) again
  const auto& cov = sim.fsm().coverage();
  ASSERT_EQ(cov.size(), 1u);
  EXPECT_EQ(cov[0].type, &DoorMachine::type());
  EXPECT_EQ(cov[0].taken.size(), 6u);  // declared pairs
  // Rows: open, close, lock, unlock, break_in (Closed), break_in (Locked).
  EXPECT_EQ(cov[0].taken, (std::vector<std::uint64_t>{0, 1, 1, 0, 2, 1}));
}

TEST(Fsm, DeclaringTwiceKeepsOneEntryInDeclarationOrder) {
  Sim sim(1);
  sim.fsm().declare<DoorMachine>();
  sim.fsm().declare<DoorMachine>();
  Fsm<DoorMachine> door("d", 0, DoorState::Closed);
  door.fire(DoorEvent::Push, "t");
  ASSERT_EQ(sim.fsm().coverage().size(), 1u);
}

TEST(Fsm, APairGivenTwiceOrOutOfRangeIsAProgrammingError) {
  EXPECT_THROW(FsmType("dup", {"A", "B"}, {"e"}, {{0, 0, 1, "x"}, {0, 0, 0, "y"}}), std::logic_error);
  EXPECT_THROW(FsmType("range", {"A", "B"}, {"e"}, {{0, 1, 1, "x"}}), std::logic_error);
  EXPECT_THROW(FsmType("range", {"A", "B"}, {"e"}, {{0, 0, 2, "x"}}), std::logic_error);
}

}  // namespace
