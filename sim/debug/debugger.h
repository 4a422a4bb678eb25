// The step debugger inside a simulation: breakpoints, stepping, and the
// inspection of registered objects, driven by text commands.
//
// The simulation stands still while the debugger is paused: a pause is a
// call (into the PauseHandler) from the calendar's pause point between two
// events, or from the FSM registry, a port's tap or the error log in the
// middle of an event. The handler runs commands (execute) until one resumes
// the run, then returns. Nothing of this costs anything when no debugger is
// attached: the calendar's pause point is one compare per event.
//
// Every stop has a Position that a re-run of the same scenario with the
// same seed reaches again exactly (the simulation is deterministic): the
// event number, and for a stop in the middle of an event what it stopped
// at (the n-th FSM transition, a packet by id, the n-th error). Reverse
// stepping is built on that by the session that owns the process
// (debug/session.h), which re-runs the scenario to an earlier position.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/units.h"
#include "fsm/fsm.h"

namespace nicsim {
class World;
namespace fabric {
struct Packet;
class Port;
}  // namespace fabric
namespace host {
class Host;
}  // namespace host
}  // namespace nicsim

namespace nicsim::debug {

// Where a stop is. `at` says what within event `event` (0: before the first
// event, when the run has not started).
struct Position {
  enum class At : std::uint8_t { AfterEvent, Transition, Packet, Error, Call, End };
  std::uint64_t event = 0;
  At at = At::AfterEvent;
  std::uint64_t value = 0;  // the transition, error or API call count, or the packet id
  std::uint32_t link = 0;   // Packet: the link's index in the fabric
  friend bool operator==(const Position&, const Position&) = default;
  std::string str() const;  // "event 42", "event 42 transition 7", ...
  static bool parse(const std::string& text, Position& out);
};

struct Stop {
  Position position;
  Tick time = 0;
  std::string reason;  // "breakpoint 2: h0.qp1 Rtr -> Rts (Rtr2Rts)", "step", ...
};

// A field test of a breakpoint's condition: "psn > 100".
struct Condition {
  std::string field, op, value;
  bool empty() const { return field.empty(); }
  std::string str() const { return field + " " + op + " " + value; }
};

struct Breakpoint {
  enum class Kind : std::uint8_t { Fsm, Time, Event, Error, Packet, Call, Watch };
  int id = 0;
  Kind kind = Kind::Fsm;
  // Fsm: empty matches anything; `object` and `where` may hold * and ?.
  // Watch: `object` is the object whose `field` is watched.
  std::string machine, object, from, to, event;
  Tick time = 0;                                            // Time
  std::uint64_t number = 0;                                 // Event
  std::string where;                                        // Error: the object the error names
  std::string link;                                         // Packet
  std::vector<std::pair<std::string, std::string>> fields;  // Packet: field=value
  std::string function, node;                               // Call: globs on the API call and its node
  std::string field;                                        // Watch: the field of `object`
  std::string last;                                         // Watch: its value when last looked at
  Condition condition;
  std::uint64_t ignore = 0;  // hits to pass before stopping
  std::uint64_t hits = 0;
  bool enabled = true;
  bool temporary = false;    // deleted when it stops the run (stepping)
  bool done = false;         // a time or event breakpoint that has fired
  std::string spec() const;  // the arguments of the `break` command that makes it
};

struct Reply {
  bool ok = true;
  std::string text;
  bool resumes = false;  // the command lets the simulation run on
};

// A transition the debugger saw, for an object's history.
struct SeenTransition {
  std::uint64_t event;
  Tick time;
  std::string object, machine, from, to, what, cause;
};

class Debugger {
 public:
  // Runs commands while paused; returns to let the run go on.
  using PauseHandler = std::function<void(Debugger&, const Stop&)>;
  explicit Debugger(World& world);
  ~Debugger();
  Debugger(const Debugger&) = delete;
  Debugger& operator=(const Debugger&) = delete;

  void set_pause_handler(PauseHandler h) { handler_ = std::move(h); }
  // Pauses at the start, runs the world, pauses at its end (commands that
  // resume then are errors). Returns the world's run status's `ok`.
  bool run();
  // One command line; see help().
  Reply execute(const std::string& line);
  static std::string help(const std::string& command = "");
  static std::vector<std::string> command_names();

  const Stop& last_stop() const { return stop_; }
  bool ended() const { return ended_; }
  std::uint64_t events() const;
  const std::vector<Breakpoint>& breakpoints() const { return breakpoints_; }
  int next_breakpoint_id() const { return next_id_; }
  // The names of every registered object (for completion).
  std::vector<std::string> object_names() const;

  // Re-execution (used by the session): run with stops suppressed to
  // `target`, then pause there, as the forward run did. With `record`,
  // every breakpoint hit on the way is recorded (hits_on_the_way) and the
  // pause at the target says so.
  void go_to(const Position& target, bool record);
  const std::vector<Stop>& hits_on_the_way() const { return recorded_; }

 private:
  friend struct Commands;
  // The hooks.
  static void on_pause_point(void* self);
  void on_transition(const FsmTransitionEvent& e);
  static void on_packet(void* self, const fabric::Packet& p, Tick start);
  static void on_error(void* self, const SimError& e);
  static void on_api_call(void* self, host::Host* node, const char* name);
  // The stop reason of the watchpoints whose field changed ("" when none).
  std::string check_watches();
  // A field of an object as `show` lists it (its FSM state as "state").
  static std::string field_value(const std::string& object, const std::string& field);
  void on_packet_at(const fabric::Port& port, const fabric::Packet& p);

  void pause(Stop stop);
  // A hit of breakpoint `b`: counts it; true when it stops the run.
  bool hit(Breakpoint& b);
  // Pauses with `reason` (none: no stop), unless re-executing short of the
  // goal; at the goal, pauses whatever the reason.
  void stop_at(const Position& at, std::string reason);
  void arm_pause_point();
  void retap();  // taps the ports of every link with a packet breakpoint
  bool fsm_matches(const Breakpoint& b, const FsmTransitionEvent& e) const;
  bool packet_matches(const Breakpoint& b, const fabric::Packet& p, const std::string& link);
  bool condition_holds(const Condition& c, const std::string& object);
  bool condition_holds_on(const Condition& c, const std::vector<std::pair<std::string, std::string>>& fields) const;
  std::uint32_t link_index(const std::string& name) const;

  World& world_;
  std::size_t listener_;  // in the FSM registry
  std::size_t api_slot_;  // among the API-call observers
  PauseHandler handler_;
  Stop stop_;
  bool ended_ = false;
  bool started_ = false;
  std::vector<Breakpoint> breakpoints_;
  int next_id_ = 1;
  // Where the run goes next.
  std::uint64_t until_event_ = 0;  // after this event (0: none)
  Tick until_time_ = kTickMax;
  bool has_goal_ = false;  // re-executing to goal_
  Position goal_;
  bool recording_ = false;
  std::vector<Stop> recorded_;
  std::uint64_t errors_seen_ = 0;
  std::uint64_t calls_seen_ = 0;
  // At a packet stop: the packet being put on the wire, and by which port.
  const fabric::Packet* leaving_ = nullptr;
  const fabric::Port* leaving_port_ = nullptr;
  std::deque<SeenTransition> history_;
  // Ports tapped for packet breakpoints, with the tap each had before (a
  // capture's), which still sees every packet first.
  struct Tapped {
    Debugger* debugger;
    fabric::Port* port;
    void (*previous)(void*, const fabric::Packet&, Tick);
    void* previous_ctx;
  };
  std::vector<std::unique_ptr<Tapped>> tapped_;
  static constexpr std::size_t kHistory = 20000;
};

}  // namespace nicsim::debug
