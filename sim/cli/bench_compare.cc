// Comparing a run with its baseline, updating the baseline, and the
// calibration table of the baselines' published anchors.
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

#include "cli/bench.h"

namespace nicsim::bench {

std::string format_value(double v) {
  std::string s = fmt::format("{:.10g}", v);
  return s;
}

std::string change_pct(double base, double now) {
  if (base == now) return "0%";
  if (base == 0) return "new";
  return fmt::format("{:+.3g}%", (now - base) / std::fabs(base) * 100);
}

namespace {

std::string diff_line(const std::string& point, const std::string& metric, const std::string& base,
                      const std::string& now, const std::string& change) {
  return fmt::format("{:<28} {:<24} baseline {:<18} now {:<18} change {}", point, metric, base, now, change);
}

const BaselinePoint* find_point(const Baseline& b, const std::string& name) {
  for (const BaselinePoint& p : b.point())
    if (p.name() == name) return &p;
  return nullptr;
}

bool within(double base, double now, double tolerance_pct) {
  if (tolerance_pct == 0) return base == now;
  return std::fabs(now - base) <= std::fabs(base) * tolerance_pct / 100;
}

void metric_differences(const PointResult& now, const BaselinePoint& base, std::vector<std::string>& out) {
  std::map<std::string, const Metric*> measured;
  for (const Metric& m : now.metric()) measured[m.name()] = &m;
  for (const BaselineMetric& b : base.metric()) {
    auto it = measured.find(b.name());
    if (it == measured.end()) {
      out.push_back(diff_line(now.name(), b.name(), format_value(b.value()), "missing", "-"));
      continue;
    }
    const double v = it->second->value();
    if (!within(b.value(), v, b.tolerance_pct()))
      out.push_back(
          diff_line(now.name(), b.name(), format_value(b.value()), format_value(v),
                    change_pct(b.value(), v) +
                        (b.tolerance_pct() == 0 ? " (exact)" : fmt::format(" (tolerance {}%)", b.tolerance_pct()))));
    measured.erase(it);
  }
  for (const auto& [name, m] : measured)
    out.push_back(diff_line(now.name(), name, "missing", format_value(m->value()), "new metric"));
}

}  // namespace

std::vector<std::string> differences(const SuiteResult& now, const Baseline& base, bool fingerprints) {
  std::vector<std::string> out;
  for (const PointResult& p : now.point()) {
    if (p.status() != "ok") {
      out.push_back(diff_line(p.name(), "status", "ok", p.status(), p.failure()));
      continue;
    }
    const BaselinePoint* b = find_point(base, p.name());
    if (b == nullptr) {
      out.push_back(diff_line(p.name(), "(point)", "missing", "present", "new point"));
      continue;
    }
    if (fingerprints && b->fingerprint() != p.fingerprint())
      out.push_back(diff_line(p.name(), "fingerprint", b->fingerprint(), p.fingerprint(), "trajectory changed"));
    metric_differences(p, *b, out);
  }
  return out;
}

std::vector<std::string> calibration_failures(const SuiteResult& now, const Baseline& base) {
  std::vector<std::string> out;
  for (const PointResult& p : now.point()) {
    const BaselinePoint* b = find_point(base, p.name());
    if (b == nullptr) continue;
    for (const BaselineMetric& bm : b->metric()) {
      if (!bm.has_anchor() || !bm.anchor().gap().empty()) continue;
      for (const Metric& m : p.metric()) {
        if (m.name() != bm.name()) continue;
        const Anchor& a = bm.anchor();
        if (within(a.published(), m.value(), a.tolerance_pct())) continue;
        out.push_back(fmt::format("{:<28} {:<24} published {} {} ({}), now {}: error {} outside +-{}%", p.name(),
                                  m.name(), format_value(a.published()), m.unit(), a.source(), format_value(m.value()),
                                  change_pct(a.published(), m.value()), a.tolerance_pct()));
      }
    }
  }
  return out;
}

namespace {

// The baseline point for `now`, keeping `old`'s reason, tolerances and
// anchors.
BaselinePoint point_from(const PointResult& now, const BaselinePoint* old) {
  BaselinePoint p;
  p.set_name(now.name());
  p.set_fingerprint(now.fingerprint());
  if (old) p.set_reason(old->reason());
  for (const Metric& m : now.metric()) {
    BaselineMetric* bm = p.add_metric();
    bm->set_name(m.name());
    bm->set_value(m.value());
    bm->set_unit(m.unit());
    if (!old) continue;
    for (const BaselineMetric& o : old->metric())
      if (o.name() == m.name()) {
        bm->set_tolerance_pct(o.tolerance_pct());
        if (o.has_anchor()) *bm->mutable_anchor() = o.anchor();
      }
  }
  return p;
}

bool same_figures(const BaselinePoint& a, const BaselinePoint& b) {
  if (a.fingerprint() != b.fingerprint() || a.metric_size() != b.metric_size()) return false;
  for (int i = 0; i < a.metric_size(); ++i)
    if (a.metric(i).name() != b.metric(i).name() || a.metric(i).value() != b.metric(i).value()) return false;
  return true;
}

}  // namespace

Baseline updated_baseline(const SuiteResult& now, const Baseline& base, const std::string& reason) {
  Baseline out;
  out.set_suite(now.name());
  std::map<std::string, const PointResult*> ran;
  for (const PointResult& p : now.point()) ran[p.name()] = &p;
  for (const BaselinePoint& old : base.point()) {
    auto it = ran.find(old.name());
    if (it == ran.end() || it->second->status() != "ok") {
      *out.add_point() = old;  // not run this time: kept as reviewed
      continue;
    }
    BaselinePoint p = point_from(*it->second, &old);
    if (!same_figures(p, old)) {
      if (reason.empty())
        throw InputError(
            fmt::format("point '{}' of suite '{}' moved: --update-baseline needs --reason (the model "
                        "change that moved it)",
                        old.name(), now.name()));
      p.set_reason(reason);
    }
    *out.add_point() = p;
    ran.erase(it);
  }
  for (const PointResult& p : now.point()) {
    if (!ran.count(p.name()) || p.status() != "ok") continue;
    BaselinePoint np = point_from(p, nullptr);
    np.set_reason(reason.empty() ? "new point" : reason);
    *out.add_point() = np;
  }
  return out;
}

namespace {
const Metric* measured(const BenchResults* now, const std::string& suite, const std::string& point,
                       const std::string& metric) {
  if (!now) return nullptr;
  for (const SuiteResult& s : now->suite())
    if (s.name() == suite)
      for (const PointResult& p : s.point())
        if (p.name() == point)
          for (const Metric& m : p.metric())
            if (m.name() == metric) return &m;
  return nullptr;
}
}  // namespace

std::string calibration_table(const std::vector<Baseline>& baselines, const BenchResults* now) {
  std::string out =
      "| figure | published | nicsim | error | goal | source | point |\n"
      "| --- | --- | --- | --- | --- | --- | --- |\n";
  for (const Baseline& b : baselines)
    for (const BaselinePoint& p : b.point())
      for (const BaselineMetric& m : p.metric()) {
        if (!m.has_anchor()) continue;
        const Anchor& a = m.anchor();
        const Metric* cur = measured(now, b.suite(), p.name(), m.name());
        const double sim = cur ? cur->value() : m.value();
        const bool met = within(a.published(), sim, a.tolerance_pct());
        out += fmt::format(
            "| {} | {} {} | {} {} | {} | +-{}%{} | {} | `{}/{}` `{}` |\n", a.figure(), format_value(a.published()),
            m.unit(), fmt::format("{:.4g}", sim), m.unit(), change_pct(a.published(), sim), a.tolerance_pct(),
            met ? "" : (a.gap().empty() ? ": OUTSIDE" : ": not met"), a.source(), b.suite(), p.name(), m.name());
      }
  return out;
}

}  // namespace nicsim::bench
