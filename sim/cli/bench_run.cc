// Running a suite's points: each is a `nicsim run` of its own process (a
// SystemC kernel cannot start twice in one), with the fingerprint on, its
// outputs in <out>/points/<suite>/<point>/.
#include <fcntl.h>
#include <google/protobuf/util/json_util.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <regex>
#include <set>

#include "cli/bench.h"
#include "results.pb.h"

extern char** environ;

namespace nicsim::bench {

namespace fs = std::filesystem;

namespace {

struct Job {
  const LoadedSuite* suite;
  const Point* point;
  PointResult* result;
  fs::path dir;
  pid_t pid = -1;
  std::chrono::steady_clock::time_point started;
};

// The scenario the point runs: the file itself, or a copy with the point's
// replacements made.
std::string scenario_for(const Job& job) {
  const fs::path original = fs::path(job.suite->dir) / job.point->scenario();
  if (job.point->replace().empty() && job.point->append().empty()) return original.string();
  std::string text = read_file(original.string());
  for (const Replace& r : job.point->replace()) {
    const std::size_t at = text.find(r.text());
    if (at == std::string::npos || text.find(r.text(), at + 1) != std::string::npos)
      throw InputError(fmt::format("{}:{}: point '{}': replace text '{}' must occur exactly once in {}",
                                   job.suite->file, job.suite->point_lines.at(job.point->name()), job.point->name(),
                                   r.text(), original.string()));
    text.replace(at, r.text().size(), r.with());
  }
  text += "\n" + job.point->append() + "\n";
  const fs::path copy = job.dir / "scenario.textproto";
  if (!write_file(copy.string(), text)) throw InputError(fmt::format("cannot write {}", copy.string()));
  return copy.string();
}

void start(Job& job, const RunOptions& options) {
  fs::remove_all(job.dir);
  fs::create_directories(job.dir);
  std::vector<std::string> argv = {"nicsim", "run", scenario_for(job), "--out", job.dir.string(), "--fingerprint"};
  for (const std::string& a : job.point->args()) argv.push_back("--arg=" + a);
  for (const std::string& p : job.point->params()) argv.push_back("--param=" + p);
  for (const std::string& p : options.params) argv.push_back("--param=" + p);
  std::vector<char*> c_argv;
  for (std::string& a : argv) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string log = (job.dir / "log.txt").string();
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  job.started = std::chrono::steady_clock::now();
  const int rc = posix_spawn(&job.pid, "/proc/self/exe", &actions, nullptr, c_argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error(fmt::format("cannot start nicsim run: {}", std::strerror(rc)));
}

// The last lines of a point's log, for a failure message.
std::string log_tail(const fs::path& dir, std::size_t lines) {
  const std::string log = read_file((dir / "log.txt").string());
  std::size_t at = log.size();
  for (std::size_t n = 0; n <= lines && at != std::string::npos && at > 0; ++n) at = log.rfind('\n', at - 1);
  return log.substr(at == std::string::npos ? 0 : at + 1);
}

// The point's distributions as median and tail metrics in ns. A run-wide
// distribution is the one of that name whose object names no device.
void record_distributions(const results::Results& r, const Point& point, PointResult& out) {
  std::set<std::string> devices;
  for (const auto& l : r.links()) {
    devices.insert(l.a_to_b().from().substr(0, l.a_to_b().from().rfind('.')));
    devices.insert(l.b_to_a().from().substr(0, l.b_to_a().from().rfind('.')));
  }
  for (const std::string& name : point.distributions()) {
    const results::Distribution* found = nullptr;
    for (const auto& d : r.distributions())
      if (d.name() == name && !devices.count(d.object())) found = &d;
    if (!found) {
      if (out.failure().empty()) out.set_failure(fmt::format("the run reported no run-wide distribution {}", name));
      continue;
    }
    const double per_ns = found->unit() == "ps" ? 1e-3 : 1.0;
    const std::string unit = found->unit() == "ps" ? "ns" : found->unit();
    const std::pair<const char*, std::uint64_t> tails[] = {
        {"_p50", found->p50()}, {"_p99", found->p99()}, {"_p999", found->p999()}, {"_max", found->max()}};
    for (const auto& [suffix, v] : tails) {
      Metric* m = out.add_metric();
      m->set_name(name + suffix);
      m->set_value(static_cast<double>(v) * per_ns);
      m->set_unit(unit);
    }
  }
}

// Every program result of the run (later ranks win for one name, as the
// scenario's summary shows them), filtered by the point's metrics.
void record_metrics(const results::Results& r, const Point& point, PointResult& out) {
  std::map<std::string, std::pair<double, std::string>> values;
  for (const auto& prog : r.programs())
    for (const auto& v : prog.results()) values[v.name()] = {v.value(), v.unit()};
  auto add = [&](const std::string& name, const std::pair<double, std::string>& v) {
    Metric* m = out.add_metric();
    m->set_name(name);
    m->set_value(v.first);
    m->set_unit(v.second);
  };
  if (point.metrics().empty())
    for (const auto& [name, v] : values) add(name, v);
  for (const std::string& name : point.metrics()) {
    auto it = values.find(name);
    if (it != values.end())
      add(name, it->second);
    else if (out.failure().empty())
      out.set_failure(fmt::format("the run reported no result {}", name));
  }
  record_distributions(r, point, out);
}

void finish(Job& job, int status) {
  PointResult& out = *job.result;
  out.set_wall_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - job.started).count());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == kExitBadInput)
    throw InputError(fmt::format("{}:{}: point '{}': nicsim run rejected its input:\n{}", job.suite->file,
                                 job.suite->point_lines.at(job.point->name()), job.point->name(),
                                 log_tail(job.dir, 6)));
  results::Results r;
  const std::string json = read_file((job.dir / "results.json").string());
  if (json.empty() || !google::protobuf::util::JsonStringToMessage(json, &r).ok()) {
    out.set_status("failed");
    out.set_failure(fmt::format("exit {}, no results:\n{}", code, log_tail(job.dir, 6)));
    return;
  }
  out.set_fingerprint(r.fingerprint());
  out.set_events(r.events());
  out.set_sim_time_ps(r.sim_time_ps());
  record_metrics(r, *job.point, out);
  if (code != 0) out.set_failure(fmt::format("exit {}:\n{}", code, log_tail(job.dir, 6)));
  out.set_status(out.failure().empty() ? "ok" : "failed");
}

// points done / total and the time left, on one line of a terminal.
void show_progress(std::size_t done, std::size_t total, std::chrono::steady_clock::time_point t0) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const int width = 30;
  const int filled = static_cast<int>(width * done / std::max<std::size_t>(total, 1));
  std::string eta = done == 0 ? "?" : fmt::format("{:.0f} s", elapsed / done * (total - done));
  std::fprintf(stderr, "\r\033[Knicsim bench [%s%s] %zu/%zu points, %.0f s, ETA %s", std::string(filled, '#').c_str(),
               std::string(width - filled, '.').c_str(), done, total, elapsed, eta.c_str());
  if (done == total) std::fprintf(stderr, "\r\033[K");
}

std::vector<Job> plan(const std::vector<LoadedSuite>& suites, const RunOptions& options, BenchResults& results) {
  const std::regex filter(options.filter.empty() ? ".*" : options.filter);
  std::vector<Job> jobs;
  for (const LoadedSuite& s : suites) {
    SuiteResult* sr = results.add_suite();
    sr->set_name(s.suite.name());
    sr->set_description(s.suite.description());
    sr->set_suite_file(fs::absolute(s.file).string());
    for (const Point& p : s.suite.point()) {
      if (options.quick && !p.quick()) continue;
      if (!std::regex_search(s.suite.name() + "/" + p.name(), filter)) continue;
      PointResult* pr = sr->add_point();
      pr->set_name(p.name());
      pr->set_scenario(p.scenario());
      const fs::path rel = fs::path("points") / s.suite.name() / p.name();
      pr->set_out_dir(rel.string());
      jobs.push_back(Job{&s, &p, pr, fs::path(options.out_dir) / rel});
    }
  }
  return jobs;
}

}  // namespace

BenchResults run_suites(const std::vector<LoadedSuite>& suites, const RunOptions& options) {
  BenchResults results;
  results.set_version(NICSIM_VERSION);
  results.set_quick(options.quick);
  for (const std::string& p : options.params) results.add_params(p);
  std::vector<Job> jobs = plan(suites, options, results);
  const bool tty = isatty(STDERR_FILENO);
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t next = 0, done = 0;
  std::map<pid_t, Job*> running;
  try {
    while (done < jobs.size()) {
      while (next < jobs.size() && running.size() < static_cast<std::size_t>(std::max(options.jobs, 1))) {
        start(jobs[next], options);
        running[jobs[next].pid] = &jobs[next];
        ++next;
      }
      if (tty) show_progress(done, jobs.size(), t0);
      int status = 0;
      const pid_t pid = waitpid(-1, &status, 0);
      auto it = running.find(pid);
      if (it == running.end()) continue;
      Job& job = *it->second;
      running.erase(it);
      ++done;
      finish(job, status);
    }
  } catch (...) {
    // Bad input in one point ends the run: the others still running are
    // waited for, so none outlives the command.
    int status = 0;
    for (const auto& entry : running) waitpid(entry.first, &status, 0);
    throw;
  }
  if (tty) show_progress(done, jobs.size(), t0);
  return results;
}

}  // namespace nicsim::bench
