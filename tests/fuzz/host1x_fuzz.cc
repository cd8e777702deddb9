// Fuzz target for the host1x command processor (hostshim/sim/host1x/host1x_processor.h): arbitrary
// command buffers, gathered buffers, relocations, syncpoint ownership and step budgets, run
// against a fake memory and syncpoint environment. Checks that the processor never reads outside
// the buffers it was given (ASan; Fetch is strict), never asks for a syncpoint that does not
// exist, keeps its class to host1x or the channel's engine, always finishes within the words it
// can reach (no hang: yields are bounded by that count), and that the trace's summary of what it
// wrote stays bounded. Input layout: HostFuzzInput below (tests/fuzz/fuzz_input.h has the seeds).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hostshim/sim/host1x/host1x_methods.h"
#include "hostshim/sim/host1x/host1x_processor.h"
#include "tests/fuzz/fuzz_input.h"

#ifndef FUZZ_ENTRY
#define FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

namespace nvsentry::fuzz {
namespace {

using hostshim::sim::Host1xEnv;
using hostshim::sim::Host1xProcessor;
using hostshim::sim::Host1xRun;
using Stop = Host1xRun::Stop;

constexpr uint32_t kSyncpoints = 192;
constexpr uint32_t kClasses[] = {0x5D, 0xF0, 0xC0, 0x21, 0xE0};

[[noreturn]] void Violation(const char* what) {
  std::fprintf(stderr, "host1x_fuzz: invariant violated: %s\n", what);
  std::abort();
}
#define EXPECT(cond, what)        \
  do {                            \
    if (!(cond)) Violation(what); \
  } while (0)

struct Buffer {
  uint32_t addr;
  std::vector<uint32_t> words;
};

class FuzzEnv : public Host1xEnv {
 public:
  bool Fetch(uint32_t addr, uint32_t words, std::vector<uint32_t>* out, std::string* why) override {
    EXPECT(words <= hostshim::sim::kMaxGatherWords, "GATHER of more words than its field holds");
    ++fetches;
    for (const Buffer& b : buffers) {
      if (addr < b.addr) continue;
      const uint64_t first = (uint64_t{addr} - b.addr) / 4;
      if ((addr - b.addr) % 4 != 0 || first + words > b.words.size()) continue;
      out->assign(b.words.begin() + static_cast<ptrdiff_t>(first),
                  b.words.begin() + static_cast<ptrdiff_t>(first + words));
      return true;
    }
    *why = "not inside a buffer";
    return false;
  }
  abi::NvError IncrementSyncpoint(uint32_t id) override {
    if (id >= kSyncpoints) return abi::NvError::kBadParameter;
    if (!owned[id]) return abi::NvError::kAccessDenied;
    ++values[id];
    return abi::NvError::kSuccess;
  }
  uint32_t ReadSyncpoint(uint32_t id) override {
    EXPECT(id < kSyncpoints, "read of a syncpoint that does not exist");
    return values[id];
  }

  std::vector<Buffer> buffers;
  bool owned[kSyncpoints] = {};
  uint32_t values[kSyncpoints] = {};
  uint64_t fetches = 0;
};

}  // namespace

int RunHost1xInput(const uint8_t* data, size_t size) {
  Reader r({data, size});
  const uint32_t cls = kClasses[r.U8() % std::size(kClasses)];
  const uint8_t flags = r.U8();
  FuzzEnv env;
  // Gathered buffers: up to 3, up to 255 words each, at input-chosen addresses.
  const int nbufs = r.U8() % 4;
  for (int i = 0; i < nbufs; ++i) {
    Buffer b;
    b.addr = r.U32();
    b.words.resize(r.U8());
    for (uint32_t& w : b.words) w = r.U32();
    env.buffers.push_back(std::move(b));
  }
  // Syncpoints the guest owns: two input-chosen ids, and their starting values.
  for (int i = 0; i < 2; ++i) {
    const uint32_t id = r.U8() % kSyncpoints;
    env.owned[id] = true;
    env.values[id] = r.U32();
  }
  const uint32_t budget = 1 + r.U16();
  const int ncmdbufs = 1 + r.U8() % 3;
  const int nrelocs = r.U8() % 8;
  struct Reloc {
    uint16_t word;
    uint32_t value;
  };
  std::vector<Reloc> relocs;
  for (int i = 0; i < nrelocs; ++i) {
    const uint16_t word = r.U16();
    const uint32_t address = r.U32();
    relocs.push_back({word, address >> (r.U8() & 31)});  // as the channel patches them
  }
  // The command buffers: the rest of the input, cut into ncmdbufs pieces (at most 4096 words).
  std::vector<uint32_t> all;
  while (!r.Rest().empty() && all.size() < 4096) all.push_back(r.U32());
  for (const Reloc& rl : relocs)
    if (rl.word < all.size()) all[rl.word] = rl.value;

  Host1xProcessor p(cls);
  const size_t piece = all.size() / ncmdbufs + 1;
  for (size_t start = 0, n = 0; start < all.size() || n == 0; start += piece, ++n) {
    const size_t end = std::min(all.size(), start + piece);
    std::vector<uint32_t> words(all.begin() + static_cast<ptrdiff_t>(std::min(start, end)),
                                all.begin() + static_cast<ptrdiff_t>(end));
    // Every word it can reach: its own, and for each, at most one full gather.
    const uint64_t reachable = (words.size() + 1) * (uint64_t{hostshim::sim::kMaxGatherWords} + 1);
    const uint64_t max_yields = reachable / budget + 2;
    if ((flags & 1) && n > 0) p.Reset();
    p.Start(std::move(words));
    uint64_t yields = 0;
    int waits = 0;
    bool met = false;  // the last wait's syncpoint was moved to its threshold
    uint32_t met_id = 0, met_thresh = 0;
    for (;;) {
      Host1xRun run = p.Run(env, budget);
      EXPECT(p.current_class() == hostshim::sim::kHost1xClass || p.current_class() == cls,
             "a class this channel does not have");
      EXPECT(p.class_methods() <= p.engine_methods(), "more engine methods than class writes");
      if (run.stop == Stop::kDone) break;
      if (run.stop == Stop::kError) {
        EXPECT(!run.error.empty(), "an error without its reason");
        break;
      }
      if (run.stop != Stop::kWait) met = false;
      if (run.stop == Stop::kYield) {
        EXPECT(++yields <= max_yields, "more yields than the stream has words (hang)");
        continue;
      }
      // kWait: what another engine would do, then run again; a stream that keeps waiting is
      // dropped as the channel would be (Reset).
      EXPECT(run.wait_id < kSyncpoints, "wait on a syncpoint that does not exist");
      EXPECT(!met || run.wait_id != met_id || run.wait_thresh != met_thresh,
             "a wait met by its threshold waits again");
      if (++waits > 64) {
        p.Reset();
        break;
      }
      met = (flags & 2) != 0;
      met_id = run.wait_id;
      met_thresh = run.wait_thresh;
      env.values[run.wait_id] = met ? run.wait_thresh : env.values[run.wait_id] + 1;
    }
  }
  const std::string summary = p.tally().Summary(cls);
  EXPECT(summary.size() < (1u << 20), "summary not bounded");
  return 0;
}

}  // namespace nvsentry::fuzz

extern "C" int FUZZ_ENTRY(const uint8_t* data, size_t size) {
  return nvsentry::fuzz::RunHost1xInput(data, size);
}
