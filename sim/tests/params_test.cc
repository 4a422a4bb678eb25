#include "core/params.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace nicsim {
namespace {

using K = UnitKind;

// Registration is process-global; these scope names are used by no module.
ParamRegistration test_scope("test.params", "parameters for params_test",
                             {
                                 {"delay", K::Time, "10ns", "1ns", "1ms", {}, "a delay"},
                                 {"rate", K::Bandwidth, "8Gbps", "", "100Gbps", {}, "a rate"},
                                 {"buffer", K::Size, "8KiB", "64B", "", {}, "a buffer"},
                                 {"clock", K::Frequency, "133MHz", "", "", {}, "a clock"},
                                 {"ports", K::Count, "8", "1", "255", {}, "a count"},
                                 {"load", K::Ratio, "0.5", "0", "1", {}, "a ratio"},
                                 {"profile", K::Text, "pcix-133", "", "", {"pcix-133", "pci-33"}, "a choice"},
                                 {"label", K::Text, "", "", "", {}, "free text"},
                                 {"verbose", K::Bool, "false", "", "", {}, "a flag"},
                                 {"mtu", K::Size, "2KiB", "", "", {"1KiB", "2KiB", "4KiB"}, "sizes by value"},
                                 {"payload", K::Size, "320B", "64B", "4KiB", {}, "whole blocks", "64B"},
                             });

const ParamScope& scope() {
  const ParamScope* s = ParamRegistry::instance().find("test.params");
  EXPECT_NE(s, nullptr);
  return *s;
}

TEST(Params, Defaults) {
  ParamSet p(scope());
  EXPECT_EQ(p.time("delay"), 10 * kNs);
  EXPECT_EQ(p.bandwidth("rate"), 8000000000u);
  EXPECT_EQ(p.size("buffer"), 8192u);
  EXPECT_EQ(p.frequency("clock"), 133000000u);
  EXPECT_EQ(p.count("ports"), 8u);
  EXPECT_DOUBLE_EQ(p.ratio("load"), 0.5);
  EXPECT_EQ(p.text("profile"), "pcix-133");
  EXPECT_EQ(p.text("label"), "");
  EXPECT_FALSE(p.flag("verbose"));
  EXPECT_EQ(p.raw("rate"), "8Gbps");
  EXPECT_FALSE(p.is_set("rate"));
  EXPECT_EQ(p.scope(), &scope());
}

TEST(Params, Overrides) {
  ParamSet p(scope());
  EXPECT_EQ(p.set("delay", "4.096us"), "");
  EXPECT_EQ(p.set("rate", "400MB/s"), "");
  EXPECT_EQ(p.set("ports", "255"), "");
  EXPECT_EQ(p.set("load", "1"), "");
  EXPECT_EQ(p.set("profile", "pci-33"), "");
  EXPECT_EQ(p.set("label", "anything at all"), "");
  EXPECT_EQ(p.set("verbose", "true"), "");
  EXPECT_EQ(p.time("delay"), 4096000u);
  EXPECT_EQ(p.bandwidth("rate"), 3200000000u);
  EXPECT_EQ(p.count("ports"), 255u);
  EXPECT_DOUBLE_EQ(p.ratio("load"), 1.0);
  EXPECT_EQ(p.text("profile"), "pci-33");
  EXPECT_EQ(p.text("label"), "anything at all");
  EXPECT_TRUE(p.flag("verbose"));
  EXPECT_EQ(p.raw("rate"), "400MB/s");
  EXPECT_TRUE(p.is_set("rate"));
  EXPECT_FALSE(p.is_set("buffer"));
  EXPECT_FALSE(p.is_set("no_such"));
}

TEST(Params, UnknownNameSuggestsCloseMatch) {
  ParamSet p(scope());
  EXPECT_EQ(p.set("dealy", "1ns"), "test.params.dealy: unknown parameter (did you mean test.params.delay?)");
  EXPECT_EQ(p.set("zzzzzzzzzzz", "1"), "test.params.zzzzzzzzzzz: unknown parameter");
}

TEST(Params, BadSyntaxNamesKindAndExample) {
  ParamSet p(scope());
  std::string m = p.set("rate", "8Gbs");
  EXPECT_EQ(m.rfind("test.params.rate: '8Gbs' is not a valid bandwidth (e.g. 8Gbps): ", 0), 0u) << m;
  EXPECT_NE(m.find("unknown bandwidth unit 'Gbs'"), std::string::npos) << m;
  m = p.set("ports", "many");
  EXPECT_NE(m.find("is not a valid count (e.g. 16)"), std::string::npos) << m;
  m = p.set("verbose", "yes");
  EXPECT_NE(m.find("is not a valid bool (e.g. true)"), std::string::npos) << m;
  // A failed set leaves the previous value alone.
  EXPECT_EQ(p.bandwidth("rate"), 8000000000u);
  EXPECT_FALSE(p.is_set("rate"));
}

TEST(Params, RangeUsesParsedValues) {
  ParamSet p(scope());
  EXPECT_EQ(p.set("ports", "300"), "test.params.ports: 300 is above the maximum 255");
  EXPECT_EQ(p.set("ports", "0"), "test.params.ports: 0 is below the minimum 1");
  // 999ps < 1ns although "999ps" sorts after "1ns" as text.
  EXPECT_EQ(p.set("delay", "999ps"), "test.params.delay: 999ps is below the minimum 1ns");
  EXPECT_EQ(p.set("delay", "1000us"), "");
  EXPECT_EQ(p.set("delay", "1000001ns"), "test.params.delay: 1000001ns is above the maximum 1ms");
  EXPECT_EQ(p.set("rate", "12.5GB/s"), "");
  EXPECT_EQ(p.set("rate", "12.6GB/s"), "test.params.rate: 12.6GB/s is above the maximum 100Gbps");
  EXPECT_EQ(p.set("buffer", "63"), "test.params.buffer: 63 is below the minimum 64B");
  EXPECT_EQ(p.set("load", "1.01"), "test.params.load: 1.01 is above the maximum 1");
}

TEST(Params, Choices) {
  ParamSet p(scope());
  EXPECT_EQ(p.set("profile", "pcix-100"),
            "test.params.profile: 'pcix-100' is not one of the choices: pcix-133, pci-33");
  EXPECT_EQ(p.text("profile"), "pcix-133");
}

// Choices of a kind with units are values, however they are written; a
// step makes values whole multiples of it.
TEST(Params, ChoicesByValueAndSteps) {
  ParamSet p(scope());
  EXPECT_EQ(p.set("mtu", "4096B"), "");
  EXPECT_EQ(p.size("mtu"), 4096u);
  EXPECT_EQ(p.set("mtu", "1000B"), "test.params.mtu: '1000B' is not one of the choices: 1KiB, 2KiB, 4KiB");
  EXPECT_EQ(p.set("payload", "128B"), "");
  EXPECT_EQ(p.set("payload", "100B"), "test.params.payload: 100B is not a multiple of 64B");
  EXPECT_EQ(p.size("payload"), 128u);
}

TEST(Params, GetterMisuseThrows) {
  ParamSet p(scope());
  EXPECT_THROW(p.time("nope"), std::logic_error);
  EXPECT_THROW(p.count("delay"), std::logic_error);
  EXPECT_THROW(p.text("ports"), std::logic_error);
  EXPECT_THROW(p.flag("load"), std::logic_error);
  EXPECT_THROW(p.raw("nope"), std::logic_error);
  ParamSet empty;
  EXPECT_THROW(empty.count("ports"), std::logic_error);
  EXPECT_NE(empty.set("ports", "1"), "");
}

TEST(Params, RegistryRejectsBadDefinitions) {
  auto& r = ParamRegistry::instance();
  EXPECT_THROW(r.add("test.params", "", {{"delay", K::Time, "1ns", "", "", {}, ""}}),
               std::logic_error);  // duplicate of an existing name
  EXPECT_THROW(r.add("test.bad1", "", {{"a", K::Count, "1", "", "", {}, ""}, {"a", K::Count, "2", "", "", {}, ""}}),
               std::logic_error);  // duplicate within one call
  EXPECT_THROW(r.add("test.bad2", "", {{"a", K::Time, "10", "", "", {}, ""}}),
               std::logic_error);  // default does not parse
  EXPECT_THROW(r.add("test.bad3", "", {{"a", K::Count, "0", "1", "", {}, ""}}),
               std::logic_error);  // default below its minimum
  EXPECT_THROW(r.add("test.bad4", "", {{"a", K::Count, "9", "", "8", {}, ""}}),
               std::logic_error);  // default above its maximum
  EXPECT_THROW(r.add("test.bad5", "", {{"a", K::Text, "x", "", "", {"y", "z"}, ""}}),
               std::logic_error);  // default not among the choices
  EXPECT_THROW(r.add("test.bad6", "", {{"a", K::Count, "1", "zero", "", {}, ""}}),
               std::logic_error);  // bound does not parse
  EXPECT_THROW(r.add("test.bad7", "", {{"a", K::Count, "12", "", "", {}, "", "8"}}),
               std::logic_error);  // default not a multiple of its step
  EXPECT_THROW(r.add("test.bad8", "", {{"a", K::Ratio, "0.5", "", "", {}, "", "0.1"}}),
               std::logic_error);  // a step on a kind that is not whole
  // A rejected registration leaves nothing behind.
  EXPECT_EQ(r.find("test.bad1"), nullptr);
  EXPECT_EQ(r.find("test.bad5"), nullptr);
}

TEST(Params, RegistryMergesAndSorts) {
  auto& r = ParamRegistry::instance();
  r.add("test.merge", "merged scope", {{"a", K::Count, "1", "", "", {}, ""}});
  r.add("test.merge", "", {{"b", K::Bool, "true", "", "", {}, ""}});
  const ParamScope* s = r.find("test.merge");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->doc, "merged scope");
  ASSERT_EQ(s->defs.size(), 2u);
  EXPECT_EQ(s->defs[1].name, "b");
  EXPECT_NE(s->find("a"), nullptr);
  EXPECT_EQ(s->find("c"), nullptr);
  auto all = r.scopes();
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1]->name, all[i]->name);
}

}  // namespace
}  // namespace nicsim
