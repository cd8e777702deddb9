// Timing shared by the benchmark's guest, the raw supervisor's child and the driver.
//
// Every figure is taken inside the process that makes the calls, over blocks of many calls, so
// that no process start-up, sandbox set-up or exit is ever in a figure. A process reports its
// blocks on one line, "ns_per_call A B C ...", which is the whole protocol with the driver.
#pragma once

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace nvbench {

inline constexpr const char* kSamplesTag = "ns_per_call";

inline int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// The median is what every figure reports: a VM's hiccups land in a few blocks or runs, and the
// median ignores them where a mean would not.
inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// Makes `warmup` untimed calls (page faults, caches, the sentry's per-thread lookups), then
// `blocks` timed blocks of `calls` calls each. Returns ns per call for each block, or nothing
// as soon as one call fails: a failing call is not the call meant to be measured.
template <typename Call>
std::optional<std::vector<double>> TimeBlocks(long warmup, int blocks, long calls, Call call) {
  for (long i = 0; i < warmup; ++i)
    if (!call()) return std::nullopt;
  std::vector<double> out;
  for (int b = 0; b < blocks; ++b) {
    int64_t t0 = NowNs();
    for (long i = 0; i < calls; ++i)
      if (!call()) return std::nullopt;
    out.push_back(static_cast<double>(NowNs() - t0) / static_cast<double>(calls));
  }
  return out;
}

inline std::string FormatSamples(const std::vector<double>& ns) {
  std::string line = kSamplesTag;
  char buf[32];
  for (double v : ns) {
    snprintf(buf, sizeof buf, " %.1f", v);
    line += buf;
  }
  return line + "\n";
}

// Finds the samples line anywhere in `text` (a guest may print other things before it).
inline std::optional<std::vector<double>> ParseSamples(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string tag;
    if (!(words >> tag) || tag != kSamplesTag) continue;
    std::vector<double> ns;
    for (double v; words >> v;) ns.push_back(v);
    if (!ns.empty()) return ns;
  }
  return std::nullopt;
}

}  // namespace nvbench
