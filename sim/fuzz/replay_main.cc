// A fuzz target without libFuzzer (builds with GCC, the CI's): feeds every
// file of the corpus directories (or files) named on the command line to
// LLVMFuzzerTestOneInput, then a fixed number of mutations of them made
// from a seeded generator (bit flips, byte changes, inserts, deletes,
// splices), so the same command always runs the same inputs. A finding
// ends the process as under libFuzzer (a crash, a sanitizer report, an
// abort); a clean run prints what it ran and exits 0 (docs/fuzzing.md).
//
// Usage: TARGET [-mutations=N] [-seed=S] [-max_len=N] DIR|FILE...
// Other arguments starting with '-' (libFuzzer's) are ignored.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

using Bytes = std::vector<std::uint8_t>;

struct Options {
  std::uint64_t mutations = 0, seed = 1;
  std::size_t max_len = 4096;
  std::vector<std::string> paths;
};

bool option(const char* arg, const char* name, std::uint64_t& value) {
  const std::size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0) return false;
  value = std::strtoull(arg + n, nullptr, 0);
  return true;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::uint64_t v = 0;
    if (option(argv[i], "-mutations=", o.mutations)) continue;
    if (option(argv[i], "-seed=", o.seed)) continue;
    if (option(argv[i], "-max_len=", v)) {
      o.max_len = static_cast<std::size_t>(v);
      continue;
    }
    if (argv[i][0] != '-') o.paths.emplace_back(argv[i]);
  }
  return o;
}

Bytes read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The corpus in name order (a directory's listing order is the file
// system's), so runs are the same everywhere.
std::vector<Bytes> load_corpus(const std::vector<std::string>& paths) {
  std::vector<std::filesystem::path> files;
  for (const std::string& p : paths) {
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (std::filesystem::is_regular_file(p)) {
      files.emplace_back(p);
    } else {
      std::fprintf(stderr, "replay: %s: no such file or directory\n", p.c_str());
      std::exit(2);
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<Bytes> corpus;
  for (const auto& f : files) corpus.push_back(read_file(f));
  return corpus;
}

// Draws from a std::mt19937_64 by plain arithmetic: the standard fixes its
// output, not the distributions', so every library gives the same inputs.
class Draw {
 public:
  explicit Draw(std::uint64_t seed) : gen_(seed) {}
  std::size_t below(std::size_t n) { return n ? static_cast<std::size_t>(gen_() % n) : 0; }
  std::uint8_t byte() { return static_cast<std::uint8_t>(gen_()); }

 private:
  std::mt19937_64 gen_;
};

void mutate_once(Bytes& b, const std::vector<Bytes>& corpus, Draw& d) {
  switch (d.below(b.empty() ? 2 : 6)) {
    case 0: {  // insert a few random bytes
      const std::size_t at = d.below(b.size() + 1), n = 1 + d.below(8);
      Bytes ins(n);
      for (auto& x : ins) x = d.byte();
      b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), ins.begin(), ins.end());
      return;
    }
    case 1: {  // splice: a prefix of this input, the tail of another
      const Bytes& other = corpus[d.below(corpus.size())];
      const std::size_t keep = d.below(b.size() + 1), from = d.below(other.size() + 1);
      b.resize(keep);
      b.insert(b.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
      return;
    }
    case 2:  // flip a bit
      b[d.below(b.size())] ^= static_cast<std::uint8_t>(1u << d.below(8));
      return;
    case 3:  // set a byte
      b[d.below(b.size())] = d.byte();
      return;
    case 4: {  // delete a run of bytes
      const std::size_t at = d.below(b.size()), n = 1 + d.below(std::min<std::size_t>(16, b.size() - at));
      b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n));
      return;
    }
    default: {  // an interesting value in a byte: 0, 0xff, 0x7f, 0x80
      static constexpr std::uint8_t kValues[] = {0x00, 0xff, 0x7f, 0x80};
      b[d.below(b.size())] = kValues[d.below(4)];
      return;
    }
  }
}

void run(const Bytes& b, std::size_t max_len) { LLVMFuzzerTestOneInput(b.data(), std::min(b.size(), max_len)); }

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  const Options o = parse(argc, argv);
  std::vector<Bytes> corpus = load_corpus(o.paths);
  if (corpus.empty()) {
    std::fprintf(stderr, "replay: no corpus inputs\n");
    return 2;
  }
  for (const Bytes& b : corpus) run(b, o.max_len);
  Draw d(o.seed);
  for (std::uint64_t i = 0; i < o.mutations; ++i) {
    Bytes b = corpus[d.below(corpus.size())];
    for (std::size_t k = 1 + d.below(4); k > 0; --k) mutate_once(b, corpus, d);
    run(b, o.max_len);
  }
  std::printf("replay: %zu corpus inputs and %llu mutations run, no finding\n", corpus.size(),
              static_cast<unsigned long long>(o.mutations));
  return 0;
}
