// The debugger's commands: parsing, breakpoints, stepping and inspection.
#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "core/sim.h"
#include "debug/debugger.h"
#include "fabric/link.h"
#include "fabric/packet_describe.h"
#include "host/host.h"
#include "world/network_kinds.h"
#include "world/world.h"

namespace nicsim::debug {

namespace {

struct CommandHelp {
  const char* name;
  const char* usage;
  const char* doc;
};

// Every command, in the order `help` lists them.
constexpr CommandHelp kCommands[] = {
    {"help", "help [COMMAND]", "list the commands, or explain one"},
    {"break", "break fsm|time|event|error|packet|call|watch ARGS... [if FIELD OP VALUE] [ignore N]",
     "set a breakpoint:\n"
     "  break fsm [machine=M] [object=O] [from=S] [to=S] [event=E]   an FSM transition (O may hold * and ?)\n"
     "  break time T              the first event at or after simulated time T (e.g. 12.5us)\n"
     "  break event N             after event N\n"
     "  break error [where=O]     a simulation error (of object O)\n"
     "  break packet link=L [kind=K] [FIELD=VALUE]...  a packet put on link L matching the fields\n"
     "    (`packets LINK` shows a packet's fields: opcode, qpn, psn, dlid, node, seq, ...)\n"
     "  break call function=F [node=N]   an API call (ci_post_send, ib_cma_connect, dat_ep_post_send, "
     "ep_transmit_small, ...; F and N may hold * and ?)\n"
     "  break watch object=O field=F      after an event that changed a field of an object (as `show` lists it)\n"
     "  `if FIELD OP VALUE` (OP one of == != < <= > >=) tests a field of the transition's object\n"
     "  (as `show` lists it) or of the packet; `ignore N` passes the first N hits"},
    {"watch", "watch OBJECT FIELD [if FIELD OP VALUE]", "the same as `break watch object=OBJECT field=FIELD`"},
    {"delete", "delete ID|all", "delete a breakpoint, or all"},
    {"disable", "disable ID", "disable a breakpoint"},
    {"enable", "enable ID", "enable a breakpoint"},
    {"ignore", "ignore ID N", "pass the next N hits of a breakpoint"},
    {"condition", "condition ID [FIELD OP VALUE]", "set or (without one) clear a breakpoint's condition"},
    {"breakpoints", "breakpoints", "list the breakpoints with their hit counts"},
    {"save", "save FILE", "write the breakpoints to FILE as commands"},
    {"load", "load FILE", "read breakpoints written by save (break commands, one a line)"},
    {"step",
     "step [N] | step fsm [machine=M] [object=O] | step packet link=L [FIELD=VALUE]... | step call [function=F] "
     "[node=N]",
     "run one event (or N); to the next FSM transition (of a machine type or an object); to the next "
     "packet put on a link; or to the next API call (on a node)"},
    {"continue", "continue", "run to the next breakpoint or the end"},
    {"until", "until time T | until event N",
     "run until simulated time T or until after event N (an event already past: re-run the scenario to it)"},
    {"reverse-step", "reverse-step", "go back to the previous event (re-runs the scenario to event N-1)"},
    {"reverse-continue", "reverse-continue", "go back to the previous breakpoint hit (re-runs the scenario)"},
    {"where", "where", "where the run stands: event number, time, why it stopped"},
    {"list", "list [TYPE]", "list the registered objects (FSM instances and inspectable objects) with their state"},
    {"show", "show OBJECT", "one object's state as a table"},
    {"history", "history OBJECT [N]", "the object's last N (10) transitions, with their causes"},
    {"packets", "packets LINK", "the packets queued on a link's ports and on its wire, with their fields"},
    {"threads", "threads", "the program threads and what each is blocked in"},
    {"quit", "quit", "end the session"},
};

std::vector<std::string> split(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

Reply error(std::string text) { return Reply{false, std::move(text) + "\n", false}; }

bool parse_u64(const std::string& s, std::uint64_t& out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 19) return false;
  out = std::stoull(s);
  return true;
}

std::string table(const InspectRows& rows) {
  std::size_t w = 0;
  for (const InspectRow& r : rows) w = std::max(w, r.field.size());
  std::string out;
  for (const InspectRow& r : rows) out += fmt::format("  {:<{}}  {}\n", r.field, w, r.value);
  return out;
}

bool valid_op(const std::string& op) {
  return op == "==" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=";
}

std::string kind_name(const std::string& number) {
  std::uint64_t k = 0;
  if (!parse_u64(number, k) || k > 255) return number;
  const std::string* n = NetworkKinds::instance().packet_kind(static_cast<std::uint8_t>(k));
  return n ? *n : number;
}

}  // namespace

struct Commands {
  Debugger& d;
  std::vector<std::string> w;  // the words; w[0] the command

  // Takes `if F OP V` and `ignore N` off the end of the words.
  std::string take_options(Breakpoint& b) {
    for (std::size_t i = 2; i < w.size();) {
      if (w[i] == "if") {
        if (i + 3 >= w.size()) return "`if` needs FIELD OP VALUE";
        if (!valid_op(w[i + 2])) return fmt::format("unknown comparison '{}' (use == != < <= > >=)", w[i + 2]);
        b.condition = Condition{w[i + 1], w[i + 2], w[i + 3]};
        w.erase(w.begin() + static_cast<long>(i), w.begin() + static_cast<long>(i + 4));
      } else if (w[i] == "ignore") {
        if (i + 1 >= w.size() || !parse_u64(w[i + 1], b.ignore)) return "`ignore` needs a count";
        w.erase(w.begin() + static_cast<long>(i), w.begin() + static_cast<long>(i + 2));
      } else {
        ++i;
      }
    }
    return {};
  }

  // key=value arguments from word `first` on, each key one of `keys`.
  std::string take_keys(std::size_t first, std::initializer_list<const char*> keys,
                        std::map<std::string, std::string>& out, bool any_key = false) {
    for (std::size_t i = first; i < w.size(); ++i) {
      const std::size_t eq = w[i].find('=');
      if (eq == std::string::npos || eq == 0) return fmt::format("'{}' is not KEY=VALUE", w[i]);
      const std::string key = w[i].substr(0, eq);
      bool known = any_key;
      std::string names;
      for (const char* k : keys) {
        known = known || key == k;
        names += std::string(names.empty() ? "" : ", ") + k;
      }
      if (!known) return fmt::format("unknown key '{}' (use {})", key, names);
      out[key] = w[i].substr(eq + 1);
    }
    return {};
  }

  std::string parse_breakpoint(Breakpoint& b, std::size_t kind_word) {
    if (w.size() <= kind_word) return "break needs a kind: fsm, time, event, error, packet, call or watch";
    if (std::string e = take_options(b); !e.empty()) return e;
    const std::string& kind = w[kind_word];
    std::map<std::string, std::string> kv;
    if (kind == "fsm") {
      b.kind = Breakpoint::Kind::Fsm;
      if (auto e = take_keys(kind_word + 1, {"machine", "object", "from", "to", "event"}, kv); !e.empty()) return e;
      b.machine = kv["machine"], b.object = kv["object"], b.from = kv["from"], b.to = kv["to"], b.event = kv["event"];
      return check_fsm_names(b);
    }
    if (kind == "time" || kind == "event") {
      if (w.size() != kind_word + 2) return fmt::format("break {} needs one value", kind);
      if (kind == "event") {
        b.kind = Breakpoint::Kind::Event;
        if (!parse_u64(w[kind_word + 1], b.number) || b.number == 0)
          return fmt::format("'{}' is not an event number (1 or more)", w[kind_word + 1]);
        return {};
      }
      b.kind = Breakpoint::Kind::Time;
      std::string err;
      auto t = parse_time(w[kind_word + 1], &err);
      if (!t) return fmt::format("'{}': {}", w[kind_word + 1], err);
      b.time = *t;
      return {};
    }
    if (kind == "error") {
      b.kind = Breakpoint::Kind::Error;
      if (auto e = take_keys(kind_word + 1, {"where"}, kv); !e.empty()) return e;
      b.where = kv["where"];
      return {};
    }
    if (kind == "packet") {
      b.kind = Breakpoint::Kind::Packet;
      if (auto e = take_keys(kind_word + 1, {"link"}, kv, true); !e.empty()) return e;
      if (kv["link"].empty()) return "break packet needs link=NAME";
      b.link = kv["link"];
      if (d.link_index(b.link) == ~0u && b.link.find_first_of("*?") == std::string::npos)
        return fmt::format("no link named '{}'", b.link);
      for (auto& [k, v] : kv) {
        if (k == "link") continue;
        if (k == "kind" && packet_kind_number(v).empty())
          return fmt::format("no packet kind '{}' ({})", v, kind_names());
        b.fields.emplace_back(k, k == "kind" ? packet_kind_number(v) : v);
      }
      return {};
    }
    if (kind == "call") {
      b.kind = Breakpoint::Kind::Call;
      if (!b.condition.empty()) return "break call takes no `if` (use function= and node=)";
      if (auto e = take_keys(kind_word + 1, {"function", "node"}, kv); !e.empty()) return e;
      b.function = kv["function"], b.node = kv["node"];
      return {};
    }
    if (kind == "watch") {
      b.kind = Breakpoint::Kind::Watch;
      if (auto e = take_keys(kind_word + 1, {"object", "field"}, kv); !e.empty()) return e;
      if (kv["object"].empty() || kv["field"].empty()) return "break watch needs object=NAME and field=FIELD";
      b.object = kv["object"], b.field = kv["field"];
      b.last = Debugger::field_value(b.object, b.field);
      if (b.last == "(no such field)")
        return fmt::format("object '{}' has no field '{}' (see show)", b.object, b.field);
      return {};
    }
    return fmt::format("unknown breakpoint kind '{}' (use fsm, time, event, error, packet, call or watch)", kind);
  }

  // The number of a packet kind given by name (or number); "" when none.
  static std::string packet_kind_number(const std::string& name) {
    for (int k = 0; k < 256; ++k)
      if (const std::string* n = NetworkKinds::instance().packet_kind(static_cast<std::uint8_t>(k));
          n && (*n == name || std::to_string(k) == name))
        return std::to_string(k);
    return {};
  }

  static std::string kind_names() {
    std::string names;
    for (int k = 0; k < 256; ++k)
      if (const std::string* n = NetworkKinds::instance().packet_kind(static_cast<std::uint8_t>(k)))
        names += (names.empty() ? "" : ", ") + *n;
    return names;
  }

  // Machine, state and event names must exist (a typo would never stop).
  std::string check_fsm_names(const Breakpoint& b) {
    if (b.machine.empty()) return {};
    for (const auto& c : Sim::get().fsm().coverage()) {
      if (fnmatch(b.machine.c_str(), c.type->name().c_str(), 0) != 0) continue;
      const auto& states = c.type->states();
      const auto& events = c.type->events();
      for (const std::string* s : {&b.from, &b.to})
        if (!s->empty() && std::find(states.begin(), states.end(), *s) == states.end())
          return fmt::format("machine {} has no state '{}'", c.type->name(), *s);
      if (!b.event.empty() && std::find(events.begin(), events.end(), b.event) == events.end())
        return fmt::format("machine {} has no event '{}'", c.type->name(), b.event);
      return {};
    }
    // Machine types come into being with their first instance: a name not
    // seen yet is taken on trust (note_ tells the user).
    std::string names;
    for (const auto& c : Sim::get().fsm().coverage()) names += (names.empty() ? "" : ", ") + c.type->name();
    note_ = fmt::format("note: no machine type '{}' exists yet (so far: {}); its names are checked when it does\n",
                        b.machine, names);
    return {};
  }
  std::string note_;

  Reply add_breakpoint(bool temporary, std::size_t kind_word) {
    Breakpoint b;
    if (std::string e = parse_breakpoint(b, kind_word); !e.empty()) return error(e);
    b.temporary = temporary;
    b.id = temporary ? 0 : d.next_id_++;
    d.breakpoints_.push_back(b);
    d.retap();
    d.arm_pause_point();
    if (temporary) return Reply{true, "", true};
    return Reply{true, note_ + fmt::format("breakpoint {}: {}\n", b.id, b.spec()), false};
  }

  Breakpoint* find(const std::string& id_text, std::string& err) {
    std::uint64_t id = 0;
    if (!parse_u64(id_text, id)) {
      err = fmt::format("'{}' is not a breakpoint number", id_text);
      return nullptr;
    }
    for (Breakpoint& b : d.breakpoints_)
      if (!b.temporary && static_cast<std::uint64_t>(b.id) == id) return &b;
    err = fmt::format("no breakpoint {}", id);
    return nullptr;
  }

  Reply on_breakpoint() {
    if (w.size() < 2) return error(fmt::format("{} needs a breakpoint number", w[0]));
    if (w[0] == "delete" && w[1] == "all") {
      std::erase_if(d.breakpoints_, [](const Breakpoint& b) { return !b.temporary; });
      d.retap();
      d.arm_pause_point();
      return Reply{true, "deleted every breakpoint\n", false};
    }
    std::string err;
    Breakpoint* b = find(w[1], err);
    if (!b) return error(err);
    const int id = b->id;
    if (w[0] == "delete") {
      std::erase_if(d.breakpoints_, [id](const Breakpoint& x) { return !x.temporary && x.id == id; });
    } else if (w[0] == "disable" || w[0] == "enable") {
      b->enabled = w[0] == "enable";
    } else if (w[0] == "ignore") {
      if (w.size() != 3 || !parse_u64(w[2], b->ignore)) return error("ignore needs ID and a count");
      b->ignore += b->hits;
    } else if (w[0] == "condition") {
      if (w.size() == 2) {
        b->condition = {};
      } else if (w.size() != 5 || !valid_op(w[3])) {
        return error("condition needs ID FIELD OP VALUE (OP one of == != < <= > >=)");
      } else {
        b->condition = Condition{w[2], w[3], w[4]};
      }
    }
    d.retap();
    d.arm_pause_point();
    return Reply{true, fmt::format("breakpoint {}: {}\n", id, w[0] == "delete" ? "deleted" : "changed"), false};
  }

  Reply list_breakpoints() {
    std::string out;
    for (const Breakpoint& b : d.breakpoints_)
      if (!b.temporary)
        out += fmt::format("{:>3} {:<8} hits {:<5} {}\n", b.id, b.enabled ? "enabled" : "disabled", b.hits, b.spec());
    return Reply{true, out.empty() ? "no breakpoints\n" : out, false};
  }

  Reply save() {
    if (w.size() != 2) return error("save needs a file name");
    std::ofstream f(w[1]);
    for (const Breakpoint& b : d.breakpoints_)
      if (!b.temporary) f << "break " << b.spec() << "\n";
    if (!f) return error(fmt::format("cannot write {}", w[1]));
    return Reply{true, fmt::format("saved {} breakpoints to {}\n", d.breakpoints_.size(), w[1]), false};
  }

  Reply load() {
    if (w.size() != 2) return error("load needs a file name");
    std::ifstream f(w[1]);
    if (!f) return error(fmt::format("cannot read {}", w[1]));
    std::string out;
    int n = 0;
    for (std::string line; std::getline(f, line);) {
      ++n;
      if (split(line).empty() || line[0] == '#') continue;
      Commands c{d, split(line), {}};
      if (c.w[0] != "break") return error(fmt::format("{}:{}: not a break command: {}", w[1], n, line));
      Reply r = c.add_breakpoint(false, 1);
      if (!r.ok) return error(fmt::format("{}:{}: {}", w[1], n, r.text.substr(0, r.text.size() - 1)));
      out += r.text;
    }
    return Reply{true, out, false};
  }

  Reply run_on() {
    if (d.ended_) return error("the run has ended (reverse-step, reverse-continue or quit)");
    if (w[0] == "continue" || w[0] == "c") return Reply{true, "", true};
    if (w[0] == "until") {
      if (w.size() != 3) return error("until needs `time T` or `event N`");
      if (w[1] == "event") {
        std::uint64_t n = 0;
        if (!parse_u64(w[2], n)) return error(fmt::format("'{}' is not an event number", w[2]));
        if (n <= d.events())
          return error(fmt::format("event {} is past (now after event {}): use reverse-step", n, d.events()));
        d.until_event_ = n;
      } else if (w[1] == "time") {
        std::string err;
        auto t = parse_time(w[2], &err);
        if (!t) return error(fmt::format("'{}': {}", w[2], err));
        if (*t <= now()) return error(fmt::format("time {} is past", w[2]));
        d.until_time_ = *t;
      } else {
        return error("until needs `time T` or `event N`");
      }
      d.arm_pause_point();
      return Reply{true, "", true};
    }
    // step
    if (w.size() >= 2 && (w[1] == "fsm" || w[1] == "packet" || w[1] == "call")) return add_breakpoint(true, 1);
    std::uint64_t n = 1;
    if (w.size() > 2 || (w.size() == 2 && (!parse_u64(w[1], n) || n == 0)))
      return error("step takes a count, `fsm [machine=M] [object=O]`, `packet link=L ...` or `call [function=F]`");
    d.until_event_ = d.events() + n;
    d.arm_pause_point();
    return Reply{true, "", true};
  }

  Reply where() {
    const Stop& s = d.last_stop();
    return Reply{true, fmt::format("{} at {}: {}\n", s.position.str(), format_time(s.time), s.reason), false};
  }

  Reply list() {
    const std::string pattern = w.size() > 1 ? w[1] : "*";
    std::string out;
    std::map<std::string, const FsmBase*> fsms;
    for (const FsmBase* f : Sim::get().fsm().instances()) fsms.emplace(f->object(), f);
    for (const auto& [name, f] : fsms)
      if (fnmatch(pattern.c_str(), f->type().name().c_str(), 0) == 0)
        out += fmt::format("{:<16} {:<28} {}\n", f->type().name(), name, f->state_name());
    for (const Inspectable* i : Inspectable::all())
      if (!fsms.count(i->name()) && fnmatch(pattern.c_str(), i->type().c_str(), 0) == 0)
        out += fmt::format("{:<16} {:<28} -\n", i->type(), i->name());
    return Reply{true, out.empty() ? fmt::format("no objects of type {}\n", pattern) : out, false};
  }

  const FsmBase* fsm_named(const std::string& name) {
    for (const FsmBase* f : Sim::get().fsm().instances())
      if (f->object() == name) return f;
    return nullptr;
  }

  Reply show() {
    if (w.size() != 2) return error("show needs an object name (see list)");
    const FsmBase* f = fsm_named(w[1]);
    const Inspectable* i = Inspectable::find(w[1]);
    if (!f && !i) return error(fmt::format("no object named '{}' (see list)", w[1]));
    InspectRows rows;
    std::string head = w[1];
    if (f) {
      head += fmt::format(" ({})", f->type().name());
      add_row(rows, "state", f->state_name());
    } else {
      head += fmt::format(" ({})", i->type());
    }
    if (i)
      for (InspectRow& r : i->rows())
        if (!(f && r.field == "state")) rows.push_back(std::move(r));
    return Reply{true, head + "\n" + table(rows), false};
  }

  Reply history() {
    std::uint64_t n = 10;
    if (w.size() < 2 || w.size() > 3 || (w.size() == 3 && !parse_u64(w[2], n)))
      return error("history needs an object name and an optional count");
    std::vector<const SeenTransition*> found;
    for (auto it = d.history_.rbegin(); it != d.history_.rend() && found.size() < n; ++it)
      if (it->object == w[1]) found.push_back(&*it);
    if (found.empty() && !fsm_named(w[1])) return error(fmt::format("no state machine named '{}'", w[1]));
    std::string out;
    for (auto it = found.rbegin(); it != found.rend(); ++it)
      out += fmt::format("  event {:<8} {:>12}  {} -> {} ({}) cause: {}\n", (*it)->event, format_time((*it)->time),
                         (*it)->from, (*it)->to, (*it)->what, (*it)->cause);
    return Reply{true, out.empty() ? "  no transitions yet\n" : out, false};
  }

  static std::string describe(const fabric::Packet& p) {
    std::string out;
    for (const InspectRow& r : fabric::describe_packet(p))
      out += fmt::format(" {}={}", r.field, r.field == "kind" ? kind_name(r.value) : r.value);
    return out;
  }

  Reply packets() {
    if (w.size() != 2) return error("packets needs a link name (see list link)");
    const fabric::Link* l = d.world_.fabric().link(w[1]);
    if (!l) return error(fmt::format("no link named '{}'", w[1]));
    std::string out;
    if (d.leaving_ && (d.leaving_port_ == &l->a() || d.leaving_port_ == &l->b()))
      out += fmt::format("  leaving {} (the stop):{}\n", d.leaving_port_->path(), describe(*d.leaving_));
    for (const fabric::Port* p : {&l->a(), &l->b()}) {
      for (const fabric::Packet* q : p->queued_packets())
        out += fmt::format("  queued at {}:{}\n", p->path(), describe(*q));
      for (const fabric::Packet* q : p->on_the_wire())
        out += fmt::format("  on the wire from {}:{}\n", p->path(), describe(*q));
    }
    return Reply{true, out.empty() ? "  no packets on " + w[1] + "\n" : out, false};
  }

  Reply threads() {
    std::string out;
    for (const auto& p : d.world_.programs()) {
      const host::HostThread* t = p->main_thread();
      const char* blocked = t ? t->blocked_in() : nullptr;
      out += fmt::format(
          "  {}.{} rank {}: {}{}\n", p->node().name(), p->info().name, p->rank(), fsm_name(p->state()),
          t && !t->finished() ? fmt::format(", blocked in {}", blocked ? blocked : "nothing (runnable)") : "");
    }
    return Reply{true, out.empty() ? "  no programs\n" : out, false};
  }

  Reply internal() {
    Position p;
    const std::string rest = w.size() > 1 ? [this] {
      std::string s;
      for (std::size_t i = 1; i < w.size(); ++i) s += (i > 1 ? " " : "") + w[i];
      return s;
    }()
                                          : "";
    if (!Position::parse(rest, p)) return error(fmt::format("'{}' is not a position", rest));
    d.go_to(p, w[0] == "_record");
    return Reply{true, "", true};
  }

  // `_bp ID on|off NEXT_ID KIND ARGS...`: a breakpoint of an earlier
  // process of the session, with its number, restored in a re-run.
  Reply restore_breakpoint() {
    std::uint64_t id = 0, next = 0;
    if (w.size() < 5 || !parse_u64(w[1], id) || !parse_u64(w[3], next) || (w[2] != "on" && w[2] != "off"))
      return error("_bp needs ID on|off NEXT_ID KIND ARGS...");
    Breakpoint b;
    if (std::string e = parse_breakpoint(b, 4); !e.empty()) return error(e);
    b.id = static_cast<int>(id);
    b.enabled = w[2] == "on";
    d.breakpoints_.push_back(b);
    d.next_id_ = static_cast<int>(next);
    d.retap();
    d.arm_pause_point();
    return Reply{true, "", false};
  }

  Reply run() {
    const std::string& c = w[0];
    if (c == "help") return Reply{true, Debugger::help(w.size() > 1 ? w[1] : ""), false};
    if (c == "break") return add_breakpoint(false, 1);
    if (c == "watch") {
      if (w.size() < 3) return error("watch needs OBJECT FIELD");
      w = [&] {
        std::vector<std::string> words{"break", "watch", "object=" + w[1], "field=" + w[2]};
        words.insert(words.end(), w.begin() + 3, w.end());
        return words;
      }();
      return add_breakpoint(false, 1);
    }
    if (c == "delete" || c == "disable" || c == "enable" || c == "ignore" || c == "condition") return on_breakpoint();
    if (c == "breakpoints") return list_breakpoints();
    if (c == "save") return save();
    if (c == "load") return load();
    if (c == "step" || c == "continue" || c == "c" || c == "until") return run_on();
    if (c == "where") return where();
    if (c == "list") return list();
    if (c == "show") return show();
    if (c == "history") return history();
    if (c == "packets") return packets();
    if (c == "threads") return threads();
    if (c == "_goto" || c == "_record") return internal();
    if (c == "_bp") return restore_breakpoint();
    if (c == "reverse-step" || c == "reverse-continue")
      return error(c + " needs a session that can re-run the scenario (nicsim debug)");
    return error(fmt::format("unknown command '{}' (try help)", c));
  }
};

Reply Debugger::execute(const std::string& line) {
  Commands c{*this, split(line), {}};
  if (c.w.empty() || c.w[0][0] == '#') return Reply{};
  return c.run();
}

std::string Debugger::help(const std::string& command) {
  std::string out;
  for (const CommandHelp& h : kCommands) {
    if (!command.empty() && command != h.name) continue;
    out += command.empty() ? fmt::format("  {:<18} {}\n", h.name,
                                         std::string_view(h.doc).substr(0, std::string_view(h.doc).find('\n')))
                           : fmt::format("{}\n  {}\n", h.usage, h.doc);
  }
  if (out.empty()) return fmt::format("no command '{}' (try help)\n", command);
  return out;
}

std::vector<std::string> Debugger::command_names() {
  std::vector<std::string> out;
  for (const CommandHelp& h : kCommands) out.emplace_back(h.name);
  return out;
}

std::vector<std::string> Debugger::object_names() const {
  std::vector<std::string> out;
  for (const FsmBase* f : Sim::get().fsm().instances()) out.push_back(f->object());
  for (const Inspectable* i : Inspectable::all()) out.push_back(i->name());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string Breakpoint::spec() const {
  std::string s;
  auto kv = [&s](const char* k, const std::string& v) {
    if (!v.empty()) s += fmt::format(" {}={}", k, v);
  };
  switch (kind) {
    case Kind::Fsm:
      s = "fsm";
      kv("machine", machine), kv("object", object), kv("from", from), kv("to", to), kv("event", event);
      break;
    case Kind::Time:
      s = "time " + format_time(time);
      break;
    case Kind::Event:
      s = "event " + std::to_string(number);
      break;
    case Kind::Error:
      s = "error";
      kv("where", where);
      break;
    case Kind::Packet:
      s = "packet";
      kv("link", link);
      for (const auto& [f, v] : fields) kv(f.c_str(), f == "kind" ? kind_name(v) : v);
      break;
    case Kind::Call:
      s = "call";
      kv("function", function), kv("node", node);
      break;
    case Kind::Watch:
      s = "watch";
      kv("object", object), kv("field", field);
      break;
  }
  if (!condition.empty()) s += " if " + condition.str();
  if (ignore) s += fmt::format(" ignore {}", ignore);
  return s;
}

}  // namespace nicsim::debug
