// Turns a finished World into results: the Results message (results.json),
// the WallClock message (wall.json), and a short human summary.
#pragma once
#include <ostream>
#include <string>

#include "results.pb.h"
#include "world/world.h"

namespace nicsim {

results::Results collect_results(World& world, const RunStatus& status);
results::WallClock collect_wall(World& world, double wall_seconds);
std::string to_json(const google::protobuf::Message& m);
void print_summary(std::ostream& out, const results::Results& r, const results::WallClock* wall);
std::uint64_t peak_rss_bytes();

}  // namespace nicsim
