// Writes the seed corpus of a fuzz target into a directory:
// fuzz_seeds engine|decode|host1x|xlate DIR.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/fuzz/fuzz_input.h"

int main(int argc, char** argv) {
  using namespace nvsentry::fuzz;
  const std::string target = argc == 3 ? argv[1] : "";
  if (target != "engine" && target != "decode" && target != "host1x" && target != "xlate") {
    std::fprintf(stderr, "usage: %s engine|decode|host1x|xlate DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[2];
  std::filesystem::create_directories(dir);
  const auto seeds = target == "engine"   ? EngineSeeds()
                     : target == "decode" ? DecodeSeeds()
                     : target == "host1x" ? Host1xSeeds()
                                          : XlateSeeds();
  char name[32];
  for (size_t i = 0; i < seeds.size(); ++i) {
    std::snprintf(name, sizeof name, "seed-%05zu", i);
    std::ofstream f(dir / name, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(seeds[i].data()),
            static_cast<std::streamsize>(seeds[i].size()));
    if (!f) {
      std::perror((dir / name).c_str());
      return 1;
    }
  }
  std::printf("%zu %s seeds in %s\n", seeds.size(), argv[1], dir.c_str());
  return 0;
}
