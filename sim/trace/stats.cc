#include "trace/stats.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace nicsim {

std::size_t Histogram::bucket_of(std::uint64_t v) {
  // Values below 2^kSubBits get one bucket each; above, each power of two is
  // split into 2^kSubBits equal sub-buckets.
  constexpr std::uint64_t sub = 1ULL << kSubBits;
  if (v < sub) return static_cast<std::size_t>(v);
  int msb = 63 - std::countl_zero(v);
  int shift = msb - kSubBits;
  std::uint64_t mantissa = (v >> shift) - sub;  // 0 .. sub-1
  return static_cast<std::size_t>(sub + static_cast<std::uint64_t>(shift) * sub + mantissa);
}

std::uint64_t Histogram::bucket_upper(std::size_t b) {
  constexpr std::uint64_t sub = 1ULL << kSubBits;
  if (b < sub) return b;
  std::uint64_t shift = (b - sub) / sub;
  std::uint64_t mantissa = (b - sub) % sub;
  return (((sub + mantissa + 1) << shift) - 1);
}

// Makes the buckets cover lo .. hi.
void Histogram::span(std::size_t lo, std::size_t hi) {
  if (buckets_.empty()) {
    first_ = lo;
    buckets_.assign(hi - lo + 1, 0);
    return;
  }
  if (lo < first_) {
    buckets_.insert(buckets_.begin(), first_ - lo, 0);
    first_ = lo;
  }
  if (hi - first_ >= buckets_.size()) buckets_.resize(hi - first_ + 1, 0);
}

void Histogram::add(std::uint64_t v) {
  const std::size_t b = bucket_of(v);
  if (b < first_ || b - first_ >= buckets_.size()) span(b, b);
  ++buckets_[b - first_];
  ++count_;
  sum_ += v;
  if (v < min_) min_ = v;
  if (v > max_) max_ = v;
}

std::uint64_t Histogram::percentile(double p) const {
  if (count_ == 0) return 0;
  double target = p / 100.0 * static_cast<double>(count_);
  std::uint64_t need = static_cast<std::uint64_t>(target);
  if (static_cast<double>(need) < target) ++need;
  if (need == 0) need = 1;
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    seen += buckets_[b];
    if (seen >= need) {
      std::uint64_t v = bucket_upper(first_ + b);
      if (v > max_) v = max_;
      if (v < min_) v = min_;
      return v;
    }
  }
  return max_;
}

std::vector<std::uint64_t> Histogram::to_words() const {
  std::vector<std::uint64_t> w = {
      count_, min_, max_, static_cast<std::uint64_t>(sum_), static_cast<std::uint64_t>(sum_ >> 64), first_};
  w.insert(w.end(), buckets_.begin(), buckets_.end());
  return w;
}

Histogram Histogram::from_words(const std::uint64_t* words, std::size_t n) {
  Histogram h;
  if (n < 6) throw std::runtime_error("histogram: fewer than 6 words");
  h.count_ = words[0];
  h.min_ = words[1];
  h.max_ = words[2];
  h.sum_ = static_cast<unsigned __int128>(words[4]) << 64 | words[3];
  // No value has a bucket above bucket_of(~0).
  if (words[5] > bucket_of(~0ULL) || n - 6 > bucket_of(~0ULL) + 1 - words[5])
    throw std::runtime_error("histogram: buckets out of range");
  h.first_ = static_cast<std::size_t>(words[5]);
  h.buckets_.assign(words + 6, words + n);
  return h;
}

void Histogram::merge(const Histogram& other) {
  if (!other.buckets_.empty()) {
    span(other.first_, other.first_ + other.buckets_.size() - 1);
    for (std::size_t b = 0; b < other.buckets_.size(); ++b) buckets_[other.first_ - first_ + b] += other.buckets_[b];
  }
  count_ += other.count_;
  sum_ += other.sum_;
  if (other.count_) {
    if (other.min_ < min_) min_ = other.min_;
    if (other.max_ > max_) max_ = other.max_;
  }
}

void StatsRegistry::counter(std::string object, std::string name, std::string unit, const std::uint64_t* value,
                            std::string doc) {
  gauge(
      std::move(object), std::move(name), std::move(unit), [value] { return static_cast<double>(*value); },
      std::move(doc));
}

void StatsRegistry::set_device(std::optional<std::uint32_t> device) {
  scope_ = device ? std::uint64_t{*device} + 1 : 0;
}

std::uint64_t StatsRegistry::next_seq() { return scope_ << 32 | counts_[scope_]++; }

namespace {
// Where an entry numbered `seq` goes to keep `entries` in number order
// (the end, when registrations come in order).
template <class Entry>
auto place_of(std::vector<Entry>& entries, std::uint64_t seq) {
  if (entries.empty() || entries.back().seq < seq) return entries.end();
  return std::lower_bound(entries.begin(), entries.end(), seq,
                          [](const Entry& e, std::uint64_t s) { return e.seq < s; });
}
}  // namespace

void StatsRegistry::gauge(std::string object, std::string name, std::string unit, std::function<double()> read,
                          std::string doc) {
  const std::uint64_t seq = next_seq();
  scalars_.insert(place_of(scalars_, seq),
                  Scalar{std::move(object), std::move(name), std::move(unit), std::move(doc), std::move(read), seq});
}

Histogram& StatsRegistry::histogram(std::string object, std::string name, std::string unit, std::string doc) {
  const std::uint64_t seq = next_seq();
  auto at = hists_.insert(place_of(hists_, seq), Hist{std::move(object), std::move(name), std::move(unit),
                                                      std::move(doc), std::make_shared<Histogram>(), seq});
  return *at->histogram;
}

Histogram* StatsRegistry::find_histogram(std::uint64_t seq) {
  auto at =
      std::lower_bound(hists_.begin(), hists_.end(), seq, [](const Hist& a, std::uint64_t s) { return a.seq < s; });
  return at != hists_.end() && at->seq == seq ? at->histogram.get() : nullptr;
}

void StatsRegistry::adopt_histogram(Hist h) {
  auto at = place_of(hists_, h.seq);
  hists_.insert(at, std::move(h));
}

}  // namespace nicsim
