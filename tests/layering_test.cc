// The layering rules of the source tree (docs/layers.md):
// - every include reaches the file's own layer or one below it (tests may
//   also use the shared fixture in sim/tests);
// - the core (sim/) names no network: no InfiniBand, Elan or Elite word in
//   any of its files, so that a network kind lives entirely in its layer;
// - drivers and the stacks above them reach the hardware only through the
//   host bus (DESIGN rules 1 and 3): no file of theirs names the world
//   (World::current) or reaches into a node's NIC model (nic_as<...>).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Folders (longest match wins) and the layer each belongs to.
const std::vector<std::pair<std::string, std::string>> kFolders = {
    {"sim/core", "core"},
    {"sim/fsm", "core"},
    {"sim/trace", "core"},
    {"sim/include", "core"},
    {"sim/host", "host"},
    {"sim/fabric", "fabric"},
    {"sim/scenario", "world"},
    {"sim/world", "world"},
    {"sim/cli", "world"},
    {"sim/debug", "world"},
    {"sim/tests", "world"},
    {"sim/fuzz", "world"},
    {"ib_wire", "ib_wire"},
    {"ib_fabric", "ib_fabric"},
    {"hca_model", "hca_model"},
    {"verbs", "verbs"},
    {"elite", "elite"},
    {"elan_model", "elan_model"},
    {"ep/eip", "eip"},
    {"ep", "ep"},
    {"cm", "cm"},
    {"ti", "ti"},
    {"dapl", "dapl"},
};

// Each layer's direct dependencies (as in its CMakeLists.txt).
const std::map<std::string, std::vector<std::string>> kDepends = {
    {"core", {}},
    {"host", {"core"}},
    {"fabric", {"core"}},
    {"world", {"host", "fabric"}},
    {"ib_wire", {"core"}},
    {"ib_fabric", {"ib_wire", "world"}},
    {"hca_model", {"ib_fabric", "world", "host"}},
    {"verbs", {"hca_model", "ib_fabric", "world", "host"}},
    {"elite", {"world"}},
    {"elan_model", {"elite", "world", "host"}},
    {"ep", {"elan_model", "host"}},
    {"eip", {"ep"}},
    {"cm", {"verbs"}},
    {"ti", {"cm", "ep"}},
    {"dapl", {"cm"}},
};

// The first folder of an include path, and the layer it reaches.
const std::map<std::string, std::string> kIncludeRoots = {
    {"core", "core"},
    {"fsm", "core"},
    {"trace", "core"},
    {"nicsim", "core"},
    {"host", "host"},
    {"fabric", "fabric"},
    {"scenario", "world"},
    {"world", "world"},
    {"scenario.pb.h", "world"},
    {"results.pb.h", "world"},
    {"ib_wire", "ib_wire"},
    {"ib_fabric", "ib_fabric"},
    {"hca_model", "hca_model"},
    {"verbs", "verbs"},
    {"iba", "verbs"},
    {"elite", "elite"},
    {"elan_model", "elan_model"},
    {"ep", "ep"},
    {"elan3", "ep"},
    {"cm", "cm"},
    {"rdma", "cm"},
    {"linux", "cm"},
    {"ti", "ti"},
    {"dapl", "dapl"},
    {"dat", "dapl"},
};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string rel_path(const fs::path& p) { return fs::relative(p, NICSIM_SOURCE_DIR).generic_string(); }

bool is_source(const fs::path& p) {
  static const std::set<std::string> kExt = {".h", ".cc", ".c", ".proto", ".txt"};
  return kExt.count(p.extension().string()) > 0;
}

std::string layer_of(const std::string& rel) {
  std::string best, layer;
  for (const auto& [folder, l] : kFolders)
    if (rel.rfind(folder + "/", 0) == 0 && folder.size() > best.size()) best = folder, layer = l;
  return layer;
}

std::set<std::string> reachable(const std::string& layer) {
  std::set<std::string> out{layer};
  std::vector<std::string> todo{layer};
  while (!todo.empty()) {
    const std::string l = todo.back();
    todo.pop_back();
    auto it = kDepends.find(l);
    if (it == kDepends.end()) continue;
    for (const std::string& d : it->second)
      if (out.insert(d).second) todo.push_back(d);
  }
  return out;
}

// The layer an include reaches: "ep/eip/..." is eip, otherwise the first
// folder decides. Empty for a system or same-folder include.
std::string include_layer(const std::string& path) {
  if (path.rfind("ep/eip/", 0) == 0) return "eip";
  const std::string root = path.substr(0, path.find('/'));
  auto it = kIncludeRoots.find(root);
  return it == kIncludeRoots.end() ? std::string() : it->second;
}

std::vector<fs::path> files_under(const std::string& folder) {
  std::vector<fs::path> out;
  const fs::path root = fs::path(NICSIM_SOURCE_DIR) / folder;
  if (!fs::is_directory(root)) return out;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && is_source(e.path())) out.push_back(e.path());
  return out;
}

TEST(Layering, IncludesReachOnlyTheFilesLayerAndTheLayersBelow) {
  const std::regex include_line(R"re(#\s*include\s*[<"]([^">]+)[">])re");
  int files = 0;
  for (const auto& [folder, layer] : kFolders) {
    for (const fs::path& p : files_under(folder)) {
      const std::string rel = rel_path(p);
      if (layer_of(rel) != layer) continue;  // a deeper folder's file
      ++files;
      const std::string text = read(p);
      const bool test = rel.find("/tests/") != std::string::npos;
      const std::set<std::string> allowed = reachable(layer);
      for (std::sregex_iterator m(text.begin(), text.end(), include_line), end; m != end; ++m) {
        const std::string path = (*m)[1];
        if (test && path.rfind("sim/tests/", 0) == 0) continue;
        const std::string reached = include_layer(path);
        if (!reached.empty() && !allowed.count(reached))
          ADD_FAILURE() << rel << " (layer " << layer << ") includes " << path << " from layer " << reached;
      }
    }
  }
  EXPECT_GT(files, 100);
}

TEST(Layering, TheCoreNamesNoNetwork) {
  const std::regex network(
      R"(\b(IB|IBA|InfiniBand|Infiniband|HCA|hca|Elan\w*|elan\w*|ELAN\w*|Elite\w*|elite\w*|Quadrics)\b)");
  int files = 0;
  for (const fs::path& p : files_under("sim")) {
    ++files;
    const std::string text = read(p);
    std::smatch m;
    std::istringstream lines(text);
    std::string line;
    for (int n = 1; std::getline(lines, line); ++n)
      if (std::regex_search(line, m, network)) ADD_FAILURE() << rel_path(p) << ":" << n << ": names " << m[1];
  }
  EXPECT_GT(files, 50);
}

TEST(Layering, DriversAndStacksNameNeitherTheWorldNorANicModel) {
  constexpr const char* kDrivers[] = {"verbs/driver", "elan_model/driver", "ep", "cm", "ti", "dapl"};
  constexpr const char* kForbidden[] = {"World::current", "nic_as<"};
  int files = 0;
  for (const char* folder : kDrivers) {
    for (const fs::path& p : files_under(folder)) {
      ++files;
      const std::string text = read(p);
      for (const char* word : kForbidden)
        if (text.find(word) != std::string::npos) ADD_FAILURE() << rel_path(p) << ": " << word;
    }
  }
  EXPECT_GT(files, 0);
}

}  // namespace
