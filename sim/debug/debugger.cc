// The debugger's hooks and stops: where the run pauses and why. The
// commands are in commands.cc.
#include "debug/debugger.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <charconv>
#include <utility>

#include "core/sim.h"
#include "fabric/link.h"
#include "fabric/packet_describe.h"
#include "host/api_call.h"
#include "host/host.h"
#include "world/network_kinds.h"
#include "world/world.h"

namespace nicsim::debug {

namespace {
const char* at_name(Position::At a) {
  switch (a) {
    case Position::At::AfterEvent:
      return "";
    case Position::At::Transition:
      return "transition";
    case Position::At::Packet:
      return "packet";
    case Position::At::Error:
      return "error";
    case Position::At::Call:
      return "call";
    case Position::At::End:
      return "end";
  }
  return "";
}

// " field=value" for each of the packet's fields (kinds by name).
std::string describe(const fabric::Packet& p) {
  std::string out;
  for (const InspectRow& r : fabric::describe_packet(p)) {
    std::string value = r.value;
    if (r.field == "kind")
      if (const std::string* n = NetworkKinds::instance().packet_kind(p.meta.kind)) value = *n;
    out += fmt::format(" {}={}", r.field, value);
  }
  return out;
}

bool glob_matches(const std::string& pattern, const std::string& text) {
  return pattern.empty() || fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}
}  // namespace

std::string Position::str() const {
  if (at == At::AfterEvent) return fmt::format("event {}", event);
  if (at == At::End) return fmt::format("event {} end", event);
  if (at == At::Packet) return fmt::format("event {} packet {} link {}", event, value, link);
  return fmt::format("event {} {} {}", event, at_name(at), value);
}

bool Position::parse(const std::string& text, Position& out) {
  char what[16] = {0};
  unsigned long long e = 0, v = 0;
  unsigned l = 0;
  Position p;
  if (std::sscanf(text.c_str(), "event %llu packet %llu link %u", &e, &v, &l) == 3) {
    p.at = At::Packet;
    p.link = l;
  } else if (std::sscanf(text.c_str(), "event %llu %15s %llu", &e, what, &v) == 3) {
    const std::string w = what;
    if (w == "transition")
      p.at = At::Transition;
    else if (w == "error")
      p.at = At::Error;
    else if (w == "call")
      p.at = At::Call;
    else
      return false;
  } else if (std::sscanf(text.c_str(), "event %llu %15s", &e, what) == 2 && std::string(what) == "end") {
    p.at = At::End;
  } else if (std::sscanf(text.c_str(), "event %llu", &e) != 1) {
    return false;
  }
  p.event = e;
  p.value = v;
  out = p;
  return true;
}

Debugger::Debugger(World& world) : world_(world) {
  Sim& sim = Sim::get();
  sim.calendar().set_pause_hook(&Debugger::on_pause_point, this);
  listener_ = sim.fsm().listen([this](const FsmTransitionEvent& e) { on_transition(e); });
  sim.errors().set_observer(&Debugger::on_error, this);
  api_slot_ = host::ApiCalls::add(&Debugger::on_api_call, this);
}

Debugger::~Debugger() {
  Sim& sim = Sim::get();
  sim.fsm().unlisten(listener_);
  sim.calendar().set_pause_after(Calendar::kNoPause);
  sim.calendar().set_pause_hook(nullptr, nullptr);
  sim.errors().set_observer(nullptr, nullptr);
  host::ApiCalls::remove(api_slot_);
  for (auto& t : tapped_) t->port->set_tap(t->previous, t->previous_ctx);
}

std::uint64_t Debugger::events() const { return Sim::get().calendar().events_fired(); }

bool Debugger::run() {
  stop_at(Position{}, "start: the run has not begun");
  started_ = true;
  const RunStatus status = world_.run();
  ended_ = true;
  const Position end{events(), Position::At::End, 0, 0};
  if (has_goal_) goal_ = end;  // a goal beyond the end: the end
  Sim::get().calendar().set_pause_after(Calendar::kNoPause);
  stop_at(end, fmt::format("the run ended at {} ({})", format_time(status.end_time), status.ok ? "ok" : "failed"));
  return status.ok;
}

void Debugger::pause(Stop stop) {
  stop_ = std::move(stop);
  if (handler_) handler_(*this, stop_);
  arm_pause_point();
}

void Debugger::stop_at(const Position& at, std::string reason) {
  if (has_goal_) {
    if (!(at == goal_)) {
      if (recording_ && !reason.empty()) recorded_.push_back(Stop{at, now(), std::move(reason)});
      return;
    }
    has_goal_ = false;
    if (recording_) {
      recording_ = false;
      reason = fmt::format("re-ran to {} ({} breakpoint hits before it)", at.str(), recorded_.size());
    } else if (reason.empty()) {
      reason = fmt::format("at {}", at.str());
    }
  }
  if (reason.empty()) return;
  // Temporary breakpoints (stepping) go once they stopped the run.
  std::erase_if(breakpoints_, [](const Breakpoint& b) { return b.temporary && b.hits > b.ignore; });
  until_event_ = 0;
  until_time_ = kTickMax;
  retap();
  pause(Stop{at, now(), std::move(reason)});
}

void Debugger::go_to(const Position& target, bool record) {
  has_goal_ = true;
  goal_ = target;
  recording_ = record;
  recorded_.clear();
  retap();
  arm_pause_point();
}

void Debugger::arm_pause_point() {
  Calendar& cal = Sim::get().calendar();
  std::uint64_t after = Calendar::kNoPause;
  if (until_event_) after = std::min(after, until_event_);
  if (has_goal_ && goal_.at == Position::At::AfterEvent) after = std::min(after, goal_.event);
  // A goal in the middle of an event is found by the hook that stopped
  // there (FSM, tap, error log), which always runs.
  for (const Breakpoint& b : breakpoints_) {
    if (!b.enabled || b.done) continue;
    if (b.kind == Breakpoint::Kind::Event) after = std::min(after, b.number);
    if (b.kind == Breakpoint::Kind::Time || b.kind == Breakpoint::Kind::Watch) after = 0;
  }
  if (until_time_ != kTickMax) after = 0;
  cal.set_pause_after(after);
}

void Debugger::on_pause_point(void* self) {
  auto& d = *static_cast<Debugger*>(self);
  const std::uint64_t n = d.events();
  const Position here{n};
  std::string reason;
  if (d.until_event_ && n >= d.until_event_) reason = n == d.until_event_ ? "step" : fmt::format("event {}", n);
  if (d.until_time_ != kTickMax && now() >= d.until_time_) reason = fmt::format("time {}", format_time(now()));
  if (std::string watched = d.check_watches(); !watched.empty()) reason = std::move(watched);
  for (Breakpoint& b : d.breakpoints_) {
    if (!b.enabled || b.done) continue;
    const bool due =
        (b.kind == Breakpoint::Kind::Event && n >= b.number) || (b.kind == Breakpoint::Kind::Time && now() >= b.time);
    if (!due) continue;
    b.done = true;
    if (d.hit(b))
      reason = b.kind == Breakpoint::Kind::Event ? fmt::format("breakpoint {}: event {}", b.id, n)
                                                 : fmt::format("breakpoint {}: time {}", b.id, format_time(b.time));
  }
  if (!reason.empty() || (d.has_goal_ && here == d.goal_))
    d.stop_at(here, std::move(reason));
  else
    d.arm_pause_point();
}

bool Debugger::hit(Breakpoint& b) {
  ++b.hits;
  return b.hits > b.ignore;
}

bool Debugger::fsm_matches(const Breakpoint& b, const FsmTransitionEvent& e) const {
  const FsmType& t = e.fsm.type();
  return glob_matches(b.machine, t.name()) && glob_matches(b.object, e.fsm.object()) &&
         (b.from.empty() || b.from == t.state_name(e.from)) && (b.to.empty() || b.to == t.state_name(e.to)) &&
         (b.event.empty() || b.event == t.event_name(e.event));
}

void Debugger::on_transition(const FsmTransitionEvent& e) {
  const FsmType& t = e.fsm.type();
  if (history_.size() == kHistory) history_.pop_front();
  history_.push_back(SeenTransition{events(), e.time, e.fsm.object(), t.name(), t.state_name(e.from),
                                    t.state_name(e.to), t.event_name(e.event), std::string(e.cause)});
  if (!started_) return;
  const Position here{events(), Position::At::Transition, Sim::get().fsm().transitions()};
  std::string reason;
  for (Breakpoint& b : breakpoints_) {
    if (b.kind != Breakpoint::Kind::Fsm || !b.enabled || !fsm_matches(b, e)) continue;
    if (!b.condition.empty() && !condition_holds(b.condition, e.fsm.object())) continue;
    if (hit(b) && reason.empty())
      reason = fmt::format("{} {}: {} {} -> {} ({}, {})", b.temporary ? "step" : "breakpoint " + std::to_string(b.id),
                           t.name(), e.fsm.object(), t.state_name(e.from), t.state_name(e.to), t.event_name(e.event),
                           e.cause);
  }
  if (!reason.empty() || (has_goal_ && here == goal_)) stop_at(here, std::move(reason));
}

void Debugger::on_packet(void* ctx, const fabric::Packet& p, Tick start) {
  auto& t = *static_cast<Tapped*>(ctx);
  if (t.previous) t.previous(t.previous_ctx, p, start);
  t.debugger->on_packet_at(*t.port, p);
}

void Debugger::on_packet_at(const fabric::Port& port, const fabric::Packet& p) {
  const fabric::Link* link = port.link();
  if (!link) return;
  const Position here{events(), Position::At::Packet, p.meta.id, link->index()};
  std::string reason;
  for (Breakpoint& b : breakpoints_) {
    if (b.kind != Breakpoint::Kind::Packet || !b.enabled || !packet_matches(b, p, link->name())) continue;
    if (hit(b) && reason.empty())
      reason =
          fmt::format("{}: packet {} on {} from {}:{}", b.temporary ? "step" : "breakpoint " + std::to_string(b.id),
                      p.meta.id, link->name(), port.path(), describe(p));
  }
  if (reason.empty() && !(has_goal_ && here == goal_)) return;
  leaving_ = &p;
  leaving_port_ = &port;
  stop_at(here, std::move(reason));
  leaving_ = nullptr;
  leaving_port_ = nullptr;
}

bool Debugger::packet_matches(const Breakpoint& b, const fabric::Packet& p, const std::string& link) {
  if (!glob_matches(b.link, link)) return false;
  if (b.fields.empty() && b.condition.empty()) return true;
  std::vector<std::pair<std::string, std::string>> fields;
  for (InspectRow& r : fabric::describe_packet(p)) fields.emplace_back(std::move(r.field), std::move(r.value));
  for (const auto& [name, want] : b.fields) {
    bool found = false;
    for (const auto& [f, v] : fields)
      if (f == name) found = (v == want);
    if (!found) return false;
  }
  return b.condition.empty() || condition_holds_on(b.condition, fields);
}

void Debugger::on_error(void* self, const SimError& e) {
  auto& d = *static_cast<Debugger*>(self);
  ++d.errors_seen_;
  if (!d.started_) return;
  const Position here{d.events(), Position::At::Error, d.errors_seen_};
  std::string reason;
  for (Breakpoint& b : d.breakpoints_) {
    if (b.kind != Breakpoint::Kind::Error || !b.enabled || !glob_matches(b.where, e.where)) continue;
    if (d.hit(b) && reason.empty())
      reason = fmt::format("breakpoint {}: simulation error at {}: {}", b.id, e.where, e.message);
  }
  if (!reason.empty() || (d.has_goal_ && here == d.goal_)) d.stop_at(here, std::move(reason));
}

void Debugger::on_api_call(void* self, host::Host* node, const char* name) {
  auto& d = *static_cast<Debugger*>(self);
  ++d.calls_seen_;
  if (!d.started_) return;
  const Position here{d.events(), Position::At::Call, d.calls_seen_};
  const std::string node_name =
      node && node->node_id() < d.world_.num_nodes() ? d.world_.node(node->node_id()).name() : "-";
  const host::HostThread* thread = node ? node->current() : nullptr;
  const std::string by = thread ? " by " + thread->name() : node ? " in interrupt context" : "";
  std::string reason;
  for (Breakpoint& b : d.breakpoints_) {
    if (b.kind != Breakpoint::Kind::Call || !b.enabled || !glob_matches(b.function, name) ||
        !glob_matches(b.node, node_name))
      continue;
    if (d.hit(b) && reason.empty())
      reason = fmt::format("{}: call {} on {}{}", b.temporary ? "step" : "breakpoint " + std::to_string(b.id), name,
                           node_name, by);
  }
  if (!reason.empty() || (d.has_goal_ && here == d.goal_)) d.stop_at(here, std::move(reason));
}

std::string Debugger::field_value(const std::string& object, const std::string& field) {
  if (field == "state")
    for (const FsmBase* f : Sim::get().fsm().instances())
      if (f->object() == object) return f->state_name();
  const Inspectable* i = Inspectable::find(object);
  if (!i) return "(no such object)";
  for (InspectRow& r : i->rows())
    if (r.field == field) return std::move(r.value);
  return "(no such field)";
}

std::string Debugger::check_watches() {
  std::string reason;
  for (Breakpoint& b : breakpoints_) {
    if (b.kind != Breakpoint::Kind::Watch || !b.enabled) continue;
    std::string value = field_value(b.object, b.field);
    if (value == b.last) continue;
    std::string was = std::exchange(b.last, std::move(value));
    if (!b.condition.empty() && !condition_holds(b.condition, b.object)) continue;
    if (hit(b) && reason.empty())
      reason = fmt::format("watchpoint {}: {} {}: {} -> {}", b.id, b.object, b.field, was, b.last);
  }
  return reason;
}

namespace {
bool as_number(const std::string& s, double& out) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end;
}
}  // namespace

bool Debugger::condition_holds_on(const Condition& c,
                                  const std::vector<std::pair<std::string, std::string>>& fields) const {
  for (const auto& [f, v] : fields) {
    if (f != c.field) continue;
    double a = 0, b = 0;
    int cmp;
    if (as_number(v, a) && as_number(c.value, b))
      cmp = a < b ? -1 : a > b ? 1 : 0;
    else
      cmp = v.compare(c.value) < 0 ? -1 : v == c.value ? 0 : 1;
    if (c.op == "==") return cmp == 0;
    if (c.op == "!=") return cmp != 0;
    if (c.op == "<") return cmp < 0;
    if (c.op == "<=") return cmp <= 0;
    if (c.op == ">") return cmp > 0;
    if (c.op == ">=") return cmp >= 0;
  }
  return false;
}

bool Debugger::condition_holds(const Condition& c, const std::string& object) {
  std::vector<std::pair<std::string, std::string>> fields;
  if (const Inspectable* i = Inspectable::find(object))
    for (InspectRow& r : i->rows()) fields.emplace_back(std::move(r.field), std::move(r.value));
  return condition_holds_on(c, fields);
}

std::uint32_t Debugger::link_index(const std::string& name) const {
  const fabric::Link* l = world_.fabric().link(name);
  return l ? l->index() : ~0u;
}

void Debugger::retap() {
  std::vector<fabric::Link*> want;
  for (const auto& l : world_.fabric().links()) {
    bool watched = has_goal_ && goal_.at == Position::At::Packet && goal_.link == l->index();
    for (const Breakpoint& b : breakpoints_)
      if (b.kind == Breakpoint::Kind::Packet && b.enabled && glob_matches(b.link, l->name())) watched = true;
    if (watched) want.push_back(l.get());
  }
  for (auto& t : tapped_) t->port->set_tap(t->previous, t->previous_ctx);
  tapped_.clear();
  for (fabric::Link* l : want)
    for (fabric::Port* port : {&l->a(), &l->b()}) {
      auto t = std::make_unique<Tapped>(Tapped{this, port, port->tap(), port->tap_context()});
      port->set_tap(&Debugger::on_packet, t.get());
      tapped_.push_back(std::move(t));
    }
}

}  // namespace nicsim::debug
