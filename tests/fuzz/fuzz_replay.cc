// Runs the fuzz targets without libFuzzer (any compiler): the built-in seeds plus deterministic
// pseudo-random mutations of them, or the given files (e.g. a crash libFuzzer saved).
//   fuzz_replay engine|decode|host1x [--mutations N] [--seed S] [FILE|DIR...]
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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s engine|decode|host1x [--mutations N] [--seed S] [FILE|DIR...]\n",
                 argv[0]);
    return 2;
  }
  const std::string target = argv[1];
  if (target != "engine" && target != "decode" && target != "host1x") return 2;
  auto* run = target == "engine"   ? EngineFuzzTestOneInput
              : target == "decode" ? DecodeFuzzTestOneInput
                                   : Host1xFuzzTestOneInput;
  long mutations = 200000;
  uint64_t seed = 1;
  std::vector<std::filesystem::path> files;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--mutations" && i + 1 < argc)
      mutations = std::strtol(argv[++i], nullptr, 0);
    else if (a == "--seed" && i + 1 < argc)
      seed = std::strtoull(argv[++i], nullptr, 0);
    else if (std::filesystem::is_directory(a))
      for (const auto& e : std::filesystem::directory_iterator(a)) files.push_back(e.path());
    else
      files.push_back(a);
  }
  const auto t0 = std::chrono::steady_clock::now();
  if (!files.empty()) {
    for (const auto& f : files) {
      std::vector<uint8_t> v = ReadFile(f);
      std::fprintf(stderr, "running %s (%zu bytes)\n", f.c_str(), v.size());
      run(v.data(), v.size());
    }
    std::printf("%zu inputs ran without a violation\n", files.size());
    return 0;
  }
  const auto seeds = target == "engine"   ? nvsentry::fuzz::EngineSeeds()
                     : target == "decode" ? nvsentry::fuzz::DecodeSeeds()
                                          : nvsentry::fuzz::Host1xSeeds();
  if (seeds.empty()) {
    std::fprintf(stderr, "no seeds\n");
    return 1;
  }
  for (const auto& s : seeds) run(s.data(), s.size());
  Rng rng{seed};
  std::vector<uint8_t> v;
  for (long i = 0; i < mutations; ++i) {
    v = seeds[rng.Below(seeds.size())];
    Mutate(v, seeds, rng);
    run(v.data(), v.size());
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s: %zu seeds + %ld mutations ran without a violation in %.1f s (%.0f exec/s)\n",
              target.c_str(), seeds.size(), mutations, secs, (seeds.size() + mutations) / secs);
  return 0;
}
