// The suites' plots as SVG, drawn by gnuplot: each series of a suite's plot
// from this run, the same series from the previous baseline, and the
// published reference points (the baseline's anchors) on the same axes.
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <regex>

#include "cli/report.h"

namespace nicsim::bench {

namespace fs = std::filesystem;

namespace {

using Curve = std::map<double, double>;  // x -> y

// The x value of a matching (point, metric): the first capture group of the
// metric's expression, else of the points' expression, else 0.
bool series_x(const Series& s, const std::string& point, const std::string& metric, double& x) {
  std::smatch pm, mm;
  const std::regex pr(s.points()), mr(s.metric());
  if (!std::regex_search(point, pm, pr) || !std::regex_search(metric, mm, mr)) return false;
  std::string text;
  if (mm.size() > 1 && mm[1].length() > 0)
    text = mm[1];
  else if (pm.size() > 1 && pm[1].length() > 0)
    text = pm[1];
  x = text.empty() ? 0 : std::stod(text);
  return true;
}

Curve curve_now(const Series& s, const SuiteResult& r) {
  Curve c;
  double x = 0;
  for (const PointResult& p : r.point())
    for (const Metric& m : p.metric())
      if (series_x(s, p.name(), m.name(), x)) c[x] = m.value();
  return c;
}

Curve curve_baseline(const Series& s, const Baseline& b, bool anchors) {
  Curve c;
  double x = 0;
  for (const BaselinePoint& p : b.point())
    for (const BaselineMetric& m : p.metric()) {
      if (!series_x(s, p.name(), m.name(), x)) continue;
      if (!anchors)
        c[x] = m.value();
      else if (m.has_anchor())
        c[x] = m.anchor().published();
    }
  return c;
}

std::string datablock(const std::string& name, const Curve& c) {
  std::string out = fmt::format("${} << EOD\n", name);
  for (const auto& [x, y] : c) out += fmt::format("{:.10g} {:.10g}\n", x, y);
  return out + "EOD\n";
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) out += (ch == '"' || ch == '\\') ? std::string("\\") + ch : std::string(1, ch);
  return out + "\"";
}

// The gnuplot script of one plot; empty when no curve has a point.
std::string script(const Plot& plot, const SuiteResult& now, const Baseline& base, const std::string& svg) {
  std::string data, plots;
  int n = 0;
  for (const Series& s : plot.series()) {
    const Curve cur = curve_now(s, now), prev = curve_baseline(s, base, false), ref = curve_baseline(s, base, true);
    const std::string id = fmt::format("s{}", n++);
    if (!cur.empty()) {
      data += datablock(id + "now", cur);
      plots += fmt::format("${}now with linespoints lw 2 pt 7 title {}, ", id, quoted(s.label() + " (this run)"));
    }
    if (!prev.empty()) {
      data += datablock(id + "base", prev);
      plots += fmt::format("${}base with linespoints dt 2 pt 6 title {}, ", id, quoted(s.label() + " (baseline)"));
    }
    if (!ref.empty()) {
      data += datablock(id + "ref", ref);
      plots += fmt::format("${}ref with points pt 5 ps 1.5 title {}, ", id, quoted(s.label() + " (published)"));
    }
  }
  if (plots.empty()) return {};
  plots.resize(plots.size() - 2);
  std::string out = data;
  out += fmt::format("set terminal svg size 720,420 font 'sans,11' background '#ffffff'\nset output {}\n", quoted(svg));
  out += fmt::format("set title {}\nset xlabel {}\nset ylabel {}\nset grid\nset key outside right top\n",
                     quoted(plot.title()), quoted(plot.xlabel()), quoted(plot.ylabel()));
  if (plot.logx()) out += "set logscale x 2\n";
  out += plot.logy() ? "set logscale y\n" : "set yrange [0:*]\n";
  out += "set offsets graph 0.05, graph 0.05, graph 0.1, 0\n";
  return out + "plot " + plots + "\nunset output\n";
}

}  // namespace

std::vector<PlotFile> draw_plots(const Suite& suite, const SuiteResult& now, const Baseline& base,
                                 const std::string& plots_dir, std::string& error) {
  std::vector<PlotFile> files;
  fs::create_directories(plots_dir);
  for (const Plot& plot : suite.plot()) {
    const std::string svg = (fs::path(plots_dir) / (suite.name() + "_" + plot.name() + ".svg")).string();
    const std::string text = script(plot, now, base, svg);
    if (text.empty()) continue;
    std::FILE* p = ::popen("gnuplot 2>&1", "w");
    if (p == nullptr) {
      error = "cannot run gnuplot";
      return files;
    }
    std::fwrite(text.data(), 1, text.size(), p);
    const int rc = ::pclose(p);
    if (rc != 0 || !fs::exists(svg)) {
      error = fmt::format("gnuplot failed on {} (is gnuplot installed? Debian: gnuplot-nox)", svg);
      return files;
    }
    files.push_back({plot.title(), svg});
  }
  return files;
}

}  // namespace nicsim::bench
