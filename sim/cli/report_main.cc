// nicsim report RESULTS_DIR: reads what `nicsim bench --out RESULTS_DIR`
// wrote (results.json, the baselines it compared with) and writes
// RESULTS_DIR/plots/*.svg and RESULTS_DIR/report.html: the summary tables,
// the plots inlined, the calibration table, the differences from the
// baseline highlighted, links to each point's timeline and capture.
#include <google/protobuf/util/json_util.h>

#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <set>

#include "cli/report.h"

namespace fs = std::filesystem;

namespace nicsim {
namespace bench {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

std::string base64(const std::string& in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8 | (unsigned char)in[i + 2];
    out += {k[v >> 18], k[v >> 12 & 63], k[v >> 6 & 63], k[v & 63]};
  }
  if (i + 1 == in.size()) {
    const unsigned v = (unsigned char)in[i] << 16;
    out += {k[v >> 18], k[v >> 12 & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    const unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8;
    out += {k[v >> 18], k[v >> 12 & 63], k[v >> 6 & 63], '='};
  }
  return out;
}

// `text` spans as <code>.
std::string code_spans(const std::string& s) {
  std::string out;
  bool open = false;
  for (char c : s) {
    if (c == '`') {
      out += open ? "</code>" : "<code>";
      open = !open;
    } else {
      out += c;
    }
  }
  return open ? out + "</code>" : out;
}

// A Markdown table (as calibration_table writes it) as HTML.
std::string markdown_table(const std::string& md) {
  std::string html = "<table class=\"calibration\">\n";
  std::size_t row = 0, at = 0;
  while (at < md.size()) {
    std::size_t end = md.find('\n', at);
    if (end == std::string::npos) end = md.size();
    const std::string line = md.substr(at, end - at);
    at = end + 1;
    if (line.size() < 2 || line.rfind("| ---", 0) == 0) continue;
    const char* cell = row++ == 0 ? "th" : "td";
    const bool bad = line.find(": OUTSIDE") != std::string::npos;
    html += bad ? "<tr class=\"diff\">" : "<tr>";
    std::size_t c = 1;
    while (c < line.size()) {
      const std::size_t next = line.find(" |", c);
      if (next == std::string::npos) break;
      html += fmt::format("<{0}>{1}</{0}>", cell, code_spans(escape(line.substr(c + 1, next - c - 1))));
      c = next + 2;
    }
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

std::string links(const fs::path& dir, const PointResult& p) {
  std::string out;
  for (const char* f : {"timeline.json", "packets.pcap", "summary.txt", "results.json", "log.txt"})
    if (fs::exists(dir / p.out_dir() / f)) out += fmt::format("<a href=\"{}/{}\">{}</a> ", escape(p.out_dir()), f, f);
  return out;
}

std::string points_table(const fs::path& dir, const SuiteResult& s, const std::set<std::string>& differing) {
  std::string html =
      "<table class=\"points\">\n<tr><th>point</th><th>status</th><th>fingerprint</th><th>figures</th>"
      "<th>events</th><th>wall s</th><th>outputs</th></tr>\n";
  for (const PointResult& p : s.point()) {
    std::string figures;
    for (const Metric& m : p.metric()) {
      const bool bad = differing.count(p.name() + " " + m.name()) > 0;
      figures += fmt::format("<span{}>{} = {} {}</span><br>", bad ? " class=\"diff\"" : "", escape(m.name()),
                             format_value(m.value()), escape(m.unit()));
    }
    const bool bad_fp = differing.count(p.name() + " fingerprint") > 0;
    html += fmt::format(
        "<tr><td>{}</td><td{}>{}</td><td{}><code>{}</code></td><td>{}</td><td>{}</td><td>{:.2f}</td><td>{}</td></tr>\n",
        escape(p.name()), p.status() == "ok" ? "" : " class=\"diff\"", escape(p.status()),
        bad_fp ? " class=\"diff\"" : "", escape(p.fingerprint()), figures, p.events(), p.wall_seconds(), links(dir, p));
  }
  return html + "</table>\n";
}

// The (point, metric) pairs of the diff lines, to highlight them.
std::set<std::string> differing_cells(const std::vector<std::string>& diffs) {
  std::set<std::string> out;
  for (const std::string& d : diffs) {
    const std::size_t a = d.find(' '), b = d.find_first_not_of(' ', a);
    out.insert(d.substr(0, a) + " " + d.substr(b, d.find(' ', b) - b));
  }
  return out;
}

std::string suite_section(const fs::path& dir, const SuiteResult& s, const Baseline& base, std::string& errors) {
  std::string html = fmt::format("<h2>{}</h2>\n<p>{}</p>\n", escape(s.name()), escape(s.description()));
  const std::vector<std::string> diffs = differences(s, base);
  if (diffs.empty()) {
    html += "<p class=\"same\">No differences from the baseline.</p>\n";
  } else {
    html += fmt::format("<p class=\"diff\">{} differences from the baseline:</p>\n<pre class=\"diff\">", diffs.size());
    for (const std::string& d : diffs) html += escape(d) + "\n";
    html += "</pre>\n";
  }
  html += points_table(dir, s, differing_cells(diffs));
  LoadedSuite suite;
  try {
    suite = load_suite(s.suite_file());
  } catch (const InputError& e) {
    errors += std::string(e.what()) + "\n";
    return html;
  }
  std::string error;
  for (const PlotFile& p : draw_plots(suite.suite, s, base, (dir / "plots").string(), error))
    html += fmt::format(
        "<figure><img alt=\"{}\" src=\"data:image/svg+xml;base64,{}\"><figcaption>{}</figcaption></figure>\n",
        escape(p.title), base64(read_file(p.svg_path)), escape(p.title));
  if (!error.empty()) errors += error + "\n";
  return html;
}

const char* kStyle =
    "body{font-family:sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;margin:1em 0}"
    "td,th{border:1px solid #bbb;padding:3px 8px;vertical-align:top;font-size:90%}th{background:#eee}"
    ".diff{background:#fdd;color:#900}.same{color:#060}pre.diff{padding:.5em}figure{margin:1em 0}";

int render(const fs::path& dir) {
  BenchResults results;
  const std::string json = read_file((dir / "results.json").string());
  if (json.empty() || !google::protobuf::util::JsonStringToMessage(json, &results).ok())
    throw InputError(fmt::format("{}: no bench results (run nicsim bench --out {} first)",
                                 (dir / "results.json").string(), dir.string()));
  std::string body, errors;
  std::vector<Baseline> bases;
  for (const SuiteResult& s : results.suite()) {
    const fs::path bp = dir / "baselines" / (s.name() + ".textproto");
    Baseline base;
    if (fs::exists(bp)) base = load_baseline(bp.string()).baseline;
    bases.push_back(base);
    body += suite_section(dir, s, base, errors);
  }
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>nicsim bench report</title>"
      "<style>{}</style></head><body>\n<h1>nicsim bench report</h1>\n<p>nicsim {}{}; {} suites.</p>\n",
      kStyle, escape(results.version()), results.quick() ? ", quick suite" : "", results.suite_size());
  html += "<h2>Calibration against published measurements</h2>\n" + markdown_table(calibration_table(bases, &results));
  // For checks in a browser: what loaded, as attributes of the body.
  html += body +
          "<script>window.addEventListener('load',function(){var i=Array.prototype.slice.call(document.images);"
          "document.body.setAttribute('data-images',i.length);document.body.setAttribute('data-images-loaded',"
          "i.filter(function(x){return x.complete&&x.naturalWidth>0;}).length);document.body.setAttribute("
          "'data-tables',document.querySelectorAll('table').length);});</script>\n</body></html>\n";
  const fs::path out = dir / "report.html";
  if (!write_file(out.string(), html)) throw InputError(fmt::format("cannot write {}", out.string()));
  std::cout << "nicsim report: " << out.string() << "\n";
  if (!errors.empty()) std::cerr << errors;
  return errors.empty() ? kExitOk : kExitDifferent;
}

}  // namespace
}  // namespace bench

int report_main(int argc, char** argv) {
  if (argc != 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::cerr << "usage: nicsim report RESULTS_DIR   (a folder written by nicsim bench --out)\n"
                 "writes RESULTS_DIR/report.html and RESULTS_DIR/plots/*.svg (gnuplot)\n";
    return argc == 2 ? bench::kExitOk : bench::kExitBadInput;
  }
  try {
    return bench::render(argv[1]);
  } catch (const bench::InputError& e) {
    std::cerr << e.what() << "\n";
    return bench::kExitBadInput;
  }
}

}  // namespace nicsim
