// Drivers and the stacks above them reach the hardware only through the
// host bus (DESIGN rules 1 and 3): no file of theirs may name the world
// (World::current) or reach into a node's NIC model (nic_as<...>). A
// folder that does not exist in this tree is skipped.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

constexpr const char* kFolders[] = {"verbs/driver", "elan_model/driver", "ep", "ti", "dapl"};
constexpr const char* kForbidden[] = {"World::current", "nic_as<"};

TEST(Layering, DriversAndStacksNameNeitherTheWorldNorANicModel) {
  std::vector<std::string> hits;
  int files = 0;
  for (const char* folder : kFolders) {
    const fs::path root = fs::path(NICSIM_SOURCE_DIR) / folder;
    if (!fs::is_directory(root)) continue;
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(root)) {
      if (!e.is_regular_file()) continue;
      ++files;
      std::ifstream in(e.path(), std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      for (const char* word : kForbidden)
        if (text.str().find(word) != std::string::npos)
          hits.push_back(fs::relative(e.path(), NICSIM_SOURCE_DIR).string() + ": " + word);
    }
  }
  EXPECT_GT(files, 0);
  for (const std::string& h : hits) ADD_FAILURE() << h;
}

}  // namespace
