// Structured event trace: one JSON object per line (JSON Lines), one record
// per packet hop, DMA, FSM transition, API call, interrupt... Turned on per
// device (node or switch) and per component by the scenario's outputs.
// Hot paths test `on(device, component)` (one load and a mask) before
// building a record, so a disabled trace costs almost nothing.
#pragma once
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.h"

namespace nicsim {

#define NICSIM_TRACE_COMPONENTS(X)                                       \
  X(fabric, "links and switches: packet tx, rx, forward, drop, credits") \
  X(host, "host threads, interrupts, timers")                            \
  X(bus, "host bus: MMIO and DMA transactions")                          \
  X(fsm, "state-machine transitions of every registered FSM")            \
  X(api, "public API calls (verbs, ti, dat, ep)")                        \
  X(program, "consumer programs: start, exit, log, results")             \
  X(nic, "NIC engines")                                                  \
  X(fault, "injected faults")                                            \
  X(mgmt, "management network bootstrap messages")

enum class Component : std::uint8_t {
#define NICSIM_X(name, doc) name,
  NICSIM_TRACE_COMPONENTS(NICSIM_X)
#undef NICSIM_X
      count
};
const char* component_name(Component c);
const char* component_doc(Component c);
std::optional<Component> trace_component_from_name(std::string_view name);

// A field of a trace record.
struct TraceField {
  enum class Type : std::uint8_t { Int, Uint, Real, Str } type;
  const char* key;
  union {
    std::int64_t i;
    std::uint64_t u;
    double d;
  };
  std::string_view s;
  TraceField(const char* k, int v) : type(Type::Int), key(k), i(v) {}
  TraceField(const char* k, long v) : type(Type::Int), key(k), i(v) {}
  TraceField(const char* k, long long v) : type(Type::Int), key(k), i(v) {}
  TraceField(const char* k, unsigned v) : type(Type::Uint), key(k), u(v) {}
  TraceField(const char* k, unsigned long v) : type(Type::Uint), key(k), u(v) {}
  TraceField(const char* k, unsigned long long v) : type(Type::Uint), key(k), u(v) {}
  TraceField(const char* k, double v) : type(Type::Real), key(k), d(v) {}
  TraceField(const char* k, std::string_view v) : type(Type::Str), key(k), u(0), s(v) {}
  TraceField(const char* k, const char* v) : type(Type::Str), key(k), u(0), s(v) {}
  TraceField(const char* k, const std::string& v) : type(Type::Str), key(k), u(0), s(v) {}
};

class Tracer {
 public:
  Tracer() = default;
  ~Tracer();
  // Device ids are dense: nodes first, then switches (see World).
  void set_devices(std::vector<std::string> names);
  const std::string& device_name(std::uint32_t device) const { return names_[device]; }
  // Enables `component` (nullopt = all) on devices whose name matches the glob.
  void enable(std::string_view device_glob, std::optional<Component> component);
  bool open(const std::string& path);  // JSON Lines output; false on error
  void close();

  bool on(std::uint32_t device, Component c) const {
    return device < masks_.size() && (masks_[device] >> static_cast<unsigned>(c) & 1u);
  }
  // {"t":<ps>,"dev":"<name>","comp":"<component>","ev":"<event>",<fields>}
  // Records are written in time order (ties in the order recorded), so a
  // reader can step through the file: a record stamped later than the
  // current simulated time (a port logs a transmission when it schedules
  // it) is held until the simulation reaches its time, or until close().
  void record(Tick t, std::uint32_t device, Component c, std::string_view event,
              std::initializer_list<TraceField> fields);
  std::uint64_t records() const { return records_; }
  std::size_t held() const { return held_.size(); }
  // A world split into blocks (docs/partition.md): every record is held
  // until close() and written in the order (time, device, the device's own
  // count), which no other block changes. With `write` false nothing is
  // written at all: the records wait to be exported (another process's
  // part of a run over several).
  void hold_in_device_order(bool write = true);
  // The held records as bytes, and back (rank 0 merges the others').
  std::string export_held();
  void import_held(const std::string& bytes);

 private:
  struct Held {
    Tick t;
    std::uint64_t seq;
    std::string line;
  };
  static bool later(const Held& a, const Held& b) { return a.t != b.t ? a.t > b.t : a.seq > b.seq; }
  void write_due(Tick now);

  std::vector<std::string> names_;
  std::vector<std::uint32_t> masks_;
  std::FILE* out_ = nullptr;
  std::uint64_t records_ = 0;
  bool device_order_ = false;
  bool hold_only_ = false;  // device order, nothing written (out_ unused)
  std::vector<std::uint64_t> device_records_;
  std::string line_;
  std::vector<Held> held_;  // min-heap by (t, seq)
};

bool glob_match(std::string_view pattern, std::string_view text);  // *, ?, [a-z]

}  // namespace nicsim
