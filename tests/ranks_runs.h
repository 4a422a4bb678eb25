// Runs of one scenario in one process and under mpirun on several rank
// counts, compared byte for byte (docs/partition.md). Built only with the
// MPI engine.
#pragma once
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "sim/tests/test_shell.h"

namespace nicsim::testing::ranks {

namespace fs = std::filesystem;

// Open MPI refuses root without these (CI runs as root). In the sanitizer
// build the ranks run with AddressSanitizer and UBSan but without the leak
// check: LeakSanitizer's stop-the-world tracer crashes now and then among
// Open MPI's threads, and what Open MPI keeps after finalising is not
// nicsim's. The one-process runs here (the same code but the plug-in and the
// merge) keep it.
constexpr const char* kMpirun =
    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
    "ASAN_OPTIONS=${ASAN_OPTIONS}:detect_leaks=0 " NICSIM_MPIRUN " --oversubscribe -np ";

// Runs `args` in one process, then on each rank count, and expects the
// same results.json and summary.txt from each. Returns the one-process
// summary; the outputs stay in `dir`/one and `dir`/ranksN.
inline std::string same_on_every_rank_count(const std::string& name, const std::string& args, bool traced = false,
                                            int exit_code = 0, fs::path* outputs = nullptr, bool mpi_sync = false) {
  const fs::path dir = nicsim::testing::temp_dir("ranks_" + name);
  if (outputs) *outputs = dir;
  const auto one = run_command(fmt::format("{} run {} --out {} 2>&1", NICSIM_BIN, args, (dir / "one").string()));
  EXPECT_EQ(one.status, exit_code) << one.output;
  const std::string results = slurp(dir / "one" / "results.json");
  const std::string summary = slurp(dir / "one" / "summary.txt");
  EXPECT_GT(results.size(), 1000u);
  if (traced) {
    EXPECT_GT(slurp(dir / "one" / "trace.jsonl").size(), 10000u);
    EXPECT_GT(slurp(dir / "one" / "timeline.json").size(), 10000u);
  }
  // Ranks on one machine meet in shared memory: with 4 ranks its slots are
  // small, so that windows with more to send go by MPI; `mpi_sync` adds a
  // run on 2 ranks with MPI collectives only.
  std::vector<std::pair<int, std::string>> runs = {{1, ""}, {2, ""}, {4, "NICSIM_RANK_SLOT_BYTES=512"}};
  if (mpi_sync) runs.emplace_back(2, "NICSIM_RANK_SYNC=mpi");
  for (const auto& [ranks, env] : runs) {
    const fs::path out = dir / fmt::format("ranks{}{}", ranks, env.empty() ? "" : "_env");
    const auto r = run_command(
        fmt::format("{} {}{} {} run {} --out {} 2>&1", env, kMpirun, ranks, NICSIM_BIN, args, out.string()));
    EXPECT_EQ(r.status, exit_code) << ranks << " ranks: " << r.output;
    EXPECT_EQ(slurp(out / "summary.txt"), summary) << ranks << " ranks";
    EXPECT_TRUE(slurp(out / "results.json") == results) << ranks << " ranks: results.json differs";
    for (const char* file : {"trace.jsonl", "timeline.json", "packets.pcap"}) {
      if (fs::exists(dir / "one" / file)) {
        EXPECT_TRUE(slurp(out / file) == slurp(dir / "one" / file)) << ranks << " ranks: " << file << " differs";
      }
    }
    if (ranks > 1) {
      EXPECT_NE(r.output.find(fmt::format("(rank 0 of {}, the largest rank ", ranks)), std::string::npos) << r.output;
      EXPECT_NE(slurp(out / "wall.json").find(fmt::format("\"ranks\": {}", ranks)), std::string::npos);
    }
  }
  return summary;
}

inline fs::path write_scenario(const std::string& name, const std::string& text) {
  const fs::path p = nicsim::testing::temp_dir("ranks_scenario_" + name) / (name + ".textproto");
  std::ofstream(p) << text;
  return p;
}

}  // namespace nicsim::testing::ranks
