// Turns a finished World into results: the Results message (results.json),
// the WallClock message (wall.json), and a short human summary.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "results.pb.h"
#include "world/world.h"

namespace nicsim {

results::Results collect_results(World& world, const RunStatus& status);
// Errors in the order (time, where): how a run split into blocks lists them.
void sort_errors(results::Results& r);
// The same for a run over several processes (world/rank_results.cc): every
// rank calls it; rank 0 gets the whole run's results, merged from each
// rank's part (the others get their own part only). With one process it is
// collect_results.
results::Results collect_rank_results(World& world, const RunStatus& status);
// Each rank's peak RSS, at rank 0 (this process's alone with one process).
std::vector<std::uint64_t> gather_peak_rss(World& world);
results::WallClock collect_wall(World& world, double wall_seconds);
std::string to_json(const google::protobuf::Message& m);
void print_summary(std::ostream& out, const results::Results& r, const results::WallClock* wall);
std::uint64_t peak_rss_bytes();

}  // namespace nicsim
