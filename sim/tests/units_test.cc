#include "core/units.h"

#include <gtest/gtest.h>

namespace nicsim {
namespace {

std::string time_error(std::string_view text) {
  std::string error;
  EXPECT_FALSE(parse_time(text, &error).has_value()) << text;
  return error;
}

TEST(Units, TimeEveryUnit) {
  EXPECT_EQ(parse_time("7ps", nullptr), 7u);
  EXPECT_EQ(parse_time("7ns", nullptr), 7000u);
  EXPECT_EQ(parse_time("7us", nullptr), 7000000u);
  EXPECT_EQ(parse_time("7ms", nullptr), 7000000000u);
  EXPECT_EQ(parse_time("7s", nullptr), 7000000000000u);
  EXPECT_EQ(parse_time("0ns", nullptr), 0u);
}

TEST(Units, TimeFractionsAndSpaces) {
  EXPECT_EQ(parse_time("4.096us", nullptr), 4096000u);
  EXPECT_EQ(parse_time("100 ns", nullptr), 100000u);
  EXPECT_EQ(parse_time("  1.5ns  ", nullptr), 1500u);
  EXPECT_EQ(parse_time("1.000000000ns", nullptr), 1000u);
  EXPECT_EQ(parse_time(".5ns", nullptr), 500u);
  EXPECT_EQ(parse_time("2.ns", nullptr), 2000u);
  EXPECT_EQ(parse_time("0.000000000001s", nullptr), 1u);
}

TEST(Units, TimeErrors) {
  EXPECT_EQ(time_error("100nx"), "unknown time unit 'nx' (use ps, ns, us, ms, s)");
  EXPECT_NE(time_error("-1ns").find("negative"), std::string::npos);
  EXPECT_NE(time_error("0.5ps").find("fractional picoseconds"), std::string::npos);
  EXPECT_NE(time_error("1.0001ns").find("fractional picoseconds"), std::string::npos);
  EXPECT_NE(time_error("20000000s").find("overflow"), std::string::npos);
  EXPECT_NE(time_error("99999999999999999999999999999999ps").find("overflow"), std::string::npos);
  EXPECT_NE(time_error("100").find("missing time unit"), std::string::npos);
  EXPECT_NE(time_error("").find("empty"), std::string::npos);
  EXPECT_NE(time_error("ns").find("is not a time"), std::string::npos);
  EXPECT_NE(time_error("1e3ns").find("unknown time unit"), std::string::npos);
  // The largest representable time still parses.
  EXPECT_EQ(parse_time("18446744073709551615ps", nullptr), kTickMax);
  EXPECT_NE(time_error("18446744073709551616ps").find("overflow"), std::string::npos);
}

TEST(Units, BandwidthEveryUnit) {
  EXPECT_EQ(parse_bandwidth("5bps", nullptr), 5u);
  EXPECT_EQ(parse_bandwidth("5Kbps", nullptr), 5000u);
  EXPECT_EQ(parse_bandwidth("5Mbps", nullptr), 5000000u);
  EXPECT_EQ(parse_bandwidth("8Gbps", nullptr), 8000000000u);
  EXPECT_EQ(parse_bandwidth("2Tbps", nullptr), 2000000000000u);
  EXPECT_EQ(parse_bandwidth("3B/s", nullptr), 24u);
  EXPECT_EQ(parse_bandwidth("3KB/s", nullptr), 24000u);
  EXPECT_EQ(parse_bandwidth("400MB/s", nullptr), 3200000000u);
  EXPECT_EQ(parse_bandwidth("1GB/s", nullptr), 8000000000u);
  EXPECT_EQ(parse_bandwidth("1KiB/s", nullptr), 8u * 1024);
  EXPECT_EQ(parse_bandwidth("1MiB/s", nullptr), 8u << 20);
  EXPECT_EQ(parse_bandwidth("1GiB/s", nullptr), 8ull << 30);
  EXPECT_EQ(parse_bandwidth("2.5Gbps", nullptr), 2500000000u);
  EXPECT_EQ(parse_bandwidth("0bps", nullptr), 0u);
}

TEST(Units, BandwidthErrors) {
  std::string error;
  EXPECT_FALSE(parse_bandwidth("8Gbs", &error));
  EXPECT_NE(error.find("unknown bandwidth unit 'Gbs'"), std::string::npos) << error;
  EXPECT_FALSE(parse_bandwidth("0.5bps", &error));
  EXPECT_NE(error.find("fractional bits per second"), std::string::npos) << error;
  EXPECT_FALSE(parse_bandwidth("8", &error));
  EXPECT_NE(error.find("missing bandwidth unit"), std::string::npos) << error;
  EXPECT_FALSE(parse_bandwidth("-8Gbps", &error));
  EXPECT_NE(error.find("negative"), std::string::npos) << error;
  EXPECT_FALSE(parse_bandwidth("3000000000GiB/s", &error));
  EXPECT_NE(error.find("overflow"), std::string::npos) << error;
}

TEST(Units, SizeEveryUnit) {
  EXPECT_EQ(parse_size("64", nullptr), 64u);
  EXPECT_EQ(parse_size("64B", nullptr), 64u);
  EXPECT_EQ(parse_size("2KB", nullptr), 2000u);
  EXPECT_EQ(parse_size("2MB", nullptr), 2000000u);
  EXPECT_EQ(parse_size("2GB", nullptr), 2000000000u);
  EXPECT_EQ(parse_size("2KiB", nullptr), 2048u);
  EXPECT_EQ(parse_size("2MiB", nullptr), 2u << 20);
  EXPECT_EQ(parse_size("1.5GiB", nullptr), 3ull << 29);
  EXPECT_EQ(parse_size("4 KiB", nullptr), 4096u);
}

TEST(Units, SizeErrors) {
  std::string error;
  EXPECT_FALSE(parse_size("1.5B", &error));
  EXPECT_NE(error.find("fractional bytes"), std::string::npos) << error;
  EXPECT_FALSE(parse_size("4kib", &error));
  EXPECT_NE(error.find("unknown size unit 'kib'"), std::string::npos) << error;
  EXPECT_FALSE(parse_size("-4", &error));
  EXPECT_NE(error.find("negative"), std::string::npos) << error;
  EXPECT_FALSE(parse_size("20000000TiB", &error));
  EXPECT_NE(error.find("overflow"), std::string::npos) << error;
}

TEST(Units, FrequencyEveryUnit) {
  EXPECT_EQ(parse_frequency("50Hz", nullptr), 50u);
  EXPECT_EQ(parse_frequency("33kHz", nullptr), 33000u);
  EXPECT_EQ(parse_frequency("133MHz", nullptr), 133000000u);
  EXPECT_EQ(parse_frequency("2.5GHz", nullptr), 2500000000u);
  std::string error;
  EXPECT_FALSE(parse_frequency("133mhz", &error));
  EXPECT_NE(error.find("unknown frequency unit 'mhz' (use Hz, kHz, MHz, GHz)"), std::string::npos) << error;
  EXPECT_FALSE(parse_frequency("0.5Hz", &error));
  EXPECT_NE(error.find("fractional hertz"), std::string::npos) << error;
}

TEST(Units, Count) {
  EXPECT_EQ(parse_count("16", nullptr), 16u);
  EXPECT_EQ(parse_count(" 0 ", nullptr), 0u);
  EXPECT_EQ(parse_count("18446744073709551615", nullptr), ~0ull);
  std::string error;
  EXPECT_FALSE(parse_count("18446744073709551616", &error));
  EXPECT_NE(error.find("overflow"), std::string::npos) << error;
  EXPECT_FALSE(parse_count("-1", &error));
  EXPECT_NE(error.find("negative"), std::string::npos) << error;
  EXPECT_FALSE(parse_count("1.5", &error));
  EXPECT_NE(error.find("is not a count"), std::string::npos) << error;
  EXPECT_FALSE(parse_count("", &error));
  EXPECT_NE(error.find("empty"), std::string::npos) << error;
}

TEST(Units, Ratio) {
  EXPECT_DOUBLE_EQ(*parse_ratio("0.9", nullptr), 0.9);
  EXPECT_DOUBLE_EQ(*parse_ratio("1e-12", nullptr), 1e-12);
  EXPECT_DOUBLE_EQ(*parse_ratio("3", nullptr), 3.0);
  std::string error;
  EXPECT_FALSE(parse_ratio("-0.1", &error));
  EXPECT_NE(error.find("negative"), std::string::npos) << error;
  EXPECT_FALSE(parse_ratio("0.9x", &error));
  EXPECT_NE(error.find("is not a ratio"), std::string::npos) << error;
  EXPECT_FALSE(parse_ratio("inf", &error));
  EXPECT_NE(error.find("finite"), std::string::npos) << error;
  EXPECT_FALSE(parse_ratio("nan", &error));
  EXPECT_NE(error.find("finite"), std::string::npos) << error;
  EXPECT_FALSE(parse_ratio("1e999", &error));
  EXPECT_NE(error.find("overflow"), std::string::npos) << error;
}

TEST(Units, Bool) {
  EXPECT_EQ(parse_bool("true", nullptr), true);
  EXPECT_EQ(parse_bool("false", nullptr), false);
  std::string error;
  EXPECT_FALSE(parse_bool("yes", &error));
  EXPECT_EQ(error, "'yes' is not a bool (use true or false)");
}

TEST(Units, SerializationTime) {
  EXPECT_EQ(serialization_time(2048, 8000000000), 2048000u);
  EXPECT_EQ(serialization_time(1, 3000000000), 2667u);  // 2666.67 rounds up
  EXPECT_EQ(serialization_time(3, 3000000000), 8000u);
  EXPECT_EQ(serialization_time(0, 8000000000), 0u);
  EXPECT_EQ(serialization_time(1, 1), 8000000000000u);
  EXPECT_EQ(serialization_time(~0ull, 1), kTickMax);  // saturates
  EXPECT_EQ(serialization_time(100, 0), 0u);          // 0 = unlimited
}

TEST(Units, CyclesTime) {
  EXPECT_EQ(cycles_time(1, 133000000), 7519u);  // 7518.8 rounds up
  EXPECT_EQ(cycles_time(4, 1000000000), 4000u);
  EXPECT_EQ(cycles_time(3, 3000000000), 1000u);
  EXPECT_EQ(cycles_time(5, 0), 0u);
}

TEST(Units, Formatting) {
  EXPECT_EQ(format_time(0), "0ps");
  EXPECT_EQ(format_time(999), "999ps");
  EXPECT_EQ(format_time(2048000), "2.048us");
  EXPECT_EQ(format_time(1500), "1.5ns");
  EXPECT_EQ(format_time(kSec * 3), "3s");
  EXPECT_EQ(format_time(1234567), "1.235us");  // rounded half up
  EXPECT_EQ(format_time(999999600), "1ms");    // rounds into the next unit
  EXPECT_EQ(format_bandwidth(8000000000), "8Gbps");
  EXPECT_EQ(format_bandwidth(3200000000), "3.2Gbps");
  EXPECT_EQ(format_bandwidth(0), "0bps");
  EXPECT_EQ(format_size(2048), "2KiB");
  EXPECT_EQ(format_size(1000), "1000B");
  EXPECT_EQ(format_size(3ull << 29), "1.5GiB");
  EXPECT_EQ(format_frequency(133000000), "133MHz");
  EXPECT_EQ(format_frequency(2500000000), "2.5GHz");
}

TEST(Units, FormattingRoundTrips) {
  for (Tick t : {Tick{1}, Tick{1500}, Tick{2048000}, Tick{7 * kMs}, Tick{125 * kUs}}) {
    EXPECT_EQ(parse_time(format_time(t), nullptr), t) << format_time(t);
  }
  for (std::uint64_t b : {8000000000ull, 2500000000ull, 100ull, 56000ull}) {
    EXPECT_EQ(parse_bandwidth(format_bandwidth(b), nullptr), b) << format_bandwidth(b);
  }
  for (std::uint64_t s : {64ull, 2048ull, 1536ull, 3ull << 29}) {
    EXPECT_EQ(parse_size(format_size(s), nullptr), s) << format_size(s);
  }
  for (std::uint64_t f : {133000000ull, 66000000ull, 2500000000ull}) {
    EXPECT_EQ(parse_frequency(format_frequency(f), nullptr), f) << format_frequency(f);
  }
}

TEST(Units, KindNames) {
  EXPECT_STREQ(unit_kind_name(UnitKind::Time), "time");
  EXPECT_STREQ(unit_kind_name(UnitKind::Bool), "bool");
  EXPECT_STREQ(unit_kind_example(UnitKind::Bandwidth), "8Gbps");
  for (UnitKind k : {UnitKind::Time, UnitKind::Bandwidth, UnitKind::Size, UnitKind::Frequency, UnitKind::Count,
                     UnitKind::Ratio, UnitKind::Bool}) {
    std::string error;
    bool ok = false;
    std::string_view ex = unit_kind_example(k);
    switch (k) {
      case UnitKind::Time:
        ok = parse_time(ex, &error).has_value();
        break;
      case UnitKind::Bandwidth:
        ok = parse_bandwidth(ex, &error).has_value();
        break;
      case UnitKind::Size:
        ok = parse_size(ex, &error).has_value();
        break;
      case UnitKind::Frequency:
        ok = parse_frequency(ex, &error).has_value();
        break;
      case UnitKind::Count:
        ok = parse_count(ex, &error).has_value();
        break;
      case UnitKind::Ratio:
        ok = parse_ratio(ex, &error).has_value();
        break;
      case UnitKind::Bool:
        ok = parse_bool(ex, &error).has_value();
        break;
      default:
        break;
    }
    EXPECT_TRUE(ok) << unit_kind_name(k) << ": " << error;
  }
}

}  // namespace
}  // namespace nicsim
