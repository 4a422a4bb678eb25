#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ostream>
#include <fstream>
#include <set>

#include "scenario/loader.h"

namespace nicsim {
namespace {

bool known_program(std::string_view name) { return name == "fabric_traffic" || name == "pingpong"; }

Scenario load(const std::string& text) { return load_scenario_text(text, "t.textproto", known_program); }

// The error a scenario text produces; fails the test if it loads.
ScenarioError error_of(const std::string& text) {
  try {
    load(text);
  } catch (const ScenarioError& e) {
    return e;
  }
  ADD_FAILURE() << "scenario loaded without error:\n" << text;
  return ScenarioError({}, "");
}

// Two nodes joined by one link: the smallest valid scenario, used as a base.
const char* kPair = R"(node { name: "a" }
node { name: "b" }
link { a: "a" b: "b" }
)";

std::string pair_plus(const std::string& extra) { return kPair + extra; }

// ---------------------------------------------------------------- valid files

TEST(Scenario, MinimalPairUsesDefaults) {
  Scenario s = load(kPair);
  EXPECT_EQ(s.file, "t.textproto");
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.stop_time, 0u);
  ASSERT_EQ(s.nodes.size(), 2u);
  EXPECT_EQ(s.nodes[0].nic, "raw");
  EXPECT_EQ(s.nodes[0].ports, 1u);
  EXPECT_EQ(s.nodes[1].loc.line, 2);
  EXPECT_EQ(s.nodes[1].loc.column, 8);
  ASSERT_EQ(s.links.size(), 1u);
  EXPECT_EQ(s.links[0].name, "a:1--b:1");
  EXPECT_EQ(s.links[0].a.kind, LinkEnd::Kind::Node);
  EXPECT_EQ(s.links[0].b.index, 1u);
  // Unset values are the registered defaults.
  const ParamScope* link_scope = ParamRegistry::instance().find("link");
  ASSERT_NE(link_scope, nullptr);
  EXPECT_EQ(s.links[0].params.scope(), link_scope);
  EXPECT_FALSE(s.links[0].params.is_set("bandwidth"));
  EXPECT_EQ(s.links[0].params.raw("delay"), link_scope->find("delay")->default_value);
  EXPECT_EQ(s.mgmt.scope(), ParamRegistry::instance().find("mgmt"));
  EXPECT_FALSE(s.mgmt.is_set("latency"));
  EXPECT_TRUE(s.outputs.trace.empty());
  EXPECT_EQ(s.outputs.timeline_max_events, 1000000u);
}

TEST(Scenario, QuickstartWithEverySection) {
  Scenario s = load(R"(
name: "quickstart"
description: "two hosts through one switch"
seed: 7
stop_time: "2ms"
node { name: "a" nic: "raw" param { key: "host.cpus" value: "4" }
       param { key: "nic.rx_rate" value: "4Gbps" } param { key: "bus.profile" value: "pci-66" } }
node { name: "b" }
switch { name: "s0" param { key: "ports" value: "4" } }
link_defaults { bandwidth: "8Gbps" delay: "10ns" param { key: "vls" value: "4" } }
link { name: "up" a: "a" b: "s0:3" bandwidth: "4Gbps" delay: "5ns" param { key: "drop_rate" value: "0.01" } }
link { a: "b" b: "s0" }
workload { program: "fabric_traffic" nodes: "*" start: "1us" args: "--pattern=permutation" args: "--load=0.9" }
fault { at: "10us" link: "up" link_down: true }
fault { at: "20us" link: "up" link_up: true }
fault { at: "0ns" link: "b:1--s0:1" drop_rate: "0.01" }
fault { at: "0ns" link: "up" bit_error_rate: "1e-9" }
multicast { name: "g0" mlid: 49152 members: "a" members: "b" }
management { param { key: "latency" value: "20us" } }
outputs { trace { device: "a" component: "fabric" } trace { } timeline: true timeline_max_events: "100000" }
)");
  EXPECT_EQ(s.name, "quickstart");
  EXPECT_EQ(s.description, "two hosts through one switch");
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.stop_time, 2 * kMs);
  ASSERT_EQ(s.nodes.size(), 2u);
  EXPECT_EQ(s.nodes[0].host.count("cpus"), 4u);
  EXPECT_EQ(s.nodes[0].nic_params.bandwidth("rx_rate"), 4000000000u);
  EXPECT_EQ(s.nodes[0].bus.text("profile"), "pci-66");
  EXPECT_TRUE(s.nodes[0].host.is_set("cpus"));
  EXPECT_FALSE(s.nodes[1].host.is_set("cpus"));
  ASSERT_EQ(s.switches.size(), 1u);
  EXPECT_EQ(s.switches[0].ports, 4u);
  ASSERT_EQ(s.links.size(), 2u);
  EXPECT_EQ(s.links[0].name, "up");
  EXPECT_EQ(s.links[0].b.kind, LinkEnd::Kind::Switch);
  EXPECT_EQ(s.links[0].b.port, 3u);
  EXPECT_EQ(s.links[0].params.bandwidth("bandwidth"), 4000000000u);
  EXPECT_EQ(s.links[0].params.time("delay"), 5 * kNs);
  EXPECT_EQ(s.links[0].params.count("vls"), 4u);
  EXPECT_DOUBLE_EQ(s.links[0].params.ratio("drop_rate"), 0.01);
  // The second link takes the switch's lowest free port and the defaults.
  EXPECT_EQ(s.links[1].name, "b:1--s0:1");
  EXPECT_EQ(s.links[1].b.port, 1u);
  EXPECT_EQ(s.links[1].params.time("delay"), 10 * kNs);
  EXPECT_EQ(s.links[1].params.count("vls"), 4u);
  ASSERT_EQ(s.workloads.size(), 1u);
  EXPECT_EQ(s.workloads[0].program, "fabric_traffic");
  EXPECT_EQ(s.workloads[0].nodes, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(s.workloads[0].start, kUs);
  EXPECT_EQ(s.workloads[0].args, (std::vector<std::string>{"--pattern=permutation", "--load=0.9"}));
  ASSERT_EQ(s.faults.size(), 4u);
  EXPECT_EQ(s.faults[0].kind, FaultSpec::Kind::LinkDown);
  EXPECT_EQ(s.faults[0].at, 10 * kUs);
  EXPECT_EQ(s.faults[1].kind, FaultSpec::Kind::LinkUp);
  EXPECT_EQ(s.faults[2].kind, FaultSpec::Kind::DropRate);
  EXPECT_EQ(s.faults[2].link, 1u);
  EXPECT_DOUBLE_EQ(s.faults[2].value, 0.01);
  EXPECT_EQ(s.faults[3].kind, FaultSpec::Kind::BitErrorRate);
  EXPECT_DOUBLE_EQ(s.faults[3].value, 1e-9);
  ASSERT_EQ(s.multicast.size(), 1u);
  EXPECT_EQ(s.multicast[0].mlid, 0xC000u);
  EXPECT_EQ(s.multicast[0].members, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(s.mgmt.time("latency"), 20 * kUs);
  ASSERT_EQ(s.outputs.trace.size(), 2u);
  EXPECT_EQ(s.outputs.trace[0].device, "a");
  EXPECT_EQ(s.outputs.trace[0].component, "fabric");
  EXPECT_EQ(s.outputs.trace[1].device, "*");
  EXPECT_EQ(s.outputs.trace[1].component, "*");
  EXPECT_TRUE(s.outputs.timeline);
  EXPECT_EQ(s.outputs.timeline_max_events, 100000u);
}

TEST(Scenario, Star) {
  Scenario s = load(R"(topology { star { hosts: 4 } node_param { key: "host.cpus" value: "8" } })");
  ASSERT_EQ(s.nodes.size(), 4u);
  ASSERT_EQ(s.switches.size(), 1u);
  ASSERT_EQ(s.links.size(), 4u);
  EXPECT_EQ(s.switches[0].name, "sw0");
  EXPECT_EQ(s.switches[0].ports, 4u);
  for (std::uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(s.nodes[i].name, "h" + std::to_string(i));
    EXPECT_EQ(s.nodes[i].nic, "raw");
    EXPECT_EQ(s.nodes[i].host.count("cpus"), 8u);
    EXPECT_EQ(s.links[i].name, "h" + std::to_string(i) + "--sw0");
    EXPECT_EQ(s.links[i].a.kind, LinkEnd::Kind::Node);
    EXPECT_EQ(s.links[i].a.index, i);
    EXPECT_EQ(s.links[i].a.port, 1u);
    EXPECT_EQ(s.links[i].b.kind, LinkEnd::Kind::Switch);
    EXPECT_EQ(s.links[i].b.port, i + 1);
  }
  EXPECT_EQ(s.node_index("h2"), 2u);
  EXPECT_EQ(s.switch_index("sw0"), 0u);
  EXPECT_EQ(s.link_index("h3--sw0"), 3u);
  EXPECT_FALSE(s.node_index("sw0").has_value());
  EXPECT_FALSE(s.link_index("nope").has_value());
}

TEST(Scenario, StarWithPrefixNameAndSwitchParam) {
  Scenario s = load(R"(topology {
  star { switch_name: "core" hosts: 2 }
  host_prefix: "n"
  switch_param { key: "ports" value: "8" }
  switch_param { key: "hop_latency" value: "50ns" }
}
node { name: "extra" }
link { a: "extra" b: "core" }
)");
  ASSERT_EQ(s.nodes.size(), 3u);
  EXPECT_EQ(s.nodes[0].name, "n0");
  EXPECT_EQ(s.nodes[2].name, "extra");
  EXPECT_EQ(s.switches[0].name, "core");
  EXPECT_EQ(s.switches[0].ports, 8u);
  EXPECT_EQ(s.switches[0].params.time("hop_latency"), 50 * kNs);
  ASSERT_EQ(s.links.size(), 3u);
  EXPECT_EQ(s.links[2].name, "extra:1--core:3");
  EXPECT_EQ(s.links[2].b.port, 3u);
}

TEST(Scenario, LeafSpine) {
  Scenario s = load(R"(topology { leaf_spine { leaves: 2 hosts_per_leaf: 2 spines: 2 links_per_spine: 2 } })");
  ASSERT_EQ(s.nodes.size(), 4u);
  ASSERT_EQ(s.switches.size(), 4u);
  ASSERT_EQ(s.links.size(), 4u + 2 * 2 * 2);
  EXPECT_EQ(s.switches[0].name, "leaf0");
  EXPECT_EQ(s.switches[1].name, "leaf1");
  EXPECT_EQ(s.switches[2].name, "spine0");
  EXPECT_EQ(s.switches[3].name, "spine1");
  EXPECT_EQ(s.switches[0].ports, 6u);  // 2 hosts + 2 spines x 2 copies
  EXPECT_EQ(s.switches[2].ports, 4u);  // 2 leaves x 2 copies
  // Host 3 is host 1 of leaf 1: leaf1 port 2.
  const LinkSpec& h3 = s.links[*s.link_index("h3--leaf1")];
  EXPECT_EQ(h3.a.index, 3u);
  EXPECT_EQ(h3.b.index, 1u);
  EXPECT_EQ(h3.b.port, 2u);
  // leaf1 -> spine1 copy 1: leaf port 2 + 1 + 1*2 + 1, spine port 1 + 1*2 + 1.
  const LinkSpec& up = s.links[*s.link_index("leaf1--spine1#1")];
  EXPECT_EQ(up.a.kind, LinkEnd::Kind::Switch);
  EXPECT_EQ(up.a.index, 1u);
  EXPECT_EQ(up.a.port, 6u);
  EXPECT_EQ(up.b.index, 3u);
  EXPECT_EQ(up.b.port, 4u);
  EXPECT_TRUE(s.link_index("leaf0--spine0#0").has_value());
}

TEST(Scenario, LeafSpineSingleLinkHasNoCopySuffix) {
  Scenario s = load(R"(topology { leaf_spine { leaves: 8 hosts_per_leaf: 8 spines: 4 } })");
  EXPECT_EQ(s.nodes.size(), 64u);
  EXPECT_EQ(s.switches.size(), 12u);
  EXPECT_EQ(s.links.size(), 64u + 32u);
  EXPECT_EQ(s.switches[0].ports, 12u);
  EXPECT_EQ(s.switches[8].ports, 8u);
  EXPECT_TRUE(s.link_index("leaf7--spine3").has_value());
  EXPECT_EQ(s.links[*s.link_index("leaf7--spine3")].b.port, 8u);
}

// Every switch port named by exactly one link, and counts per the definition.
void expect_fat_tree(const Scenario& s, std::uint32_t k, std::uint32_t n) {
  std::uint32_t hosts = 1;
  for (std::uint32_t i = 0; i < n; ++i) hosts *= k;
  const std::uint32_t per_level = hosts / k;
  ASSERT_EQ(s.nodes.size(), hosts);
  ASSERT_EQ(s.switches.size(), n * per_level);
  EXPECT_EQ(s.links.size(), hosts + (n - 1) * per_level * k);
  std::set<std::pair<std::uint32_t, std::uint32_t>> used;
  for (const LinkSpec& l : s.links) {
    for (const LinkEnd& e : {l.a, l.b}) {
      if (e.kind != LinkEnd::Kind::Switch) continue;
      EXPECT_GE(e.port, 1u);
      EXPECT_LE(e.port, s.switches[e.index].ports);
      EXPECT_TRUE(used.insert({e.index, e.port}).second) << l.name;
    }
  }
  std::size_t total_ports = 0;
  for (const SwitchSpec& sw : s.switches) total_ports += sw.ports;
  EXPECT_EQ(used.size(), total_ports);
}

TEST(Scenario, FatTree) {
  Scenario s = load(R"(topology { fat_tree { k: 4 n: 2 } })");
  expect_fat_tree(s, 4, 2);
  EXPECT_EQ(s.switches[0].name, "sw0_0");
  EXPECT_EQ(s.switches[4].name, "sw1_0");
  EXPECT_EQ(s.switches[0].ports, 8u);
  EXPECT_EQ(s.switches[4].ports, 4u);  // the top level uses only its down ports
  // Host 5 sits on leaf 1, port 2.
  const LinkSpec& h5 = s.links[*s.link_index("h5--sw0_1")];
  EXPECT_EQ(h5.b.port, 2u);
  // Leaf 1's up port k+1+u reaches top switch u on its down port 2.
  const LinkSpec& up = s.links[*s.link_index("sw0_1--sw1_3")];
  EXPECT_EQ(up.a.port, 8u);
  EXPECT_EQ(up.b.port, 2u);
}

TEST(Scenario, FatTreeThreeLevels) {
  Scenario s = load(R"(topology { fat_tree { k: 2 n: 3 } host_prefix: "p" })");
  expect_fat_tree(s, 2, 3);
  EXPECT_EQ(s.nodes[7].name, "p7");
  // Level 1 -> 2 changes digit 1 of the index: sw1_1 (binary 01) reaches
  // sw2_1 (01) and sw2_3 (11), arriving on down port digit1(01)+1 = 1.
  EXPECT_TRUE(s.link_index("sw1_1--sw2_1").has_value());
  EXPECT_TRUE(s.link_index("sw1_1--sw2_3").has_value());
  EXPECT_EQ(s.links[*s.link_index("sw1_1--sw2_3")].b.port, 1u);
  EXPECT_EQ(s.links[*s.link_index("sw1_3--sw2_3")].b.port, 2u);
}

TEST(Scenario, FatTreeSingleLevel) {
  Scenario s = load(R"(topology { fat_tree { k: 3 n: 1 } })");
  expect_fat_tree(s, 3, 1);
  EXPECT_EQ(s.switches[0].ports, 3u);
}

TEST(Scenario, ExplicitPortsAreClaimedBeforeLowestFree) {
  Scenario s = load(R"(node { name: "n1" }
node { name: "n2" }
switch { name: "s0" param { key: "ports" value: "3" } }
link { a: "n1" b: "s0" }
link { a: "n2" b: "s0:1" }
)");
  EXPECT_EQ(s.links[0].b.port, 2u);
  EXPECT_EQ(s.links[1].b.port, 1u);
  EXPECT_EQ(s.links[0].name, "n1:1--s0:2");
}

TEST(Scenario, WorkloadGlobsInScenarioOrderWithoutDuplicates) {
  Scenario s = load(R"(topology { star { hosts: 12 } }
workload { program: "pingpong" nodes: "h1?" nodes: "h[0-1]" nodes: "h10" })");
  EXPECT_EQ(s.workloads[0].nodes, (std::vector<std::uint32_t>{0, 1, 10, 11}));
  EXPECT_EQ(s.workloads[0].start, 0u);
}

TEST(Scenario, MulticastMembersAndTwoPortNic) {
  Scenario s = load(R"(node { name: "a" param { key: "nic.ports" value: "2" } }
node { name: "b" }
node { name: "c" }
link { a: "a:1" b: "b" }
link { a: "a:2" b: "c" }
multicast { mlid: 65534 members: "c" members: "a" })");
  EXPECT_EQ(s.nodes[0].ports, 2u);
  EXPECT_EQ(s.links[1].name, "a:2--c:1");
  EXPECT_EQ(s.multicast[0].members, (std::vector<std::uint32_t>{0, 2}));
}

TEST(Scenario, NullProgramLookupAcceptsAnyProgram) {
  Scenario s = load_scenario_text(pair_plus(R"(workload { program: "anything" nodes: "a" })"), "x", nullptr);
  EXPECT_EQ(s.workloads[0].program, "anything");
}

// An editor's UTF-8 byte-order mark before the text is not text.
TEST(Scenario, ByteOrderMarkIsSkipped) {
  Scenario s = load_scenario_text("\xEF\xBB\xBF" + pair_plus(R"(name: "bom")"), "x", nullptr);
  EXPECT_EQ(s.name, "bom");
  EXPECT_EQ(s.nodes.size(), 2u);
}

// A caller's limits hold every topology helper below the loader's caps, as
// an error located at the shape; without them the same file loads.
TEST(Scenario, LoadLimitsHoldTopologiesBelowTheCaps) {
  const std::string tree = R"(topology { fat_tree { k: 4 n: 6 } })";
  EXPECT_EQ(load_scenario_text(tree, "x", nullptr).nodes.size(), 4096u);
  const LoadLimits limits{.topology_hosts = 1024, .topology_links = 4096};
  try {
    load_scenario_text(tree, "x", nullptr, limits);
    FAIL() << "a 4,096-host tree loaded under a 1,024-host limit";
  } catch (const ScenarioError& e) {
    EXPECT_STREQ(e.what(), "x:1:12: fat_tree with k=4 n=6 has more than the limit of 1024 hosts");
  }
  const std::string wide = R"(topology { leaf_spine { leaves: 64 hosts_per_leaf: 4 spines: 64 } })";
  EXPECT_EQ(load_scenario_text(wide, "x", nullptr).links.size(), 256u + 64u * 64u);
  try {
    load_scenario_text(wide, "x", nullptr, limits);
    FAIL() << "4,352 links loaded under a 4,096-link limit";
  } catch (const ScenarioError& e) {
    EXPECT_STREQ(e.what(), "x:1:12: leaf_spine has 4352 links, more than the limit 4096");
  }
  // 1,024 hosts, and ten levels of 1,024 links each.
  try {
    load_scenario_text(R"(topology { fat_tree { k: 2 n: 10 } })", "x", nullptr, limits);
    FAIL() << "10,240 links loaded under a 4,096-link limit";
  } catch (const ScenarioError& e) {
    EXPECT_STREQ(e.what(), "x:1:12: fat_tree has 10240 links, more than the limit 4096");
  }
}

TEST(Scenario, SourceLocStr) {
  EXPECT_EQ((SourceLoc{"f.textproto", 3, 7}).str(), "f.textproto:3:7");
  EXPECT_EQ((SourceLoc{"f.textproto", 3, 0}).str(), "f.textproto:3");
  EXPECT_EQ((SourceLoc{"f.textproto", 0, 0}).str(), "f.textproto");
  ScenarioError e({"f", 2, 5}, "bad thing");
  EXPECT_STREQ(e.what(), "f:2:5: bad thing");
  EXPECT_EQ(e.message(), "bad thing");
}

TEST(Scenario, LoadFile) {
  char path[] = "/tmp/nicsim_scenario_test_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, kPair, std::strlen(kPair)), static_cast<ssize_t>(std::strlen(kPair)));
  close(fd);
  Scenario s = load_scenario_file(path, known_program);
  EXPECT_EQ(s.file, path);
  EXPECT_EQ(s.nodes.size(), 2u);
  std::remove(path);
}

TEST(Scenario, LoadMissingFile) {
  try {
    load_scenario_file("/nonexistent/dir/x.textproto", known_program);
    FAIL() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.loc().file, "/nonexistent/dir/x.textproto");
    EXPECT_EQ(e.loc().line, 0);
    EXPECT_EQ(e.loc().column, 0);
    EXPECT_EQ(e.message(), "cannot read the scenario file: No such file or directory");
    EXPECT_STREQ(e.what(), "/nonexistent/dir/x.textproto: cannot read the scenario file: No such file or directory");
  }
}

TEST(Scenario, LoadDirectoryIsAnError) { EXPECT_THROW(load_scenario_file("/tmp", known_program), ScenarioError); }

// A switch fault is one fault per link of the switch, at the same time.
TEST(Scenario, SwitchFaultTakesEveryLinkOfTheSwitch) {
  const Scenario s = load(R"(topology { fat_tree { k: 2 n: 2 } }
fault { at: "1ms" switch: "sw1_0" link_down: true }
fault { at: "2ms" switch: "sw1_0" link_up: true })");
  ASSERT_EQ(s.faults.size(), 4u);  // sw1_0 has one link to each of the 2 leaves
  const auto sw = s.switch_index("sw1_0");
  ASSERT_TRUE(sw);
  for (std::size_t i = 0; i < s.faults.size(); ++i) {
    EXPECT_EQ(s.faults[i].kind, i < 2 ? FaultSpec::Kind::LinkDown : FaultSpec::Kind::LinkUp);
    EXPECT_EQ(s.faults[i].at, (i < 2 ? 1 : 2) * kMs);
    const LinkSpec& l = s.links[s.faults[i].link];
    EXPECT_TRUE(l.b.kind == LinkEnd::Kind::Switch && l.b.index == *sw) << l.name;
  }
  EXPECT_NE(s.faults[0].link, s.faults[1].link);
}

// ------------------------------------------------- errors, each with its location

struct ErrorCase {
  const char* name;
  bool after_pair;  // the text follows kPair, so its first line is line 4
  const char* text;
  int line, column;
  const char* message;  // a substring of the message
};

// One row per rule a scenario can break; line:col is where the message
// points, which is the offending field (or the enclosing message when the
// field is missing).
const ErrorCase kErrorCases[] = {
    {"SyntaxErrorMissingColon", false, R"(node { name: "a" }
node { name "b" })",
     2, 13, "Expected \":\""},
    {"SyntaxErrorUnterminated", false, R"(node { name: "a"
)",
     1, 6, "`node` is not closed: the file ends before its closing brace (1 still open)"},
    {"SyntaxErrorUnterminatedInner", false, R"(topology {
  star { hosts: 2  # a comment with a } in it
  switch_name: "{" }
)",
     1, 10, "`topology` is not closed: the file ends before its closing brace (1 still open)"},
    {"SyntaxErrorUnterminatedNamedPastAComment", false, R"(node [ { name: "a" },  # a list
  { name: "b" )",
     2, 3, "`node` is not closed"},
    {"SyntaxErrorClosesNothing", false, R"(topology { star { hosts: 2 } } }
)",
     1, 32, "'}' closes nothing: no message is open here"},
    {"UnknownField", false, R"(node { nam: "a" })", 1, 8, "no field named \"nam\""},
    {"UnknownTopLevelField", true, R"(nodes { })", 4, 1, "no field named \"nodes\""},
    {"NegativeSeed", true, R"(seed: -1)", 4, 7, "Expected integer, got: -"},
    {"TopologySpecifiedTwice", false, R"(topology { star { hosts: 2 } }
topology { star { hosts: 3 } })",
     2, 1, "specified multiple times"},
    {"FaultWithTwoActions", true, R"(fault { at: "0ns" link: "a:1--b:1" link_down: true link_up: true })", 4, 52,
     "oneof"},
    {"EmptyDelayInLinkDefaults", true, R"(link_defaults { delay: "" })", 4, 17,
     "link.delay: '' is not a valid time (e.g. 100ns): empty time value"},
    {"EmptyBandwidthOnALink", false, R"(node { name: "a" }
node { name: "b" }
link { a: "a" b: "b" bandwidth: "" })",
     3, 22, "link.bandwidth: '' is not a valid bandwidth"},
    {"BadUnitInLinkDefaults", true, R"(link_defaults { bandwidth: "8Gbs" })", 4, 17,
     "link.bandwidth: '8Gbs' is not a valid bandwidth (e.g. 8Gbps): unknown bandwidth unit 'Gbs'"},
    {"BadUnitInLinkDelay", false, R"(node { name: "a" }
node { name: "b" }
link { a: "a" b: "b" delay: "5nx" })",
     3, 22, "unknown time unit 'nx' (use ps, ns, us, ms, s)"},
    {"BadStopTime", true, R"(stop_time: "2 parsecs")", 4, 1, "stop_time: unknown time unit 'parsecs'"},
    {"ZeroStopTime", true, R"(stop_time: "0ns")", 4, 1, "stop_time: must be after 0"},
    {"TimelineLimitWithoutTimeline", true, R"(outputs { timeline_max_events: "10" })", 4, 11,
     "timeline_max_events limits a timeline, and timeline is not true"},
    {"WorkloadNodeTwice", true, R"(workload { program: "pingpong" nodes: "a" nodes: "a" })", 4, 43,
     "workload lists 'a' twice (also at"},
    {"FractionalTime", true, R"(workload { program: "pingpong" nodes: "a" start: "0.1ps" })", 4, 43,
     "start: fractional picoseconds"},
    {"OutOfRangeSwitchPorts", true, R"(switch { name: "s0" param { key: "ports" value: "300" } })", 4, 42,
     "switch.ports: 300 is above the maximum"},
    {"OutOfRangeHostCpus", false, R"(node { name: "a" param { key: "host.cpus" value: "0" } })", 1, 43,
     "host.cpus: 0 is below the minimum 1"},
    {"OutOfRangeLinkDropRate", true, R"(link_defaults { param { key: "drop_rate" value: "2" } })", 4, 42,
     "link.drop_rate: 2 is above the maximum 1"},
    {"NotOneOfTheChoices", false, R"(node { name: "a" param { key: "bus.profile" value: "isa" } })", 1, 45,
     "bus.profile: 'isa' is not one of the choices: pcix-133, pcix-66, pci-66, pci-33"},
    {"PortsAboveTheNicsMaximum", false, R"(node { name: "a" nic: "raw" ports: 3 })", 1, 29,
     "nic.raw.ports: 3 is above the maximum 2"},
    {"PortsSetTwice", false, R"(node { name: "a" ports: 2 param { key: "nic.ports" value: "2" } })", 1, 18,
     "ports is set twice (the field and parameter nic.ports)"},
    {"UnknownNodeParam", false, R"(node { name: "a" param { key: "host.cpu" value: "2" } })", 1, 26,
     "host.cpu: unknown parameter (did you mean host.cpus?)"},
    {"UnknownNicParam", false, R"(node { name: "a" param { key: "nic.prots" value: "2" } })", 1, 26,
     "nic.raw.prots: unknown parameter (did you mean nic.raw.ports?)"},
    {"UnknownNodeKeyPrefix", false, R"(node { name: "a" param { key: "cpus" value: "2" } })", 1, 26,
     "unknown parameter key 'cpus' (node keys start with host., bus. or nic.)"},
    {"UnknownLinkParam", false, R"(node { name: "a" }
node { name: "b" }
link { a: "a" b: "b" param { key: "mtu" value: "2" } })",
     3, 30, "link.mtu: unknown parameter"},
    {"UnknownSwitchParam", true, R"(topology { star { hosts: 2 } switch_param { key: "hop_latncy" value: "1ns" } })", 4,
     45, "switch.hop_latncy: unknown parameter (did you mean switch.hop_latency?)"},
    {"UnknownMgmtParam", true, R"(management { param { key: "latncy" value: "1us" } })", 4, 22,
     "mgmt.latncy: unknown parameter (did you mean mgmt.latency?)"},
    {"ParamSetTwice", true,
     R"(switch { name: "s0" param { key: "ports" value: "4" } param { key: "ports" value: "5" } })", 4, 63,
     "parameter 'ports' is set twice"},
    {"LinkFieldAndParamSetTwice", false, R"(node { name: "a" }
node { name: "b" }
link { a: "a" b: "b" bandwidth: "1Gbps" param { key: "bandwidth" value: "2Gbps" } })",
     3, 49, "parameter 'bandwidth' is set twice"},
    {"ParamWithoutKey", true, R"(management { param { value: "1us" } })", 4, 14, "parameter has no key"},
    {"DanglingLinkEnd", false, R"(node { name: "a" }
node { name: "b" }
link { a: "a" b: "c" })",
     3, 15, "link end 'c': no node or switch named 'c'"},
    {"BadLinkEndSyntax", false, R"(node { name: "a" }
node { name: "b" }
link { a: "a" b: "b:x" })",
     3, 15, "bad link end 'b:x' (use name or name:port)"},
    {"MissingLinkEnd", false, R"(node { name: "a" }
link { a: "a" })",
     2, 1, "link has no end 'b'"},
    {"PortZero", false, R"(node { name: "a" }
node { name: "b" }
link { a: "a" b: "b:0" })",
     3, 15, "port 0 in link end 'b:0' does not exist (ports count from 1)"},
    {"PortAboveCount", false, R"(node { name: "a" }
node { name: "b" }
link { a: "a" b: "b:2" })",
     3, 15, "port 2 of node 'b' is above its port count 1"},
    {"SwitchPortAboveCount", true, R"(switch { name: "s0" param { key: "ports" value: "4" } }
node { name: "c" }
link { a: "c" b: "s0:5" })",
     6, 15, "port 5 of switch 's0' is above its port count 4"},
    {"SwitchPortUsedTwice", false, R"(node { name: "a" }
node { name: "b" }
switch { name: "s0" }
link { a: "a" b: "s0:1" }
link { a: "b" b: "s0:1" })",
     5, 15, "port s0:1 is already used by the link at t.textproto:4:1"},
    {"NodePortUsedTwice", false, R"(node { name: "a" }
node { name: "b" }
node { name: "c" }
link { name: "ab" a: "a" b: "b" }
link { a: "a" b: "c" })",
     5, 8, "port a:1 is already used by link 'ab'"},
    {"SwitchHasNoFreePort", false, R"(node { name: "a" }
node { name: "b" }
switch { name: "s0" param { key: "ports" value: "1" } }
link { a: "a" b: "s0" }
link { a: "b" b: "s0" })",
     5, 15, "switch 's0' has no free port (all 1 in use)"},
    {"UnconnectedSecondPort", false, R"(node { name: "a" param { key: "nic.ports" value: "2" } }
node { name: "b" }
link { a: "a" b: "b" })",
     1, 8, "unconnected port: node 'a' port 2 is not connected to any link"},
    {"UnconnectedNode", true, R"(node { name: "c" })", 4, 8, "unconnected port: node 'c' port 1"},
    {"UnconnectedGeneratedHostPort", false,
     R"(topology { star { hosts: 2 } node_param { key: "nic.ports" value: "2" } })", 1, 1,
     "unconnected port: node 'h0' port 2"},
    {"LinkToItself", true, R"(switch { name: "s0" }
link { a: "s0:1" b: "s0:2" })",
     5, 18, "link connects switch 's0' to itself"},
    {"DuplicateDeviceName", true, R"(switch { name: "a" })", 4, 10,
     "duplicate device name 'a' (first defined at t.textproto:1:8)"},
    {"DuplicateGeneratedName", false, R"(topology { star { hosts: 2 } }
node { name: "h1" })",
     2, 8, "duplicate device name 'h1' (first defined at t.textproto:1:1)"},
    {"DuplicateLinkName", false, R"(node { name: "a" }
node { name: "b" }
node { name: "c" }
node { name: "d" }
link { name: "x" a: "a" b: "b" }
link { name: "x" a: "c" b: "d" })",
     6, 8, "duplicate link name 'x' (first defined at t.textproto:5:1)"},
    {"DuplicateGeneratedLinkName", false,
     R"(topology { star { hosts: 1 } switch_param { key: "ports" value: "2" } }
node { name: "x" }
link { name: "h0--sw0" a: "x" b: "sw0" })",
     3, 8, "duplicate link name 'h0--sw0'"},
    {"InvalidName", false, R"(node { name: "a b" })", 1, 8, "invalid node name 'a b'"},
    {"NodeWithoutName", false, R"(node { nic: "raw" })", 1, 1, "node has no name"},
    {"UnknownNicKind", false, R"(node { name: "a" nic: "nic9" })", 1, 18, "unknown NIC kind 'nic9' (known: "},
    {"UnknownProgram", true, R"(workload { program: "pongping" nodes: "a" })", 4, 12, "unknown program 'pongping'"},
    {"WorkloadWithoutProgram", true, R"(workload { nodes: "a" })", 4, 1, "workload has no program"},
    {"WorkloadPatternMatchesNothing", true, R"(workload { program: "pingpong" nodes: "a" nodes: "z*" })", 4, 43,
     "workload node 'z*' matches no node"},
    {"WorkloadNamesASwitch", true, R"(switch { name: "s0" }
workload { program: "pingpong" nodes: "s0" })",
     5, 32, "workload node 's0' is a switch, not a node"},
    {"WorkloadWithoutNodes", true, R"(workload { program: "pingpong" })", 4, 1, "workload lists no nodes"},
    {"WorkloadBadStart", true, R"(workload { program: "pingpong" nodes: "a" start: "-1us" })", 4, 43,
     "start: negative time"},
    {"FaultUnknownLink", true, R"(fault { at: "1us" link: "a--b" link_down: true })", 4, 19,
     "fault names unknown link 'a--b'"},
    {"FaultBadTime", true, R"(fault { at: "1 fortnight" link: "a:1--b:1" link_down: true })", 4, 9,
     "fault time 'at': unknown time unit 'fortnight'"},
    {"FaultWithoutTime", true, R"(fault { link: "a:1--b:1" link_down: true })", 4, 1,
     "fault time 'at': empty time value"},
    {"FaultUnknownSwitch", true, R"(fault { at: "1us" switch: "s9" link_down: true })", 4, 19,
     "fault names unknown switch 's9'"},
    {"FaultLinkAndSwitch", true, R"(fault { at: "1us" link: "a:1--b:1" switch: "s9" link_down: true })", 4, 36,
     "fault names both a link and a switch"},
    {"SwitchFaultWithARate", false, R"(topology { star { hosts: 2 } }
fault { at: "1us" switch: "sw0" drop_rate: "0.1" })",
     2, 1, "a switch fault takes link_down: true (the switch fails) or link_up: true (it returns)"},
    {"FaultWithoutAction", true, R"(fault { at: "1us" link: "a:1--b:1" })", 4, 1, "fault has no action"},
    {"FaultLinkDownFalse", true, R"(fault { at: "1us" link: "a:1--b:1" link_down: false })", 4, 36,
     "link_down: false does nothing"},
    {"FaultDropRateAboveOne", true, R"(fault { at: "1us" link: "a:1--b:1" drop_rate: "1.5" })", 4, 36,
     "link.drop_rate: 1.5 is above the maximum 1"},
    {"FaultBadBitErrorRate", true, R"(fault { at: "1us" link: "a:1--b:1" bit_error_rate: "1e-9x" })", 4, 36,
     "link.bit_error_rate: '1e-9x' is not a valid ratio"},
    {"FlapsUntilBeforeAt", true,
     R"(fault { at: "5ms" link: "a:1--b:1" flaps { mean_interval: "1ms" down_for: "1us" until: "2ms" } })", 4, 81,
     "flaps until must be after the fault's `at`"},
    {"FlapsTooOften", true,
     R"(fault { at: "1us" link: "a:1--b:1" flaps { mean_interval: "999ns" down_for: "1ns" until: "2ms" } })", 4, 44,
     "flaps mean_interval must be at least 1us"},
    {"FlapsZeroDown", true,
     R"(fault { at: "1us" link: "a:1--b:1" flaps { mean_interval: "1ms" down_for: "0s" until: "2ms" } })", 4, 65,
     "flaps down_for must be above 0"},
    {"MlidBelowRange", true, R"(multicast { mlid: 49151 members: "a" })", 4, 13,
     "mlid 49151 is outside the multicast range 0xC000..0xFFFE"},
    {"MlidAboveRange", true, R"(multicast { mlid: 65535 members: "a" })", 4, 13,
     "mlid 65535 is outside the multicast range"},
    {"MlidMissing", true, R"(multicast { members: "a" })", 4, 1, "mlid 0 is outside the multicast range"},
    {"MlidUsedTwice", true, R"(multicast { mlid: 49152 members: "a" }
multicast { mlid: 49152 members: "b" })",
     5, 13, "mlid 49152 is already used (at t.textproto:4:1)"},
    {"MulticastNameUsedTwice", true, R"(multicast { name: "g" mlid: 49152 members: "a" }
multicast { name: "g" mlid: 49153 members: "b" })",
     5, 13, "duplicate multicast group name 'g'"},
    {"MulticastMemberDangling", true, R"(multicast { mlid: 49152 members: "a" members: "zz" })", 4, 38,
     "multicast member node 'zz' matches no node"},
    {"TraceComponentUnknown", true, R"(outputs { trace { component: "fabrik" } })", 4, 19,
     "unknown trace component 'fabrik' (use *, fabric, host"},
    {"TraceDeviceMatchesNothing", true, R"(outputs { trace { device: "x*" component: "fabric" } })", 4, 19,
     "trace device 'x*' matches no node or switch"},
    {"TimelineMaxEventsNotACount", true, R"(outputs { timeline: true timeline_max_events: "lots" })", 4, 26,
     "timeline_max_events: 'lots' is not a count"},
    {"EmptyScenario", false, R"(name: "nothing"
switch { name: "s0" })",
     1, 1, "scenario has no nodes"},
    {"EmptyText", false, R"()", 1, 1, "scenario has no nodes"},
    {"TopologyWithoutShape", false, R"(topology { host_prefix: "x" })", 1, 1,
     "topology has no shape (use star, leaf_spine, fat_tree"},
    {"StarWithoutHosts", false, R"(topology { star { switch_name: "s" } })", 1, 12, "star needs at least 1 host"},
    {"StarZeroHosts", false, R"(topology {
  star { hosts: 0 }
})",
     2, 10, "star needs at least 1 host"},
    {"StarTooManyPortsForSwitch", false, R"(topology { star { hosts: 300 } })", 1, 12,
     "switch 'sw0' would need 300 ports: switch.ports: 300 is above the maximum"},
    {"SwitchParamPortsTooFew", false, R"(topology { star { hosts: 4 } switch_param { key: "ports" value: "3" } })", 1,
     58, "switch 'sw0' needs 4 ports but switch_param sets ports to 3"},
    {"LeafSpineWithoutSpines", false, R"(topology { leaf_spine { leaves: 2 hosts_per_leaf: 2 spines: 0 } })", 1, 53,
     "leaf_spine needs at least 1 spine"},
    {"LeafSpineWithoutLeaves", false, R"(topology { leaf_spine { leaves: 0 hosts_per_leaf: 2 spines: 1 } })", 1, 25,
     "leaf_spine needs at least 1 leaf"},
    {"LeafSpineWithoutHostsPerLeaf", false, R"(topology { leaf_spine { leaves: 1 hosts_per_leaf: 0 spines: 1 } })", 1,
     35, "leaf_spine needs at least 1 host per leaf"},
    {"LeafSpineTooManyHosts", false, R"(topology { leaf_spine { leaves: 1000 hosts_per_leaf: 1000 spines: 1 } })", 1,
     12, "leaf_spine has 1000000 hosts, more than the limit 65536"},
    {"LeafSpineTooManyLinks", false, R"(topology { leaf_spine { leaves: 65536 hosts_per_leaf: 1 spines: 65535 } })", 1,
     12, "leaf_spine has 4294967296 links, more than the limit 1048576"},
    {"FatTreeKTooSmall", false, R"(topology { fat_tree { k: 1 n: 2 } })", 1, 23, "fat_tree needs k >= 2"},
    {"FatTreeNZero", false, R"(topology { fat_tree { k: 2 n: 0 } })", 1, 28, "fat_tree needs n >= 1"},
    {"FatTreeTooBig", false, R"(topology { fat_tree { k: 16 n: 5 } })", 1, 12,
     "fat_tree with k=16 n=5 has more than the limit of 65536 hosts"},
    {"TopologyBadHostPrefix", false, R"(topology { star { hosts: 2 } host_prefix: "h*" })", 1, 30,
     "invalid host_prefix name 'h*'"},
    {"StarBadSwitchName", false, R"(topology { star { switch_name: "s:0" hosts: 2 } })", 1, 19,
     "invalid switch name 's:0'"},
    {"TopologyUnknownNic", false, R"(topology { star { hosts: 2 } nic: "ib" })", 1, 30, "unknown NIC kind 'ib'"},
    // The tokenizer counts a tab as advancing to the next multiple of 8.
    {"UnknownFieldAfterTab", false, "node {\tnam: \"a\" }", 1, 9, "no field named \"nam\""},
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class ScenarioErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ScenarioErrors, ReportsRuleAndLocation) {
  const ErrorCase& c = GetParam();
  std::string text = c.after_pair ? pair_plus(c.text) : std::string(c.text);
  ScenarioError e = error_of(text);
  EXPECT_EQ(e.loc().file, "t.textproto");
  EXPECT_EQ(e.loc().line, c.line) << e.what();
  EXPECT_EQ(e.loc().column, c.column) << e.what();
  EXPECT_NE(e.message().find(c.message), std::string::npos) << e.what();
  EXPECT_EQ(std::string(e.what()), e.loc().str() + ": " + e.message());
}

INSTANTIATE_TEST_SUITE_P(All, ScenarioErrors, ::testing::ValuesIn(kErrorCases),
                         [](const ::testing::TestParamInfo<ErrorCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace nicsim
