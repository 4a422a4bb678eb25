// Declared statistics with units, per object (gem5/ns-3 style). Objects keep
// their own counters as plain integers (no cost on hot paths) and register
// pointers to them; the registry reads them when the results are written.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nicsim {

// Log-linear histogram (HDR style): 32 sub-buckets per power of two, so any
// recorded value is known to within ~3%; min, max, count and sum are exact.
class Histogram {
 public:
  void add(std::uint64_t v);
  std::uint64_t count() const { return count_; }
  std::uint64_t min() const { return count_ ? min_ : 0; }
  std::uint64_t max() const { return max_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0; }
  // Smallest recorded bucket bound such that `p` (0..100) percent of values
  // are at or below it, clamped to [min, max].
  std::uint64_t percentile(double p) const;
  void merge(const Histogram& other);
  // The whole state as words (count, min, max, sum, first bucket, buckets)
  // and back: how
  // another process's histogram is merged into this one.
  std::vector<std::uint64_t> to_words() const;
  static Histogram from_words(const std::uint64_t* words, std::size_t n);

 private:
  static constexpr int kSubBits = 5;
  static std::size_t bucket_of(std::uint64_t v);
  static std::uint64_t bucket_upper(std::size_t b);
  void span(std::size_t lo, std::size_t hi);
  // Buckets first_ .. first_ + size - 1 only: a latency's values sit in a
  // few octaves far from zero, and a fabric has a histogram per NIC.
  std::size_t first_ = 0;
  std::vector<std::uint64_t> buckets_;
  std::uint64_t count_ = 0, min_ = ~0ULL, max_ = 0;
  unsigned __int128 sum_ = 0;
};

class StatsRegistry {
 public:
  // `seq`: the registration's number (set_device, below).
  struct Scalar {
    std::string object, name, unit, doc;
    std::function<double()> read;
    std::uint64_t seq = 0;
  };
  struct Hist {
    std::string object, name, unit, doc;
    std::shared_ptr<Histogram> histogram;
    std::uint64_t seq = 0;
  };
  // A counter the object owns; `value` must outlive the registry's use.
  void counter(std::string object, std::string name, std::string unit, const std::uint64_t* value,
               std::string doc = {});
  // A derived value computed when results are written (e.g. utilisation).
  void gauge(std::string object, std::string name, std::string unit, std::function<double()> read,
             std::string doc = {});
  // A histogram owned by the registry.
  Histogram& histogram(std::string object, std::string name, std::string unit, std::string doc = {});

  const std::vector<Scalar>& scalars() const { return scalars_; }
  const std::vector<Hist>& histograms() const { return hists_; }

  // Registrations are numbered by who makes them: the device being built
  // (set by the world while it builds each one) and that device's count,
  // or no device and a count of its own, before every device's. A device
  // registers the same calls in whichever process builds it, and only the
  // process that runs a device builds it, so a number names the same
  // statistic in every process of a run: rank 0 merges the others'
  // entries by number (world/rank_results.cc). Entries are kept in number
  // order, which is device order.
  void set_device(std::optional<std::uint32_t> device);
  // The histogram kept here with number `seq`; nullptr when none is.
  Histogram* find_histogram(std::uint64_t seq);
  // Another process's histogram, numbered `seq`, kept here in number order.
  void adopt_histogram(Hist h);

 private:
  std::vector<Scalar> scalars_;
  std::vector<Hist> hists_;
  std::uint64_t next_seq();
  std::uint64_t scope_ = 0;                        // device + 1, or 0 for none
  std::map<std::uint64_t, std::uint32_t> counts_;  // registrations by scope
};

}  // namespace nicsim
