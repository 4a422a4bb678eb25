// Turns a finished World into results: the Results message (results.json),
// the WallClock message (wall.json), and a short human summary.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "results.pb.h"
#include "trace/stats.h"
#include "world/world.h"

namespace nicsim {

// What a process collects: the whole run's results, or, in a run over
// several processes, only what another rank merges from it
// (world/rank_results.cc): the programs of its nodes, the links with an end
// on its devices, and no distributions (their histograms travel whole).
enum class CollectScope { Everything, OwnPart };
// `raw_elsewhere`: the raw NICs' latencies other processes of the run
// recorded (world/rank_results.cc), merged into the fabric's.
results::Results collect_results(World& world, const RunStatus& status, const Histogram* raw_elsewhere = nullptr,
                                 CollectScope scope = CollectScope::Everything);
// The latencies of the raw NICs this process runs, merged.
Histogram raw_latency(World& world);
// Errors in the order (time, where): how a run split into blocks lists them.
void sort_errors(results::Results& r);
// The same for a run over several processes (world/rank_results.cc): every
// rank calls it; rank 0 gets the whole run's results, merged from each
// rank's part (the others get an empty message). With one process it is
// collect_results.
results::Results collect_rank_results(World& world, const RunStatus& status);
// Each rank's peak RSS, at rank 0 (this process's alone with one process).
std::vector<std::uint64_t> gather_peak_rss(World& world);
results::WallClock collect_wall(World& world, double wall_seconds);
std::string to_json(const google::protobuf::Message& m);
// The same text as to_json(m), written to `out` as it is made: the
// top-level repeated message fields go an element at a time, so a large
// world's results need about one element's conversion in memory rather than
// the whole document's (protobuf's converter holds a tree of the whole
// message, about thirty times the text). `m` is borrowed: its repeated
// fields are moved aside while the rest is converted and put back.
void write_json(std::ostream& out, google::protobuf::Message& m);
void print_summary(std::ostream& out, const results::Results& r, const results::WallClock* wall);
std::uint64_t peak_rss_bytes();

}  // namespace nicsim
