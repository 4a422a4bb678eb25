// Self-describing parameters (in the manner of gem5 Params / SST params):
// every parameter has a scope, a name, a unit kind, a default, an optional
// range or list of choices, and a doc line. Definitions are registered by the
// module that owns them (static ParamRegistration in its .cc); `nicsim params`
// lists them all; scenario overrides are parsed and range-checked before the
// simulation starts.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/units.h"

namespace nicsim {

struct ParamDef {
  // Positional, as the tables of definitions list them; `step` last and
  // optional.
  ParamDef(std::string name, UnitKind kind, std::string default_value, std::string min, std::string max,
           std::vector<std::string> choices, std::string doc, std::string step = {})
      : name(std::move(name)),
        kind(kind),
        default_value(std::move(default_value)),
        min(std::move(min)),
        max(std::move(max)),
        choices(std::move(choices)),
        doc(std::move(doc)),
        step(std::move(step)) {}
  std::string name;  // within its scope, e.g. "bandwidth", "cost.syscall"
  UnitKind kind;
  std::string default_value;         // text in the kind's syntax, e.g. "8Gbps"
  std::string min;                   // inclusive lower bound, same syntax; empty = none
  std::string max;                   // inclusive upper bound; empty = none
  std::vector<std::string> choices;  // allowed values (compared as values: "2KiB" is "2048B"); empty = any
  std::string doc;
  std::string step;  // an integer kind's values are whole multiples of it; empty = any
};

// A named group of parameters: "link", "switch", "host", "bus", "mgmt",
// "nic.<kind>" (one per NIC kind; its existence is what makes the kind valid).
struct ParamScope {
  std::string name;
  std::string doc;
  std::vector<ParamDef> defs;  // in registration order
  const ParamDef* find(std::string_view param) const;
  // The declared name nearest `param` when it is near enough to be a typo
  // of it, else "".
  std::string close_match(std::string_view param) const;
};

class ParamRegistry {
 public:
  static ParamRegistry& instance();
  // Adds defs to a scope, creating it. A duplicate name is a programming
  // error (throws std::logic_error), as is a default that does not parse or
  // lies outside its own range.
  void add(std::string_view scope, std::string_view doc, std::initializer_list<ParamDef> defs);
  const ParamScope* find(std::string_view scope) const;
  std::vector<const ParamScope*> scopes() const;  // sorted by name

 private:
  std::map<std::string, ParamScope, std::less<>> scopes_;
};

// Put one of these at namespace scope in the .cc that owns the parameters.
struct ParamRegistration {
  ParamRegistration(std::string_view scope, std::string_view doc, std::initializer_list<ParamDef> defs) {
    ParamRegistry::instance().add(scope, doc, defs);
  }
};

// The resolved values of one scope for one object: defaults, then overrides.
class ParamSet {
 public:
  ParamSet() = default;
  explicit ParamSet(const ParamScope& scope);
  // Parses and range-checks `text` for `param`. Returns "" on success, else a
  // message naming the parameter and the rule broken, e.g.
  // "link.bandwidth: '8Gbs' is not a bandwidth (use bps, Kbps, ...)" or
  // "switch.ports: 300 is above the maximum 255". Unknown names are errors.
  std::string set(std::string_view param, std::string_view text);
  bool is_set(std::string_view param) const;  // set explicitly by set()
  const ParamScope* scope() const { return scope_; }

  // Typed getters. Asking for an undeclared name or with the wrong kind is
  // a programming error (std::logic_error).
  Tick time(std::string_view param) const;
  std::uint64_t bandwidth(std::string_view param) const;  // bits/s
  std::uint64_t size(std::string_view param) const;       // bytes
  std::uint64_t frequency(std::string_view param) const;  // Hz
  std::uint64_t count(std::string_view param) const;
  double ratio(std::string_view param) const;
  bool flag(std::string_view param) const;
  const std::string& text(std::string_view param) const;
  // The value as written (or the default's text), for reports.
  const std::string& raw(std::string_view param) const;

 private:
  struct Value {
    std::uint64_t u = 0;
    double d = 0;
    std::string text;
    bool explicitly_set = false;
  };
  using Values = std::map<std::string, Value, std::less<>>;
  const Value& get(std::string_view param, UnitKind kind) const;
  Values& own_values();
  const ParamScope* scope_ = nullptr;
  // Shared between copies until one of them is set: a generated topology's
  // links all start as copies of the link defaults (a 65,536-host fat
  // tree has 524,288 of them).
  std::shared_ptr<Values> values_ = std::make_shared<Values>();
};

}  // namespace nicsim
