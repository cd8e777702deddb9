#include "hostshim/sim/engines/gpu_clock.h"

#include <time.h>

#include "hostshim/sim/engines/gm20b.h"

namespace nvsentry::hostshim::sim {

uint64_t GpuTimeNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t CpuTicksFromNs(uint64_t ns) {
  return static_cast<uint64_t>(static_cast<unsigned __int128>(ns) * gm20b::kCpuCounterHz /
                               1'000'000'000u);
}

ClockSample SampleClocks() {
  const uint64_t ns = GpuTimeNs();
  return {CpuTicksFromNs(ns), ns};
}

}  // namespace nvsentry::hostshim::sim
