#include "world/programs.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <exception>
#include <utility>

#include "core/sim.h"
#include "host/host.h"
#include "scenario/loader.h"
#include "trace/trace.h"
#include "world/node.h"
#include "world/world.h"

namespace nicsim {

ProgramRegistry& ProgramRegistry::instance() {
  static ProgramRegistry registry;
  return registry;
}

bool ProgramRegistry::add(const std::string& name, nicsim_program_fn fn, const std::string& doc,
                          nicsim_args_check_fn check) {
  if (name.empty() || !fn || programs_.count(name)) return false;
  programs_.emplace(name, ProgramInfo{name, fn, check, doc, loading_origin_});
  return true;
}

namespace {
thread_local ArgsCheckReport* active_check = nullptr;
}

ArgsCheckReport* current_args_check() { return active_check; }

ProgramLookup registered_programs() {
  ProgramLookup lookup([](std::string_view name) { return ProgramRegistry::instance().find(name) != nullptr; });
  lookup.check_args = [](std::string_view name, const std::vector<std::string>& args) {
    const ProgramInfo* program = ProgramRegistry::instance().find(name);
    return program ? ProgramRegistry::check_args(*program, args) : std::string();
  };
  return lookup;
}

std::string ProgramRegistry::check_args(const ProgramInfo& program, const std::vector<std::string>& args) {
  if (!program.check) return {};
  // The parser gets its own writable copies, as a running program does.
  std::vector<std::string> words{program.name};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  ArgsCheckReport report;
  int status = 0;
  {
    // Restored however the check ends: a C++ check (a plugin's) may throw.
    struct Active {
      ArgsCheckReport* outer;
      ~Active() { active_check = outer; }
    } active{std::exchange(active_check, &report)};
    try {
      status = program.check(static_cast<int>(words.size()), argv.data());
    } catch (const std::exception& e) {
      return fmt::format("its argument check threw: {}", e.what());
    }
  }
  if (!report.misuse.empty())
    return fmt::format("its argument check called {}, which only a running program may call", report.misuse);
  // Programs prefix their messages with their name, which the caller's
  // message gives already.
  auto unprefixed = [&](const std::string& text) {
    const std::string prefix = program.name + ": ";
    return text.rfind(prefix, 0) == 0 ? text.substr(prefix.size()) : text;
  };
  if (!report.failure.empty()) return unprefixed(report.failure);
  if (status == 0) return {};
  if (!report.last_log.empty()) return unprefixed(report.last_log);
  return fmt::format("its argument check returned {} without saying why", status);
}

const ProgramInfo* ProgramRegistry::find(std::string_view name) const {
  auto it = programs_.find(name);
  return it == programs_.end() ? nullptr : &it->second;
}

std::vector<const ProgramInfo*> ProgramRegistry::all() const {
  std::vector<const ProgramInfo*> out;
  for (auto& [_, p] : programs_) out.push_back(&p);
  return out;
}

std::string ProgramRegistry::load_plugin(const std::string& path) {
  // RTLD_GLOBAL is not needed: plugins resolve nicsim symbols against the
  // already-loaded libnicsim.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return fmt::format("{}: cannot load plugin: {}", path, dlerror());
  using InitFn = int (*)();
  auto init = reinterpret_cast<InitFn>(dlsym(handle, "nicsim_plugin_init"));
  if (!init) return fmt::format("{}: not a nicsim plugin (no nicsim_plugin_init symbol)", path);
  loading_origin_ = path;
  int rc = init();
  loading_origin_ = "built-in";
  if (rc != 0) return fmt::format("{}: nicsim_plugin_init returned {}", path, rc);
  return {};
}

const FsmType& ProgramMachine::type() {
  using S = ProgramState;
  using E = ProgramEvent;
  static const FsmType type =
      make_fsm_type<ProgramMachine>("program", {{S::Pending, E::Start, S::Running, "start"},
                                                {S::Running, E::Finish, S::Finished, "exit_ok"},
                                                {S::Running, E::Fail, S::Failed, "exit_failed"}});
  return type;
}

ProgramInstance::ProgramInstance(const ProgramInfo& info, const WorkloadSpec& workload, std::uint32_t workload_index,
                                 std::uint32_t rank, Node& node)
    : info_(info),
      workload_(workload),
      workload_index_(workload_index),
      rank_(rank),
      node_(node),
      fsm_(fmt::format("{}.{}[{}]", node.name(), info.name, workload_index), node.id(), ProgramState::Pending) {
  Sim::get().fsm().declare<ProgramMachine>();
  args_.push_back(info.name);
  for (auto& a : workload.args) args_.push_back(a);
}

void ProgramInstance::start() {
  main_thread_ = node_.host().spawn(fmt::format("{}[{}]", info_.name, workload_index_), [this] { run(); });
  main_thread_->user_context = this;
}

void ProgramInstance::run() {
  host::Host& h = node_.host();
  if (workload_.start > now()) h.sleep(workload_.start - now());
  fsm_.fire(ProgramEvent::Start, "start");
  Sim& sim = Sim::get();
  if (sim.tracer().on(node_.id(), Component::program))
    sim.tracer().record(now(), node_.id(), Component::program, "start", {{"program", info_.name}, {"rank", rank_}});
  std::vector<char*> argv;
  for (auto& a : args_) argv.push_back(a.data());
  argv.push_back(nullptr);
  exit_code_ = info_.fn(static_cast<int>(args_.size()), argv.data());
  if (exit_code_ != 0 && failure_.empty())
    failure_ = last_log_.empty() ? fmt::format("exited with status {}", exit_code_)
                                 : fmt::format("exited with status {}; its last log line: {}", exit_code_, last_log_);
  bool ok = failure_.empty();
  if (ok)
    fsm_.fire(ProgramEvent::Finish, "exit_ok");
  else
    fsm_.fire(ProgramEvent::Fail, failure_);
  if (sim.tracer().on(node_.id(), Component::program))
    sim.tracer().record(now(), node_.id(), Component::program, "exit",
                        {{"program", info_.name}, {"status", exit_code_}});
  if (World* w = World::current()) w->program_finished(*this);
}

void ProgramInstance::become_daemon() {
  if (daemon) return;
  // The run no longer waits for it, as if it had ended.
  if (World* w = World::current()) w->program_finished(*this);
  daemon = true;
}

void ProgramInstance::result(std::string name, double value, std::string unit) {
  results_.push_back(ProgramResultValue{std::move(name), value, std::move(unit)});
}

void ProgramInstance::fail(std::string reason) {
  if (failure_.empty()) failure_ = std::move(reason);
}

ProgramInstance* current_program() {
  host::Host* h = host::Host::current_host();
  if (!h) return nullptr;
  host::HostThread* t = h->current();
  return t ? static_cast<ProgramInstance*>(t->user_context) : nullptr;
}

}  // namespace nicsim
