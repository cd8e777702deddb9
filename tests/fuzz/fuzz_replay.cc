// Runs the fuzz targets without libFuzzer (any compiler): the built-in seeds plus deterministic
// pseudo-random mutations of them, or the given files (e.g. a crash libFuzzer saved).
//   fuzz_replay engine|decode|host1x [--mutations=N] [--seed=S] [FILE|DIR...]
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_input.h"

extern "C" int EngineFuzzTestOneInput(const uint8_t* data, size_t size);
extern "C" int DecodeFuzzTestOneInput(const uint8_t* data, size_t size);
extern "C" int Host1xFuzzTestOneInput(const uint8_t* data, size_t size);

namespace {

struct Rng {
  uint64_t s;
  uint64_t Next() {  // splitmix64
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(Next() % n); }
};

void Mutate(std::vector<uint8_t>& v, const std::vector<std::vector<uint8_t>>& pool, Rng& rng) {
  static const uint8_t kInteresting[] = {0,    1,    2,    3,    4,    7,    8,
                                         0x10, 0x3F, 0x40, 0x7F, 0x80, 0xFE, 0xFF};
  const int n = 1 + static_cast<int>(rng.Below(6));
  for (int k = 0; k < n; ++k) {
    switch (rng.Below(8)) {
      case 0:
        if (!v.empty()) v[rng.Below(v.size())] ^= static_cast<uint8_t>(1u << rng.Below(8));
        break;
      case 1:
        if (!v.empty()) v[rng.Below(v.size())] = static_cast<uint8_t>(rng.Next());
        break;
      case 2:
        if (!v.empty()) v[rng.Below(v.size())] = kInteresting[rng.Below(std::size(kInteresting))];
        break;
      case 3:  // a 16/32-bit little-endian value in the header region (counts, sizes)
        if (v.size() >= 4) {
          size_t at = rng.Below(std::min<size_t>(v.size() - 3, 64));
          uint32_t x = rng.Below(2) ? static_cast<uint32_t>(rng.Below(0x4001))
                                    : static_cast<uint32_t>(rng.Next());
          for (int b = 0; b < (rng.Below(2) ? 2 : 4); ++b)
            v[at + b] = static_cast<uint8_t>(x >> (8 * b));
        }
        break;
      case 4:
        v.insert(v.begin() + static_cast<std::ptrdiff_t>(rng.Below(v.size() + 1)),
                 static_cast<uint8_t>(rng.Next()));
        break;
      case 5:
        if (!v.empty()) v.erase(v.begin() + static_cast<std::ptrdiff_t>(rng.Below(v.size())));
        break;
      case 6:
        if (!v.empty()) v.resize(rng.Below(v.size()));
        break;
      case 7: {  // splice with another seed
        const auto& o = pool[rng.Below(pool.size())];
        if (o.empty()) break;
        size_t from = rng.Below(o.size()),
               len = 1 + rng.Below(std::min<size_t>(o.size() - from, 32));
        size_t at = rng.Below(v.size() + 1);
        if (at + len > v.size()) v.resize(at + len);
        std::copy(o.begin() + static_cast<std::ptrdiff_t>(from),
                  o.begin() + static_cast<std::ptrdiff_t>(from + len),
                  v.begin() + static_cast<std::ptrdiff_t>(at));
        break;
      }
    }
  }
}

std::vector<uint8_t> ReadFile(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

constexpr char kUsage[] =
    "usage: fuzz_replay engine|decode|host1x [--mutations=N] [--seed=S] [FILE|DIR...]\n"
    "  (a value follows '=' or comes as the next argument)\n";

struct Args {
  std::string target;
  int (*run)(const uint8_t*, size_t) = nullptr;
  long mutations = 200000;
  uint64_t seed = 1;
  std::vector<std::filesystem::path> files;
};

// Prints why and the usage; the exit status of a bad command line.
int Usage(const std::string& why) {
  std::fprintf(stderr, "fuzz_replay: %s\n%s", why.c_str(), kUsage);
  return 2;
}

bool Number(const std::string& text, uint64_t max, uint64_t* out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 0);
  if (text.empty() || text[0] == '-' || *end != '\0' || errno != 0 || v > max) return false;
  *out = v;
  return true;
}

// The arguments after the target; an empty string, or why they are wrong.
std::string ParseOptions(int argc, char** argv, Args* a) {
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i], value;
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    if (name == "--mutations" || name == "--seed") {
      if (eq != std::string::npos)
        value = arg.substr(eq + 1);
      else if (i + 1 < argc)
        value = argv[++i];
      else
        return name + " needs a value";
      uint64_t v = 0;
      if (!Number(value, name == "--seed" ? UINT64_MAX : 1000000000, &v))
        return name + ": '" + value + "' is not a number" +
               (name == "--seed" ? "" : " from 0 to 1000000000");
      if (name == "--seed")
        a->seed = v;
      else
        a->mutations = static_cast<long>(v);
    } else if (arg.size() > 1 && arg[0] == '-') {
      return "unknown option '" + arg + "'";
    } else if (std::filesystem::is_directory(arg)) {
      for (const auto& e : std::filesystem::directory_iterator(arg)) a->files.push_back(e.path());
    } else if (std::filesystem::is_regular_file(arg)) {
      a->files.push_back(arg);
    } else {
      return "no file or directory '" + arg + "'";
    }
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (argc >= 2 && (std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (argc < 2) return Usage("missing the target");
  a.target = argv[1];
  a.run = a.target == "engine"   ? EngineFuzzTestOneInput
          : a.target == "decode" ? DecodeFuzzTestOneInput
          : a.target == "host1x" ? Host1xFuzzTestOneInput
                                 : nullptr;
  if (a.run == nullptr) return Usage("unknown target '" + a.target + "'");
  if (std::string why = ParseOptions(argc, argv, &a); !why.empty()) return Usage(why);
  const auto t0 = std::chrono::steady_clock::now();
  if (!a.files.empty()) {
    for (const auto& f : a.files) {
      std::vector<uint8_t> v = ReadFile(f);
      std::fprintf(stderr, "running %s (%zu bytes)\n", f.c_str(), v.size());
      a.run(v.data(), v.size());
    }
    std::printf("%zu inputs ran without a violation\n", a.files.size());
    return 0;
  }
  const auto seeds = a.target == "engine"   ? nvsentry::fuzz::EngineSeeds()
                     : a.target == "decode" ? nvsentry::fuzz::DecodeSeeds()
                                            : nvsentry::fuzz::Host1xSeeds();
  if (seeds.empty()) {
    std::fprintf(stderr, "no seeds\n");
    return 1;
  }
  for (const auto& s : seeds) a.run(s.data(), s.size());
  Rng rng{a.seed};
  std::vector<uint8_t> v;
  for (long i = 0; i < a.mutations; ++i) {
    v = seeds[rng.Below(seeds.size())];
    Mutate(v, seeds, rng);
    a.run(v.data(), v.size());
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s: %zu seeds + %ld mutations ran without a violation in %.1f s (%.0f exec/s)\n",
              a.target.c_str(), seeds.size(), a.mutations, secs,
              (seeds.size() + a.mutations) / secs);
  return 0;
}
