#include "core/params.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace nicsim {

namespace {

// A parsed value in the two shapes ParamSet stores: unsigned for every
// integer-like kind (and Bool as 0/1), double for Ratio.
struct Parsed {
  std::uint64_t u = 0;
  double d = 0;
};

std::optional<Parsed> parse_kind(UnitKind kind, std::string_view text, std::string* error) {
  Parsed p;
  switch (kind) {
    case UnitKind::Time:
      if (auto v = parse_time(text, error)) return p.u = *v, p;
      return std::nullopt;
    case UnitKind::Bandwidth:
      if (auto v = parse_bandwidth(text, error)) return p.u = *v, p;
      return std::nullopt;
    case UnitKind::Size:
      if (auto v = parse_size(text, error)) return p.u = *v, p;
      return std::nullopt;
    case UnitKind::Frequency:
      if (auto v = parse_frequency(text, error)) return p.u = *v, p;
      return std::nullopt;
    case UnitKind::Count:
      if (auto v = parse_count(text, error)) return p.u = *v, p;
      return std::nullopt;
    case UnitKind::Ratio:
      if (auto v = parse_ratio(text, error)) return p.d = *v, p;
      return std::nullopt;
    case UnitKind::Bool:
      if (auto v = parse_bool(text, error)) return p.u = *v ? 1 : 0, p;
      return std::nullopt;
    case UnitKind::Text:
      return p;
  }
  return std::nullopt;
}

bool has_order(UnitKind kind) { return kind != UnitKind::Text && kind != UnitKind::Bool; }

// Text choices match as text; other kinds' as values.
bool is_choice(const ParamDef& def, std::string_view text, const Parsed& value) {
  return std::any_of(def.choices.begin(), def.choices.end(), [&](const std::string& c) {
    if (def.kind == UnitKind::Text) return c == text;
    const auto choice = parse_kind(def.kind, c, nullptr);
    return choice && choice->u == value.u && choice->d == value.d;
  });
}

// -1, 0, 1 as a <=> b for two values of an ordered kind.
int compare(UnitKind kind, const Parsed& a, const Parsed& b) {
  if (kind == UnitKind::Ratio) return a.d < b.d ? -1 : (a.d > b.d ? 1 : 0);
  return a.u < b.u ? -1 : (a.u > b.u ? 1 : 0);
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + cost});
      diag = up;
    }
  }
  return row[b.size()];
}

// The closest declared name, if it is close enough to be a plausible typo.
std::string close_match(const ParamScope& scope, std::string_view name) {
  std::string best;
  std::size_t best_distance = 0;
  for (const auto& def : scope.defs) {
    std::size_t d = edit_distance(name, def.name);
    if (best.empty() || d < best_distance) {
      best = def.name;
      best_distance = d;
    }
  }
  std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
  return best_distance <= limit ? best : std::string();
}

std::string qualified(const ParamScope* scope, std::string_view name) {
  return (scope ? scope->name : std::string("?")) + "." + std::string(name);
}

void check_def(std::string_view scope, const ParamDef& def) {
  auto bad = [&](const std::string& why) {
    throw std::logic_error("parameter " + std::string(scope) + "." + def.name + ": " + why);
  };
  if (def.name.empty()) bad("empty name");
  std::string error;
  auto value = parse_kind(def.kind, def.default_value, &error);
  if (!value) bad("default '" + def.default_value + "' does not parse: " + error);
  if (has_order(def.kind)) {
    if (!def.min.empty()) {
      auto lo = parse_kind(def.kind, def.min, &error);
      if (!lo) bad("minimum '" + def.min + "' does not parse: " + error);
      if (compare(def.kind, *value, *lo) < 0) bad("default is below the minimum " + def.min);
    }
    if (!def.max.empty()) {
      auto hi = parse_kind(def.kind, def.max, &error);
      if (!hi) bad("maximum '" + def.max + "' does not parse: " + error);
      if (compare(def.kind, *value, *hi) > 0) bad("default is above the maximum " + def.max);
    }
  } else if (!def.min.empty() || !def.max.empty()) {
    bad(std::string("a ") + unit_kind_name(def.kind) + " parameter cannot have a range");
  }
  for (const std::string& c : def.choices)
    if (!parse_kind(def.kind, c, &error)) bad("choice '" + c + "' does not parse: " + error);
  if (!def.choices.empty() && !is_choice(def, def.default_value, *value))
    bad("default '" + def.default_value + "' is not one of the choices");
  if (!def.step.empty()) {
    auto step = parse_kind(def.kind, def.step, &error);
    if (!has_order(def.kind) || def.kind == UnitKind::Ratio || !step || step->u == 0)
      bad("a step needs an integer kind and a step above 0");
    if (value->u % step->u != 0) bad("default is not a multiple of the step " + def.step);
  }
}

}  // namespace

const ParamDef* ParamScope::find(std::string_view param) const {
  for (const auto& def : defs) {
    if (def.name == param) return &def;
  }
  return nullptr;
}

ParamRegistry& ParamRegistry::instance() {
  static ParamRegistry registry;
  return registry;
}

void ParamRegistry::add(std::string_view scope, std::string_view doc, std::initializer_list<ParamDef> defs) {
  if (scope.empty()) throw std::logic_error("parameter scope with an empty name");
  // Validate everything before touching the registry so a bad registration
  // leaves no half-added scope behind.
  auto existing = scopes_.find(scope);
  for (auto it = defs.begin(); it != defs.end(); ++it) {
    check_def(scope, *it);
    bool dup_registered = existing != scopes_.end() && existing->second.find(it->name);
    bool dup_in_call = std::any_of(defs.begin(), it, [&](const ParamDef& d) { return d.name == it->name; });
    if (dup_registered || dup_in_call) {
      throw std::logic_error("parameter " + std::string(scope) + "." + it->name + " registered twice");
    }
  }
  auto [entry, created] = scopes_.try_emplace(std::string(scope));
  ParamScope& s = entry->second;
  if (created) s.name = std::string(scope);
  if (s.doc.empty()) s.doc = std::string(doc);
  s.defs.insert(s.defs.end(), defs.begin(), defs.end());
}

const ParamScope* ParamRegistry::find(std::string_view scope) const {
  auto it = scopes_.find(scope);
  return it == scopes_.end() ? nullptr : &it->second;
}

std::vector<const ParamScope*> ParamRegistry::scopes() const {
  std::vector<const ParamScope*> out;
  out.reserve(scopes_.size());
  for (const auto& [name, scope] : scopes_) out.push_back(&scope);
  return out;
}

ParamSet::ParamSet(const ParamScope& scope) : scope_(&scope) {
  for (const auto& def : scope.defs) {
    Value v;
    v.text = def.default_value;
    // Defaults were validated by ParamRegistry::add, so this parse succeeds.
    if (auto p = parse_kind(def.kind, def.default_value, nullptr)) {
      v.u = p->u;
      v.d = p->d;
    }
    values_->emplace(def.name, std::move(v));
  }
}

std::string ParamScope::close_match(std::string_view param) const { return nicsim::close_match(*this, param); }

std::string ParamSet::set(std::string_view param, std::string_view text) {
  const ParamDef* def = scope_ ? scope_->find(param) : nullptr;
  std::string who = qualified(scope_, param);
  if (!def) {
    std::string msg = who + ": unknown parameter";
    if (scope_) {
      std::string near = close_match(*scope_, param);
      if (!near.empty()) msg += " (did you mean " + scope_->name + "." + near + "?)";
    }
    return msg;
  }
  std::string error;
  auto parsed = parse_kind(def->kind, text, &error);
  if (!parsed) {
    return who + ": '" + std::string(text) + "' is not a valid " + unit_kind_name(def->kind) + " (e.g. " +
           unit_kind_example(def->kind) + "): " + error;
  }
  if (has_order(def->kind)) {
    if (!def->min.empty() && compare(def->kind, *parsed, *parse_kind(def->kind, def->min, nullptr)) < 0) {
      return who + ": " + std::string(text) + " is below the minimum " + def->min;
    }
    if (!def->max.empty() && compare(def->kind, *parsed, *parse_kind(def->kind, def->max, nullptr)) > 0) {
      return who + ": " + std::string(text) + " is above the maximum " + def->max;
    }
  }
  if (!def->choices.empty() && !is_choice(*def, text, *parsed)) {
    return who + ": '" + std::string(text) + "' is not one of the choices: " + join(def->choices);
  }
  if (!def->step.empty() && parsed->u % parse_kind(def->kind, def->step, nullptr)->u != 0)
    return who + ": " + std::string(text) + " is not a multiple of " + def->step;
  Value& v = own_values()[def->name];
  v.u = parsed->u;
  v.d = parsed->d;
  v.text = std::string(text);
  v.explicitly_set = true;
  return "";
}

ParamSet::Values& ParamSet::own_values() {
  if (values_.use_count() > 1) values_ = std::make_shared<Values>(*values_);
  return *values_;
}

bool ParamSet::is_set(std::string_view param) const {
  auto it = values_->find(param);
  return it != values_->end() && it->second.explicitly_set;
}

const ParamSet::Value& ParamSet::get(std::string_view param, UnitKind kind) const {
  const ParamDef* def = scope_ ? scope_->find(param) : nullptr;
  if (!def) throw std::logic_error("ParamSet: no parameter " + qualified(scope_, param));
  if (def->kind != kind) {
    throw std::logic_error("ParamSet: " + qualified(scope_, param) + " is a " + unit_kind_name(def->kind) + ", not a " +
                           unit_kind_name(kind));
  }
  auto it = values_->find(param);
  if (it == values_->end()) {
    throw std::logic_error("ParamSet: " + qualified(scope_, param) + " was registered after this ParamSet was made");
  }
  return it->second;
}

Tick ParamSet::time(std::string_view param) const { return get(param, UnitKind::Time).u; }
std::uint64_t ParamSet::bandwidth(std::string_view param) const { return get(param, UnitKind::Bandwidth).u; }
std::uint64_t ParamSet::size(std::string_view param) const { return get(param, UnitKind::Size).u; }
std::uint64_t ParamSet::frequency(std::string_view param) const { return get(param, UnitKind::Frequency).u; }
std::uint64_t ParamSet::count(std::string_view param) const { return get(param, UnitKind::Count).u; }
double ParamSet::ratio(std::string_view param) const { return get(param, UnitKind::Ratio).d; }
bool ParamSet::flag(std::string_view param) const { return get(param, UnitKind::Bool).u != 0; }
const std::string& ParamSet::text(std::string_view param) const { return get(param, UnitKind::Text).text; }

const std::string& ParamSet::raw(std::string_view param) const {
  auto it = values_->find(param);
  if (it == values_->end()) throw std::logic_error("ParamSet: no parameter " + qualified(scope_, param));
  return it->second.text;
}

}  // namespace nicsim
