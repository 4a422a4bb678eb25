// The HCA's engines trace each step when the NIC trace is on: an RDMA write,
// read and atomics (t_rc_rdma) and an RNR NAK (t_rc_rnr) take the steps
// the requester, responder and completer are written as, in order; with the
// NIC trace off nothing of them is written.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

#include "core/sim.h"
#include "scenario/loader.h"
#include "world/programs.h"
#include "world/world.h"

using namespace nicsim;

namespace {

// The value of "key" in a JSON line of the trace ("" when absent).
std::string field(const std::string& line, const std::string& key) {
  const std::string k = "\"" + key + "\":\"";
  const auto at = line.find(k);
  if (at == std::string::npos) return "";
  const auto from = at + k.size();
  return line.substr(from, line.find('"', from) - from);
}

struct Traced {
  std::set<std::string> runs;  // each engine run's steps: "responder: GetReq ChkPsn ..."
  std::size_t records = 0;     // trace records of any kind
};

// Runs the test program `program` on two HCAs with the trace of `component`
// on; an engine run starts at its engine's first step.
Traced engine_runs(const std::string& program, const std::string& args, const std::string& component) {
  const std::string text = R"(
    topology { star { hosts: 2 } nic: "hca" }
    subnet_manager { off: true }
    workload { program: ")" +
                           program + R"(" nodes: "*" )" + args + R"( }
    outputs { trace { device: "*" component: ")" +
                           component + R"(" } })";
  const Scenario sc = load_scenario_text(
      text, "test.textproto", [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
  const std::string path = "/tmp/nicsim_hca_steps_" + std::to_string(getpid()) + ".jsonl";
  {
    Sim sim(sc.seed);
    World world(sc);
    world.open_outputs(path, "");
    const RunStatus st = world.run();
    world.close_outputs();
    EXPECT_TRUE(st.ok);
    for (auto& p : world.programs()) EXPECT_EQ(p->state(), ProgramState::Finished) << p->failure();
  }
  const std::map<std::string, std::string> first{
      {"requester", "ChkState"}, {"responder", "GetReq"}, {"completer", "GetAck"}};
  std::map<std::string, std::string> open;  // by device and engine: the run so far
  Traced t;
  std::set<std::string>& runs = t.runs;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    ++t.records;
    const std::string engine = field(line, "ev"), step = field(line, "step");
    if (!first.count(engine) || step.empty()) continue;
    std::string& run = open[field(line, "dev") + " " + engine];
    if (step == first.at(engine)) {
      if (!run.empty()) runs.insert(run);
      run = engine + ":";
    }
    run += " " + step;
  }
  for (auto& [key, run] : open)
    if (!run.empty()) runs.insert(run);
  std::remove(path.c_str());
  return t;
}

TEST(HcaSteps, RdmaWriteReadAndAtomicsTakeTheirSteps) {
  const std::set<std::string> runs = engine_runs("t_rc_rdma", "", "nic").runs;
  const char* expected[] = {
      "requester: ChkState GetWqe ChkFence Segment Gather Advance ArmTimer",
      "requester: ChkState GetWqe ChkFence ChkReadLimit ReadRequest ArmTimer",
      "requester: ChkState GetWqe",
      "responder: GetReq ChkPsn ChkOpSeq ChkOpValid ChkRkey ChkLength Execute Complete Acknowledge",
      "responder: GetReq ChkPsn ChkOpSeq ChkOpValid ChkLength Execute Complete Acknowledge",
      "responder: GetReq ChkPsn ChkOpSeq ChkOpValid ChkRkey ChkLength ChkResource Execute Complete Acknowledge",
      "responder: GetReq ChkPsn ChkOpSeq ChkOpValid ChkResource ChkRkey Execute Acknowledge",
      // An atomic stalls for its read of the target, then resumes.
      "responder: GetReq ChkPsn ChkOpSeq ChkOpValid ChkRkey Execute",
      "responder: GetReq ChkPsn ChkOpSeq ChkOpValid Execute Acknowledge",
      "completer: GetAck AckWqes ChkAck UpdateComp",
      "completer: GetAck ImplicitAck ChkWqe ChkPsn ChkLength Read",
      "completer: GetAck ImplicitAck ChkWqe ChkPsn ChkLength Read CompWqe UpdateComp",
      "completer: GetAck ImplicitAck ChkWqe Atomic CompWqe UpdateComp",
  };
  for (const char* e : expected) EXPECT_TRUE(runs.count(e)) << "no engine run " << e;
  EXPECT_FALSE(runs.count("responder: GetReq ChkPsn ChkOpSeq ChkOpValid ChkRkey ChkLength Execute Complete"))
      << "runs end at a final step";
}

TEST(HcaSteps, RnrNakTakesTheRnrSteps) {
  const std::set<std::string> runs = engine_runs("t_rc_rnr", "", "nic").runs;
  EXPECT_TRUE(runs.count("responder: GetReq ChkPsn ChkOpSeq ChkOpValid ChkResource ErrRnr"));
  EXPECT_TRUE(runs.count("completer: GetAck AckWqes ChkAck RnrRetry"));
}

TEST(HcaSteps, NothingOfThemIsTracedWithTheNicTraceOff) {
  const Traced t = engine_runs("t_rc_rdma", "", "fabric");
  EXPECT_GT(t.records, 20u);  // the fabric trace is on
  EXPECT_TRUE(t.runs.empty());
}

}  // namespace
