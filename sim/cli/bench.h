// `nicsim bench` and `nicsim report`: benchmark suites defined as data
// (Suite), run point by point as `nicsim run` processes (one SystemC kernel
// each), compared with reviewed baselines (Baseline), and rendered as plots
// and one HTML page. The schema is sim/proto/bench.proto; docs/bench.md
// describes the files and the commands.
#pragma once
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench.pb.h"

namespace nicsim {

int bench_main(int argc, char** argv);
int report_main(int argc, char** argv);

namespace bench {

constexpr int kExitOk = 0, kExitDifferent = 1, kExitBadInput = 2;

// Bad input (a suite or baseline file, a command line): the message names
// file:line and the rule broken. Exit code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LoadedSuite {
  Suite suite;
  std::string file;
  std::string dir;                         // the file's folder: scenario paths are relative to it
  std::map<std::string, int> point_lines;  // point name -> line in the file
};

struct LoadedBaseline {
  Baseline baseline;
  std::string file;
};

// Parse and check; throw InputError("file:line: ...").
LoadedSuite load_suite(const std::string& path);
LoadedBaseline load_baseline(const std::string& path);
// The suite files named: files as given, folders as their *.textproto in
// name order.
std::vector<std::string> suite_files(const std::vector<std::string>& paths);

std::string to_text(const google::protobuf::Message& m);
std::string read_file(const std::string& path);  // "" when unreadable
bool write_file(const std::string& path, const std::string& text);

struct RunOptions {
  std::string out_dir;
  std::vector<std::string> params;  // --param overrides of every point
  std::string filter;               // regular expression over "suite/point"; empty: all
  bool quick = false;
  int jobs = 1;
};

// Runs every selected point of every suite; failed points are recorded in
// the results. Throws InputError when a point's scenario is bad input.
BenchResults run_suites(const std::vector<LoadedSuite>& suites, const RunOptions& options);

// Every difference of `now` from `base`, one line each (point, metric,
// baseline, now, change %), for the points `now` ran; fingerprints only when
// `fingerprints`.
std::vector<std::string> differences(const SuiteResult& now, const Baseline& base, bool fingerprints = true);
// The calibrated figures (anchors without a gap) of `now` outside their
// tolerance, one line each.
std::vector<std::string> calibration_failures(const SuiteResult& now, const Baseline& base);
// `base` with the figures and fingerprints of the points `now` ran; a point
// that moved, or is new, gets `reason`. Throws InputError when a point moved
// and `reason` is empty.
Baseline updated_baseline(const SuiteResult& now, const Baseline& base, const std::string& reason);
// The calibration table (Markdown) of the anchors in `baselines`, with
// the simulated figure from `now` when it has the point, else the baseline's.
std::string calibration_table(const std::vector<Baseline>& baselines, const BenchResults* now);

// Formatting shared by the diff, the table and the report.
std::string format_value(double v);
std::string change_pct(double base, double now);

}  // namespace bench
}  // namespace nicsim
