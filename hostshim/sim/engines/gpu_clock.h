// The simulated GPU's clock (PTIMER): nanoseconds, monotonic, the same for every part of the GPU
// (GET_GPU_TIME, the timestamps of semaphore releases and reports) and every thread. It is the
// host's CLOCK_MONOTONIC, so a GPU time is comparable with the CPU counter sampled beside it.
#pragma once

#include <cstdint>

namespace nvsentry::hostshim::sim {

// The GPU's PTIMER value now, in nanoseconds; never goes backwards.
uint64_t GpuTimeNs();

// One CPU/GPU timestamp pair taken at the same instant: the CPU counter in its ticks
// (gm20b::kCpuCounterHz, like CNTPCT_EL0) and PTIMER in nanoseconds.
struct ClockSample {
  uint64_t cpu_ticks;
  uint64_t gpu_ns;
};
ClockSample SampleClocks();
// A GpuTimeNs() instant in the CPU counter's ticks.
uint64_t CpuTicksFromNs(uint64_t ns);

}  // namespace nvsentry::hostshim::sim
