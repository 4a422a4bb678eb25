// Registered consumer programs (built-in and from plugins) and their running
// instances. The C side of this is nicsim/app.h.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fsm/fsm.h"
#include "nicsim/app.h"

namespace nicsim {

namespace host {
class HostThread;
}
class Node;
struct ProgramLookup;
struct WorkloadSpec;

struct ProgramInfo {
  std::string name;
  nicsim_program_fn fn;
  nicsim_args_check_fn check;  // nullptr: the program checks its arguments only when it runs
  std::string doc;
  std::string origin;  // "built-in" or the plugin's path
};

class ProgramRegistry {
 public:
  static ProgramRegistry& instance();
  bool add(const std::string& name, nicsim_program_fn fn, const std::string& doc, nicsim_args_check_fn check = nullptr);
  const ProgramInfo* find(std::string_view name) const;
  // Runs the program's argument check on `args` (without argv[0]): "" when
  // it takes them or has no check, else its reason.
  static std::string check_args(const ProgramInfo& program, const std::vector<std::string>& args);
  std::vector<const ProgramInfo*> all() const;  // sorted by name
  // dlopen()s a plugin and calls its nicsim_plugin_init. Returns "" or an
  // error message naming the file and the reason.
  std::string load_plugin(const std::string& path);

 private:
  std::map<std::string, ProgramInfo, std::less<>> programs_;
  std::string loading_origin_ = "built-in";
};

// Workload instance states: every program instance is an FSM too.
// FSM "program": Start when its start time comes; Finish or Fail when its
// main function returns (Fail: a non-zero status or a reported failure).
#define NICSIM_PROGRAM_STATES(X) X(Pending) X(Running) X(Finished) X(Failed)
#define NICSIM_PROGRAM_EVENTS(X) X(Start) X(Finish) X(Fail)
NICSIM_FSM_ENUM(ProgramState, NICSIM_PROGRAM_STATES)
NICSIM_FSM_ENUM(ProgramEvent, NICSIM_PROGRAM_EVENTS)
struct ProgramMachine {
  using State = ProgramState;
  using Event = ProgramEvent;
  static const FsmType& type();
};

struct ProgramResultValue {
  std::string name;
  double value;
  std::string unit;
};

// One program running on one node for one workload.
class ProgramInstance {
 public:
  ProgramInstance(const ProgramInfo& info, const WorkloadSpec& workload, std::uint32_t workload_index,
                  std::uint32_t rank, Node& node);
  const ProgramInfo& info() const { return info_; }
  const WorkloadSpec& workload() const { return workload_; }
  std::uint32_t workload_index() const { return workload_index_; }
  std::uint32_t rank() const { return rank_; }
  Node& node() const { return node_; }
  ProgramState state() const { return fsm_.state(); }
  int exit_code() const { return exit_code_; }
  const std::string& failure() const { return failure_; }
  const std::vector<ProgramResultValue>& results() const { return results_; }
  host::HostThread* main_thread() const { return main_thread_; }

  void start();  // spawns the main thread; it waits for the workload's start time
  void result(std::string name, double value, std::string unit);
  void fail(std::string reason);
  // The program logged `line` (nicsim_log): a program that exits with an
  // error status without saying why (nicsim_fail) is reported with its
  // last line, which is where such programs say it.
  void logged(const char* line) { last_log_ = line; }
  void* context = nullptr;
  // A service (the subnet manager) the run does not wait for: it may still
  // be blocked when the workloads are done. A workload's program that turns
  // out to be one says so with become_daemon().
  bool daemon = false;
  void become_daemon();
  std::uint64_t barrier_generation = 0;

 private:
  void run();
  const ProgramInfo& info_;
  const WorkloadSpec& workload_;
  std::uint32_t workload_index_;
  std::uint32_t rank_;
  Node& node_;
  Fsm<ProgramMachine> fsm_;
  int exit_code_ = 0;
  std::string failure_;
  std::string last_log_;
  std::vector<ProgramResultValue> results_;
  std::vector<std::string> args_;
  host::HostThread* main_thread_ = nullptr;
};

// The program instance the calling simulated thread belongs to, or nullptr.
ProgramInstance* current_program();

// The loader's view of the registry: a program is known when registered,
// and its argument check judges a workload's arguments.
ProgramLookup registered_programs();

// What a program's argument check said, while one runs on this thread
// (nicsim_fail, nicsim_log, and calls it may not make); nullptr otherwise.
struct ArgsCheckReport {
  std::string failure;
  std::string last_log;
  std::string misuse;
};
ArgsCheckReport* current_args_check();

// Registers a built-in program from a C++ translation unit at load time.
struct BuiltinProgram {
  BuiltinProgram(const char* name, nicsim_program_fn fn, const char* doc, nicsim_args_check_fn check = nullptr) {
    ProgramRegistry::instance().add(name, fn, doc, check);
  }
};

}  // namespace nicsim
