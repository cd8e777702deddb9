// In-process benchmarks of the simulated GPU's command processor (not tests; not run by ctest):
//  - decode rate of large pushbuffers (method words per second) against a plain scan (sum) of
//    the same words, printed as a ratio at the end;
//  - a 64 MiB DMA pitch copy through an in-memory GpuMemory against memcpy of the same size.
// The DMA copy through guest memory (nvmap over process_vm_*) is measured end to end by
// gpu_guest_bench.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "hostshim/sim/engines/command_processor.h"
#include "tests/unit/fake_gpu_memory.h"

namespace {

using nvsentry::hostshim::sim::ChannelEnv;
using nvsentry::hostshim::sim::CommandProcessor;
using nvsentry::hostshim::sim::RunResult;
using nvsentry::hostshim::sim::Syncpoints;
using nvsentry::hostshim::sim::testing::FakeGpuMemory;

uint32_t Cmd(uint32_t mode, uint32_t subch, uint32_t method_byte, uint32_t count) {
  return (mode << 29) | (count << 16) | (subch << 13) | (method_byte >> 2);
}

// A pushbuffer shaped like 3D state setup: bind 3D on subchannel 0, then a repeating mix of
// short incrementing commands (1..8 arguments), non-incrementing pairs and immediates on
// methods the simulator stores but does not model (pure state). Every word is either a header or an
// argument. No command straddles a multiple of kEntryWords (NOP words pad the gap), so the buffer
// can be split into GPFIFO entries of that size.
constexpr size_t kEntryWords = 1u << 20;

std::vector<uint32_t> StatePushbuffer(size_t words) {
  std::vector<uint32_t> pb = {Cmd(1, 0, 0, 1), 0xB197};
  uint32_t x = 12345;
  while (pb.size() + 10 < words) {
    size_t room = kEntryWords - pb.size() % kEntryWords;
    if (room < 10) {
      pb.insert(pb.end(), room, 0u);
      continue;
    }
    x = x * 1103515245u + 12345u;
    uint32_t count = 1 + ((x >> 16) % 8);
    // 0x400..0xD1C: 3D state only (the triggers and refused methods lie outside).
    uint32_t method = 0x400 + (((x >> 8) % 0x240) << 2);
    switch ((x >> 24) % 4) {
      case 0:
      case 1:
        pb.push_back(Cmd(1, 0, method, count));
        for (uint32_t i = 0; i < count; ++i) pb.push_back(x + i);
        break;
      case 2:
        pb.push_back(Cmd(3, 0, method, 2));
        pb.push_back(x);
        pb.push_back(~x);
        break;
      default: pb.push_back(Cmd(4, 0, method, x & 0x1FFF)); break;
    }
  }
  return pb;
}

constexpr uint64_t kPbVa = 0x1'0000'0000ull;

std::map<std::string, double>& Rates() {
  static std::map<std::string, double> r;
  return r;
}

void BM_Scan(benchmark::State& state) {
  auto pb = StatePushbuffer(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    uint64_t sum = std::accumulate(pb.begin(), pb.end(), uint64_t{0});
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * pb.size()));
}

void BM_DecodeWords(benchmark::State& state) {
  auto pb = StatePushbuffer(static_cast<size_t>(state.range(0)));
  Syncpoints sp;
  FakeGpuMemory mem;
  ChannelEnv env;
  env.memory = &mem;
  env.syncpoints = &sp;
  CommandProcessor cp(env);
  for (auto _ : state) {
    RunResult r = cp.RunWords(pb);
    if (r.stop != RunResult::Stop::kDone) state.SkipWithError("decode stopped");
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * pb.size()));
}

// The same words fetched from GPU memory as one GPFIFO entry per 1 Mi words (entries are at
// most 2^21 words).
void BM_DecodeEntries(benchmark::State& state) {
  auto pb = StatePushbuffer(static_cast<size_t>(state.range(0)));
  Syncpoints sp;
  FakeGpuMemory mem;
  auto& bytes = mem.Map(kPbVa, pb.size() * 4);
  std::memcpy(bytes.data(), pb.data(), pb.size() * 4);
  ChannelEnv env;
  env.memory = &mem;
  env.syncpoints = &sp;
  CommandProcessor cp(env);
  for (auto _ : state) {
    for (size_t at = 0; at < pb.size(); at += kEntryWords) {
      uint32_t n = static_cast<uint32_t>(std::min(kEntryWords, pb.size() - at));
      uint64_t va = kPbVa + at * 4;
      RunResult r =
          cp.Run({static_cast<uint32_t>(va), static_cast<uint32_t>(va >> 32) | (n << 10)});
      if (r.stop != RunResult::Stop::kDone) state.SkipWithError("decode stopped");
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * pb.size()));
}

constexpr size_t kCopyBytes = 64u << 20;

void BM_Memcpy(benchmark::State& state) {
  std::vector<uint8_t> src(kCopyBytes, 1), dst(kCopyBytes, 0);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kCopyBytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kCopyBytes));
}

void BM_DmaCopy(benchmark::State& state) {
  constexpr uint64_t kSrc = 0x10'0000'0000ull, kDst = 0x20'0000'0000ull;
  Syncpoints sp;
  FakeGpuMemory mem;
  std::memset(mem.Map(kSrc, kCopyBytes).data(), 1, kCopyBytes);
  mem.Map(kDst, kCopyBytes);
  ChannelEnv env;
  env.memory = &mem;
  env.syncpoints = &sp;
  CommandProcessor cp(env);
  uint32_t lines = static_cast<uint32_t>(state.range(0));
  uint32_t length = static_cast<uint32_t>(kCopyBytes / lines);
  // Bind DMA on subchannel 4; offsets, pitches, length and count from OFFSET_IN_UPPER; launch a
  // pitch-to-pitch copy (multi-line when there are several lines).
  std::vector<uint32_t> pb = {Cmd(1, 4, 0, 1),
                              0xB0B5,
                              Cmd(1, 4, 0x400, 8),
                              static_cast<uint32_t>(kSrc >> 32),
                              0,
                              static_cast<uint32_t>(kDst >> 32),
                              0,
                              length,
                              length,
                              length,
                              lines,
                              Cmd(1, 4, 0x300, 1),
                              2u | (1u << 7) | (1u << 8) | (1u << 9)};
  for (auto _ : state) {
    RunResult r = cp.RunWords(pb);
    if (r.stop != RunResult::Stop::kDone) state.SkipWithError("copy stopped");
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kCopyBytes));
}

BENCHMARK(BM_Scan)->Arg(64 << 10)->Arg(1 << 20)->Arg(16 << 20);
BENCHMARK(BM_DecodeWords)->Arg(64 << 10)->Arg(1 << 20)->Arg(16 << 20);
BENCHMARK(BM_DecodeEntries)->Arg(64 << 10)->Arg(1 << 20)->Arg(16 << 20);
BENCHMARK(BM_Memcpy)->UseRealTime();
BENCHMARK(BM_DmaCopy)->Arg(1)->Arg(4096)->UseRealTime();

// Prints each run as usual and keeps its rate for the ratios printed at the end.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  // In colour only on a terminal: in a file or a pipe (bench/run.sh's report) the escape codes
  // are noise. (The library chooses so for a reporter it makes; one passed in keeps its own.)
  RatioReporter() : ConsoleReporter(isatty(STDOUT_FILENO) != 0 ? OO_Defaults : OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      auto it = r.counters.find("items_per_second");
      if (it == r.counters.end()) it = r.counters.find("bytes_per_second");
      if (it == r.counters.end()) continue;
      // With --benchmark_repetitions the median stands for the benchmark.
      bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
      if (r.run_type == Run::RT_Iteration || median) Rates()[r.run_name.str()] = it->second.value;
    }
  }
};

void PrintRatio(const char* what, const std::string& a, const std::string& b) {
  auto& r = Rates();
  if (r.count(a) && r.count(b) && r[b] > 0) {
    std::printf("%-44s %6.1f%%  (%.3g vs %.3g per second)\n", what, 100.0 * r[a] / r[b], r[a],
                r[b]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  // What Google Benchmark did not take (its --benchmark_* flags) is a mistake.
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    std::fprintf(stderr, "usage: gpu_bench [--benchmark_filter=REGEX] [--benchmark_...]\n");
    return 2;
  }
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nRatios (target: decode >= 25%% of the scan, DMA >= 50%% of memcpy)\n");
  for (const char* size : {"65536", "1048576", "16777216"}) {
    std::string s = size;
    PrintRatio(("decode (RunWords) / scan, " + s + " words").c_str(), "BM_DecodeWords/" + s,
               "BM_Scan/" + s);
    PrintRatio(("decode (Run, fetched) / scan, " + s + " words").c_str(), "BM_DecodeEntries/" + s,
               "BM_Scan/" + s);
  }
  PrintRatio("DMA 64 MiB copy / memcpy", "BM_DmaCopy/1/real_time", "BM_Memcpy/real_time");
  PrintRatio("DMA 64 MiB, 4096 touching lines / memcpy", "BM_DmaCopy/4096/real_time",
             "BM_Memcpy/real_time");
  benchmark::Shutdown();
  return 0;
}
