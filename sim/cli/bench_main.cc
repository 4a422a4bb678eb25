// nicsim bench SUITE... [--out DIR] [--baseline FILE|DIR] [--update-baseline --reason TEXT]
//                       [--quick] [--filter REGEX] [--param scope.name=value]... [-j N]
//                       [--calibration-md FILE]
#include <utility>  // before boost (Boost 1.74 with C++20)

#include <boost/program_options.hpp>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <regex>

#include "cli/bench.h"
#include "world/report.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace nicsim {
namespace bench {
namespace {

const char* kBenchUsage =
    "usage: nicsim bench SUITE_FILE_OR_DIR... [options]\n"
    "Runs benchmark suites (bench/suites/*.textproto) point by point and writes\n"
    "DIR/results.json; with --baseline, lists every difference and exits 1 on any.\n"
    "  nicsim bench --baseline DIR --calibration-md FILE   writes the calibration table only\n"
    "options:\n";

struct Args {
  std::vector<std::string> suites;
  std::string baseline;
  std::string calibration_md;
  std::string reason;
  bool update = false;
  bool figures_only = false;
  RunOptions run;
};

// The baseline file of `suite`: FILE itself, or DIR/<suite>.textproto.
std::string baseline_path(const std::string& baseline, const std::string& suite) {
  if (baseline.empty()) return {};
  if (fs::is_directory(baseline)) return (fs::path(baseline) / (suite + ".textproto")).string();
  return baseline;
}

std::vector<LoadedBaseline> load_baselines_in(const std::string& dir) {
  std::vector<LoadedBaseline> out;
  for (const std::string& f : suite_files({dir})) out.push_back(load_baseline(f));
  return out;
}

int write_calibration(const Args& a, const BenchResults* now, const std::string& path) {
  std::vector<Baseline> bases;
  for (const LoadedBaseline& b : load_baselines_in(a.baseline)) bases.push_back(b.baseline);
  const std::string table = calibration_table(bases, now);
  if (path == "-") {
    std::cout << table;
    return kExitOk;
  }
  const std::string page = fmt::format(
      "# Calibration against published measurements\n\n"
      "Generated from the anchors in the baselines by `nicsim bench --baseline {} --calibration-md {}`; do not\n"
      "edit by hand. \"not met\": a goal the model does not reach yet, the reason in the baseline (reported,\n"
      "not gated); any other row outside its goal fails the gate. See docs/bench.md.\n\n{}",
      a.baseline, path, table);
  if (!write_file(path, page)) throw InputError(fmt::format("cannot write {}", path));
  return kExitOk;
}

// Compares each suite with its baseline (or rewrites it); the lines go to
// stdout and DIR/diff.txt. True when nothing differs.
bool compare_all(const Args& a, const BenchResults& results) {
  std::string report;
  bool same = true;
  fs::create_directories(fs::path(a.run.out_dir) / "baselines");
  for (int i = 0; i < results.suite_size(); ++i) {
    const SuiteResult& now = results.suite(i);
    const std::string path = baseline_path(a.baseline, now.name());
    LoadedBaseline base;
    if (fs::exists(path) || !a.update) base = load_baseline(path);
    base.baseline.set_suite(now.name());
    write_file((fs::path(a.run.out_dir) / "baselines" / (now.name() + ".textproto")).string(), to_text(base.baseline));
    if (a.update) {
      const Baseline updated = updated_baseline(now, base.baseline, a.reason);
      if (!write_file(path, to_text(updated))) throw InputError(fmt::format("cannot write {}", path));
      report += fmt::format("{}: rewritten for review\n", path);
      continue;
    }
    const std::vector<std::string> diffs = differences(now, base.baseline, !a.figures_only);
    const std::vector<std::string> calib = calibration_failures(now, base.baseline);
    if (diffs.empty() && calib.empty()) continue;
    same = false;
    if (!diffs.empty()) report += fmt::format("{}: {} differences from {}:\n", now.name(), diffs.size(), path);
    for (const std::string& d : diffs) report += "  " + d + "\n";
    if (!calib.empty()) report += fmt::format("{}: calibrated figures outside their tolerance:\n", now.name());
    for (const std::string& c : calib) report += "  " + c + "\n";
  }
  std::cout << report;
  write_file((fs::path(a.run.out_dir) / "diff.txt").string(), report);
  return same;
}

void print_summary(const BenchResults& results) {
  for (const SuiteResult& s : results.suite())
    for (const PointResult& p : s.point()) {
      std::string figures;
      for (const Metric& m : p.metric()) figures += fmt::format(" {}={}", m.name(), format_value(m.value()));
      std::cout << fmt::format("{}/{} {} {} events={} wall={:.2f}s{}\n", s.name(), p.name(), p.status(),
                               p.fingerprint(), p.events(), p.wall_seconds(), figures);
    }
}

int run(const Args& a) {
  if (a.suites.empty()) {
    if (!a.calibration_md.empty() && !a.baseline.empty()) return write_calibration(a, nullptr, a.calibration_md);
    throw InputError("nicsim bench: name at least one suite file or folder");
  }
  std::vector<LoadedSuite> suites;
  for (const std::string& f : suite_files(a.suites)) suites.push_back(load_suite(f));
  if (a.update && a.baseline.empty()) throw InputError("nicsim bench: --update-baseline needs --baseline");
  // Check every baseline before spending time on the runs.
  if (!a.update)
    for (const LoadedSuite& s : suites)
      if (!a.baseline.empty()) load_baseline(baseline_path(a.baseline, s.suite.name()));
  fs::create_directories(a.run.out_dir);
  const BenchResults results = run_suites(suites, a.run);
  write_file((fs::path(a.run.out_dir) / "results.json").string(), to_json(results));
  print_summary(results);
  bool ok = true;
  for (const SuiteResult& s : results.suite())
    for (const PointResult& p : s.point()) ok = ok && p.status() == "ok";
  if (!a.baseline.empty()) {
    ok = compare_all(a, results) && ok;
    if (fs::is_directory(a.baseline))
      write_calibration(a, &results, (fs::path(a.run.out_dir) / "calibration.md").string());
  }
  if (!a.calibration_md.empty()) write_calibration(a, &results, a.calibration_md);
  std::cout << fmt::format("nicsim bench: results in {}: {}\n", a.run.out_dir,
                           ok ? "no differences" : "DIFFERENCES (see above)");
  return ok ? kExitOk : kExitDifferent;
}

}  // namespace
}  // namespace bench

int bench_main(int argc, char** argv) {
  using namespace bench;
  Args a;
  po::options_description opts;
  opts.add_options()("help,h", "show this help")("out", po::value(&a.run.out_dir)->default_value("bench-out"),
                                                 "results folder")("baseline", po::value(&a.baseline),
                                                                   "a baseline file, or a folder of <suite>.textproto")(
      "update-baseline", po::bool_switch(&a.update), "rewrite the baseline with this run's figures, for review")(
      "reason", po::value(&a.reason), "with --update-baseline: the model change that moved the figures")(
      "quick", po::bool_switch(&a.run.quick), "only the points marked quick")(
      "figures-only", po::bool_switch(&a.figures_only),
      "compare the figures, not the fingerprints (builds whose allocator places buffers differently)")(
      "filter", po::value(&a.run.filter), "only points whose suite/point matches this regular expression")(
      "param", po::value(&a.run.params)->composing(), "scope.name=value on every point (repeatable)")(
      "jobs,j", po::value(&a.run.jobs)->default_value(1), "points run at once")(
      "calibration-md", po::value(&a.calibration_md), "write the calibration table (Markdown) here, '-': stdout");
  po::options_description hidden;
  hidden.add_options()("suite", po::value(&a.suites)->composing());
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("suite", -1);
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << kBenchUsage << opts;
      return kExitOk;
    }
    return run(a);
  } catch (const po::error& e) {
    std::cerr << "nicsim bench: " << e.what() << "\n" << kBenchUsage << opts;
    return kExitBadInput;
  } catch (const InputError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::regex_error& e) {
    std::cerr << "nicsim bench: --filter: " << e.what() << "\n";
    return kExitBadInput;
  }
}

}  // namespace nicsim
