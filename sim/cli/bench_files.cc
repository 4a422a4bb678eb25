// Reading and checking suite and baseline files (text format).
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "cli/bench.h"

namespace nicsim::bench {

namespace fs = std::filesystem;
using google::protobuf::Message;
using google::protobuf::TextFormat;

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  return bool(f);
}

std::string to_text(const Message& m) {
  std::string out;
  TextFormat::Printer printer;
  printer.PrintToString(m, &out);
  return out;
}

namespace {

// Text-format syntax errors as file:line:column (the parser counts from 0).
class ErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  explicit ErrorCollector(std::string file) : file_(std::move(file)) {}
  void AddError(int line, int column, const std::string& message) override {
    if (first_.empty()) first_ = fmt::format("{}:{}:{}: {}", file_, line + 1, column + 1, message);
  }
  const std::string& first() const { return first_; }

 private:
  std::string file_;
  std::string first_;
};

// Parses `path` into `m`; the line of each element of the repeated field
// `repeated` in `lines`, and of `also` (when given) in `also_lines`.
void parse_text(const std::string& path, Message& m, const char* repeated, std::vector<int>& lines,
                const char* also = nullptr, std::vector<int>* also_lines = nullptr) {
  if (!fs::is_regular_file(path)) throw InputError(fmt::format("{}: cannot read the file", path));
  ErrorCollector errors(path);
  TextFormat::Parser parser;
  TextFormat::ParseInfoTree tree;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(&tree);
  if (!parser.ParseFromString(read_file(path), &m)) throw InputError(errors.first());
  auto locate = [&](const char* name, std::vector<int>& out) {
    const auto* field = m.GetDescriptor()->FindFieldByName(name);
    const int n = m.GetReflection()->FieldSize(m, field);
    for (int i = 0; i < n; ++i) out.push_back(tree.GetLocation(field, i).line + 1);
  };
  locate(repeated, lines);
  if (also) locate(also, *also_lines);
}

[[noreturn]] void fail(const std::string& file, int line, const std::string& rule) {
  throw InputError(fmt::format("{}:{}: {}", file, line, rule));
}

void check_point(const LoadedSuite& s, const Point& p, int line) {
  const std::string& f = s.file;
  if (p.name().empty()) fail(f, line, "a point needs a name");
  if (!std::regex_match(p.name(), std::regex("[A-Za-z0-9_.-]+")))
    fail(f, line, fmt::format("point name '{}': use letters, digits, '_', '.', '-'", p.name()));
  if (p.scenario().empty()) fail(f, line, fmt::format("point '{}' names no scenario", p.name()));
  if (!fs::is_regular_file(fs::path(s.dir) / p.scenario()))
    fail(f, line,
         fmt::format("point '{}': no scenario file {} (paths are relative to the suite's folder)", p.name(),
                     p.scenario()));
  for (const std::string& a : p.args())
    if (a.rfind("--", 0) != 0 || a.size() < 3)
      fail(f, line, fmt::format("point '{}': argument '{}' is not --key=value or --flag", p.name(), a));
  for (const std::string& a : p.params())
    if (a.find('.') == std::string::npos || a.find('=') == std::string::npos)
      fail(f, line, fmt::format("point '{}': parameter '{}' is not scope.name=value", p.name(), a));
  for (const Replace& r : p.replace())
    if (r.text().empty()) fail(f, line, fmt::format("point '{}': a replace needs its text", p.name()));
}

void check_plot(const LoadedSuite& s, const Plot& plot, int line) {
  if (plot.name().empty() || plot.series().empty())
    fail(s.file, line, fmt::format("plot '{}' needs a name and a series", plot.name()));
  for (const Series& series : plot.series()) try {
      std::regex points(series.points()), metric(series.metric());
    } catch (const std::regex_error& e) {
      fail(s.file, line,
           fmt::format("plot '{}', series '{}': bad regular expression: {}", plot.name(), series.label(), e.what()));
    }
}

}  // namespace

LoadedSuite load_suite(const std::string& path) {
  LoadedSuite s;
  s.file = path;
  s.dir = fs::path(path).parent_path().string();
  if (s.dir.empty()) s.dir = ".";
  std::vector<int> lines, plot_lines;
  parse_text(path, s.suite, "point", lines, "plot", &plot_lines);
  const std::string stem = fs::path(path).stem().string();
  if (s.suite.name() != stem)
    fail(path, 1, fmt::format("the suite's name must be its file's stem, '{}' (is '{}')", stem, s.suite.name()));
  for (int i = 0; i < s.suite.point_size(); ++i) {
    const Point& p = s.suite.point(i);
    check_point(s, p, lines[i]);
    if (!s.point_lines.emplace(p.name(), lines[i]).second)
      fail(path, lines[i], fmt::format("point '{}' is defined twice", p.name()));
  }
  for (int i = 0; i < s.suite.plot_size(); ++i) check_plot(s, s.suite.plot(i), plot_lines[i]);
  return s;
}

namespace {
void check_baseline_point(const std::string& f, const BaselinePoint& p, int line) {
  if (p.name().empty()) fail(f, line, "a point needs a name");
  if (p.reason().empty()) fail(f, line, fmt::format("point '{}' gives no reason for its figures", p.name()));
  if (!std::regex_match(p.fingerprint(), std::regex("[0-9a-f]{16}")))
    fail(f, line, fmt::format("point '{}': the fingerprint must be 16 hex digits", p.name()));
  std::set<std::string> names;
  for (const BaselineMetric& m : p.metric()) {
    if (!names.insert(m.name()).second)
      fail(f, line, fmt::format("point '{}': metric '{}' is given twice", p.name(), m.name()));
    if (m.tolerance_pct() < 0)
      fail(f, line, fmt::format("point '{}', metric '{}': a tolerance cannot be negative", p.name(), m.name()));
    if (!m.has_anchor()) continue;
    const Anchor& a = m.anchor();
    if (a.source().empty() || a.figure().empty() || a.published() <= 0 || a.tolerance_pct() <= 0)
      fail(f, line,
           fmt::format("point '{}', metric '{}': an anchor needs a source, a figure, a published value above 0 "
                       "and a tolerance above 0",
                       p.name(), m.name()));
  }
}
}  // namespace

LoadedBaseline load_baseline(const std::string& path) {
  LoadedBaseline b;
  b.file = path;
  std::vector<int> lines;
  parse_text(path, b.baseline, "point", lines);
  std::set<std::string> names;
  for (int i = 0; i < b.baseline.point_size(); ++i) {
    const BaselinePoint& p = b.baseline.point(i);
    check_baseline_point(path, p, lines[i]);
    if (!names.insert(p.name()).second) fail(path, lines[i], fmt::format("point '{}' is given twice", p.name()));
  }
  return b;
}

std::vector<std::string> suite_files(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    if (!fs::is_directory(p)) {
      files.push_back(p);
      continue;
    }
    std::vector<std::string> in_dir;
    for (const auto& e : fs::directory_iterator(p))
      if (e.path().extension() == ".textproto") in_dir.push_back(e.path().string());
    std::sort(in_dir.begin(), in_dir.end());
    files.insert(files.end(), in_dir.begin(), in_dir.end());
  }
  return files;
}

}  // namespace nicsim::bench
