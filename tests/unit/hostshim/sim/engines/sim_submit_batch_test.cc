// Submissions fetch their pushbuffers in batches: the segments of consecutive GPFIFO entries are
// read together (one liveness check and one process_vm_readv of guest memory for many entries),
// while the command processor's answers stay those of fetching entry by entry: entries run in
// order, a fault stops at the entry that has it with the error it always had, and an entry sees
// what the GPU wrote before it.
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "hostshim/budget.h"
#include "hostshim/sim/engines/channel_engine.h"
#include "hostshim/sim/engines/pushbuffer.h"
#include "hostshim/sim/engines/pushbuffer_batch.h"
#include "hostshim/sim/engines/runlist.h"
#include "hostshim/sim/memory/address_space.h"
#include "hostshim/sim/memory/nvmap.h"
#include "hostshim/sim/sync/syncpoints.h"
#include "tests/unit/fake_gpu_memory.h"

namespace nvsentry::hostshim::sim {
namespace {
namespace ch = abi::channel;
using abi::NvError;

constexpr uint64_t kPage = 4096;

constexpr uint32_t Incr(uint32_t method_byte, uint32_t count) {
  return (1u << 29) | (count << 16) | (method_byte >> 2);
}
std::vector<uint32_t> SyncptIncrWords(uint32_t id) {
  return {Incr(0x70, 1), 0, Incr(0x74, 1), (id << 8) | 1};  // SYNCPOINTA, SYNCPOINTB INCR
}
ch::GpfifoEntry Entry(uint64_t va, uint32_t words) {
  return {static_cast<uint32_t>(va), static_cast<uint32_t>((va >> 32) & 0xFF) | (words << 10)};
}

template <typename Pred>
bool Eventually(Pred p) {
  const absl::Time end = absl::Now() + absl::Seconds(10);
  while (absl::Now() < end) {
    if (p()) return true;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return p();
}

// Page-aligned memory of this process: the guest's own memory, reached with process_vm_readv.
struct Pages {
  explicit Pages(size_t n) : size(n * kPage) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base = p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
  }
  ~Pages() {
    if (base != nullptr) munmap(base, size);
  }
  void Unmap() {
    munmap(base, size);
    base = nullptr;
  }
  uint8_t* base;
  size_t size;
};

class SimSubmitBatch : public ::testing::Test {
 protected:
  SimSubmitBatch() {
    AsLayout l;
    l.small_start = 0x20000;
    l.small_end = 0x4000000;
    l.big_start = 0x4000000;
    l.big_end = 0x100000000;
    as_ = AddressSpace::Create(l, nullptr);
    uint32_t id = 0;
    EXPECT_EQ(syncpoints_.Allocate(&id), NvError::kSuccess);
    ChannelEngine::Deps deps{syncpoints_, runlist_, nullptr, nullptr, nullptr};
    engine_ = std::make_shared<ChannelEngine>(deps, id);
    EXPECT_EQ(engine_->AllocRing(0x800), NvError::kSuccess);
    EXPECT_EQ(engine_->BindAddressSpace(as_), NvError::kSuccess);
    engine_->SetObjectClass(0xB197);
  }
  ~SimSubmitBatch() override { engine_->Close(); }

  // `pages` of guest memory behind an nvmap object mapped into the space; its GPU VA.
  uint64_t MapGuest(const Pages& pages, std::shared_ptr<NvmapObject>* object = nullptr) {
    uint32_t handle = 0, align = kPage;
    const uint32_t size = static_cast<uint32_t>(pages.size);
    EXPECT_EQ(nvmap_.Create(getpid(), size, &handle), NvError::kSuccess);
    EXPECT_EQ(
        nvmap_.Alloc(getpid(), handle, 0, 0, &align, 0, reinterpret_cast<uint64_t>(pages.base)),
        NvError::kSuccess);
    AddressSpace::MapArgs m;
    m.object = nvmap_.Resolve(getpid(), handle);
    EXPECT_NE(m.object, nullptr);
    if (object != nullptr) *object = m.object;
    uint64_t va = 0;
    int32_t kind = 0;
    EXPECT_EQ(as_->Map(m, &va, &kind), NvError::kSuccess);
    return va;
  }

  // Queues `entries` as one job with the kernel-style fence increment; waits for its fence, as a
  // client does: reached when the job ran, released when the channel stopped. (Not for failed():
  // a stopping channel refuses work at once but reports its error only once the notifier says
  // it, just before it releases the fences; a test woken by failed() could read no error yet.)
  void SubmitAndWait(std::vector<ch::GpfifoEntry> entries) {
    SubmitJob job;
    job.entries = std::move(entries);
    job.increment = true;
    ch::Fence fence{};
    ASSERT_EQ(engine_->Submit(std::move(job), 2 + promised_, &fence), NvError::kSuccess);
    ASSERT_TRUE(Eventually(
        [&] { return static_cast<int32_t>(syncpoints_.Read(fence.id) - fence.value) >= 0; }));
    ASSERT_TRUE(Eventually([&] { return engine_->pending_jobs() == 0; }));
  }

  BudgetAccount budget_{abi::Budgets{}};
  Syncpoints syncpoints_{absl::Milliseconds(10)};
  Runlist runlist_{1};
  Nvmap nvmap_{&budget_, 0, 0};
  std::shared_ptr<AddressSpace> as_;
  std::shared_ptr<ChannelEngine> engine_;
  uint32_t promised_ = 0;  // syncpoint increments the next job's words make
};

TEST_F(SimSubmitBatch, ManyEntriesCostOneLivenessCheckAndOneReadPerBatch) {
  constexpr uint32_t kEntries = 64;
  // Two layouts: segments a few bytes apart (read as one range) and segments two pages apart
  // (one piece each, still one process_vm_readv for all).
  for (const uint64_t stride : {uint64_t{64}, 2 * kPage}) {
    SCOPED_TRACE(stride);
    Pages mem(kEntries * stride / kPage + 1);
    ASSERT_NE(mem.base, nullptr);
    const std::vector<uint32_t> words = SyncptIncrWords(engine_->syncpoint_id());
    for (uint32_t i = 0; i < kEntries; ++i)
      std::memcpy(mem.base + i * stride, words.data(), words.size() * 4);
    std::shared_ptr<NvmapObject> object;
    const uint64_t va = MapGuest(mem, &object);
    std::shared_ptr<GuestProcess> guest = object->guest_process();
    ASSERT_NE(guest, nullptr);
    std::vector<ch::GpfifoEntry> entries;
    for (uint32_t i = 0; i < kEntries; ++i) entries.push_back(Entry(va + i * stride, 4));

    const uint64_t done_before = engine_->entries_done();
    const GuestProcess::Counts before = guest->counts();
    promised_ = kEntries;
    SubmitAndWait(entries);
    const GuestProcess::Counts after = guest->counts();
    ASSERT_FALSE(engine_->failed()) << engine_->error().what;
    EXPECT_EQ(engine_->entries_done() - done_before, kEntries);
    // Entry by entry this was 64 reads and 128 checks. One batch covers the job; a loaded
    // machine may end the channel's time slice early, which starts another.
    const uint64_t reads = after.transfers - before.transfers;
    const uint64_t checks = after.liveness_checks - before.liveness_checks;
    EXPECT_GE(reads, 1u);
    EXPECT_LE(reads, 3u);
    EXPECT_EQ(checks, 2 * reads);
  }
}

TEST_F(SimSubmitBatch, AFaultInTheMiddleStopsAtThatEntryWithItsError) {
  constexpr uint32_t kEntries = 64, kBad = 40;
  // The bad entry's segment: nowhere mapped, or mapped but its guest pages gone.
  for (const bool gone : {false, true}) {
    SCOPED_TRACE(gone ? "memory gone" : "unmapped");
    engine_->Reset();
    Pages mem(1), vanishing(1);
    const std::vector<uint32_t> words = SyncptIncrWords(engine_->syncpoint_id());
    std::memcpy(mem.base, words.data(), words.size() * 4);
    std::memcpy(vanishing.base, words.data(), words.size() * 4);
    const uint64_t va = MapGuest(mem);
    uint64_t bad_va = 0x7700000000;
    if (gone) {
      bad_va = MapGuest(vanishing) + 16;
      vanishing.Unmap();
    }
    std::vector<ch::GpfifoEntry> entries(kEntries, Entry(va, 4));
    entries[kBad] = Entry(bad_va, 4);

    const uint64_t done_before = engine_->entries_done();
    promised_ = kEntries;
    SubmitAndWait(entries);
    ASSERT_TRUE(engine_->failed());
    EXPECT_EQ(engine_->entries_done() - done_before, kBad) << "the entries before it ran";
    const ChannelError e = engine_->error();
    EXPECT_EQ(e.kind, ChannelErrorKind::kMmu);
    EXPECT_EQ(e.notifier_code, kNotifierMmuFault);
    EXPECT_EQ(e.fault.kind, gone ? MmuFault::Kind::kMemoryGone : MmuFault::Kind::kUnmapped);
    EXPECT_EQ(e.fault.va, bad_va);
    EXPECT_FALSE(e.fault.write);
  }
}

TEST_F(SimSubmitBatch, AnEntrySeesWhatTheEntryBeforeItWrote) {
  // Entry 0 releases a 4-byte semaphore onto entry 1's only word, a reserved command that would
  // stop the channel, turning it into a NOP (word 0). Entry 2 increments the syncpoint. All three
  // are in one batch; the write must send entry 1 back to memory.
  Pages mem(1);
  const uint64_t va = MapGuest(mem);
  const uint64_t target = va + 0x100;
  const std::vector<uint32_t> release = {Incr(0x10, 4), static_cast<uint32_t>(target >> 32),
                                         static_cast<uint32_t>(target), 0u, 2u | (1u << 24)};
  const uint32_t reserved = 6u << 29;
  const std::vector<uint32_t> incr = SyncptIncrWords(engine_->syncpoint_id());
  std::memcpy(mem.base, release.data(), release.size() * 4);
  std::memcpy(mem.base + 0x100, &reserved, 4);
  std::memcpy(mem.base + 0x200, incr.data(), incr.size() * 4);

  const uint64_t done_before = engine_->entries_done();
  promised_ = 1;
  SubmitAndWait({Entry(va, 5), Entry(target, 1), Entry(va + 0x200, 4)});
  EXPECT_FALSE(engine_->failed()) << engine_->error().what;
  EXPECT_EQ(engine_->entries_done() - done_before, 3u);
  uint32_t now = 1;
  std::memcpy(&now, mem.base + 0x100, 4);
  EXPECT_EQ(now, 0u);
}

// The host's NON_STALL_INTERRUPT calls the engine's non-stall hook (the fake Jetson posts its
// TSGs' BLOCKING_SYNC from it), once per interrupt, and a job without one does not.
TEST_F(SimSubmitBatch, ANonStallInterruptCallsTheHook) {
  std::atomic<int> calls{0};
  engine_->SetNonstallHook([&calls] { ++calls; });
  Pages mem(1);
  const uint64_t va = MapGuest(mem);
  const std::vector<uint32_t> words = {Incr(0x20, 1), 0u, Incr(0x20, 1), 0u};  // twice
  std::memcpy(mem.base, words.data(), words.size() * 4);
  const std::vector<uint32_t> incr = SyncptIncrWords(engine_->syncpoint_id());
  std::memcpy(mem.base + 0x200, incr.data(), incr.size() * 4);
  promised_ = 1;
  SubmitAndWait({Entry(va + 0x200, 4)});
  EXPECT_EQ(calls.load(), 0);
  promised_ = 0;
  SubmitAndWait({Entry(va, 4)});
  EXPECT_FALSE(engine_->failed()) << engine_->error().what;
  EXPECT_EQ(calls.load(), 2);
  engine_->SetNonstallHook({});
  SubmitAndWait({Entry(va, 4)});
  EXPECT_EQ(calls.load(), 2);
}

TEST_F(SimSubmitBatch, ReadManyReadsEveryPieceInOneGo) {
  Pages a(2), b(1);
  for (size_t i = 0; i < a.size; ++i) a.base[i] = static_cast<uint8_t>(i);
  std::memset(b.base, 0xB5, b.size);
  std::shared_ptr<NvmapObject> object;
  const uint64_t va_a = MapGuest(a, &object);
  const uint64_t va_b = MapGuest(b);
  uint64_t sparse = 0;
  ASSERT_EQ(as_->AllocSpace(1, kDefaultBigPageSize, kAllocSpaceSparse, &sparse), NvError::kSuccess);
  std::vector<uint8_t> x(kPage + 8), y(8, 1), z(8, 1);
  std::vector<GpuRead> reads = {
      {va_a + kPage - 4, {x.data(), x.size() - 4}}, {va_b + 5, y}, {sparse + 8, z}};
  const GuestProcess::Counts before = object->guest_process()->counts();
  ASSERT_TRUE(as_->ReadMany(reads));
  const GuestProcess::Counts after = object->guest_process()->counts();
  EXPECT_EQ(after.transfers - before.transfers, 1u);
  EXPECT_EQ(after.liveness_checks - before.liveness_checks, 2u);
  EXPECT_EQ(0, std::memcmp(x.data(), a.base + kPage - 4, kPage + 4));
  EXPECT_EQ(y, std::vector<uint8_t>(8, 0xB5));
  EXPECT_EQ(z, std::vector<uint8_t>(8, 0)) << "a sparse page nothing maps reads as zeros";

  // Any piece that cannot be read fails the whole call: unmapped, or its memory gone.
  std::vector<GpuRead> unmapped = {{va_b, y}, {0x7700000000, z}};
  EXPECT_FALSE(as_->ReadMany(unmapped));
  b.Unmap();
  std::vector<GpuRead> gone = {{va_a, z}, {va_b, y}};
  EXPECT_FALSE(as_->ReadMany(gone));
}

// The batch's own rules, against an in-memory GpuMemory that records what it is asked to read.
class RecordingMemory : public testing::FakeGpuMemory {
 public:
  bool ReadMany(std::span<const GpuRead> reads) override {
    calls.emplace_back();
    for (const GpuRead& r : reads) calls.back().push_back({r.va, r.dst.size()});
    return GpuMemory::ReadMany(reads);
  }
  std::vector<std::vector<std::pair<uint64_t, size_t>>> calls;
};

TEST(SimPushbufferBatch, MergesNearbySegmentsAndHandsWordsOutInOrder) {
  RecordingMemory mem;
  constexpr uint64_t kVa = 0x100000;
  std::vector<uint8_t>& bytes = mem.Map(kVa, 0x10000);
  for (size_t i = 0; i < bytes.size(); i += 4) {
    const uint32_t w = static_cast<uint32_t>(i / 4);
    std::memcpy(&bytes[i], &w, 4);
  }
  // Out of address order, one repeated, one overlapping, one a gap too far.
  const uint64_t far = kVa + 0x100 + 4 * 8 + PushbufferBatch::kMaxGap + 4;
  std::vector<ch::GpfifoEntry> entries = {Entry(kVa + 0x100, 8), Entry(kVa, 4), Entry(kVa, 4),
                                          Entry(kVa + 8, 4), Entry(far, 2)};
  PushbufferBatch batch;
  batch.Fill(&mem, 7, entries);
  ASSERT_EQ(mem.calls.size(), 1u);
  const std::vector<std::pair<uint64_t, size_t>> want = {{kVa, 0x100 + 32}, {far, 8}};
  EXPECT_EQ(mem.calls[0], want);
  EXPECT_EQ(batch.pending(), entries.size());
  for (const auto& e : entries) {
    std::span<const uint32_t> words;
    ASSERT_TRUE(batch.Next(7, e, &words));
    const uint32_t first = static_cast<uint32_t>((pb::EntryVa(e.entry0, e.entry1) - kVa) / 4);
    ASSERT_EQ(words.size(), pb::EntryLength(e.entry1));
    for (size_t i = 0; i < words.size(); ++i) EXPECT_EQ(words[i], first + i);
  }
  EXPECT_EQ(batch.pending(), 0u);
  std::span<const uint32_t> words;
  EXPECT_FALSE(batch.Next(7, entries[0], &words));
}

TEST(SimPushbufferBatch, KeepsToItsLimitsAndLeavesFailedReadsToTheUsualFetch) {
  RecordingMemory mem;
  constexpr uint64_t kVa = 0x100000;
  mem.Map(kVa, 4 * PushbufferBatch::kMaxBytes);
  PushbufferBatch batch;
  std::span<const uint32_t> words;

  // No more than kMaxEntries entries...
  std::vector<ch::GpfifoEntry> many(PushbufferBatch::kMaxEntries + 5, Entry(kVa, 2));
  batch.Fill(&mem, 1, many);
  EXPECT_EQ(batch.pending(), PushbufferBatch::kMaxEntries);
  // ...nor more than kMaxBytes of segments: the entry that would pass it starts the next batch.
  const uint32_t quarter = PushbufferBatch::kMaxBytes / 4 / 4;
  std::vector<ch::GpfifoEntry> big(5, Entry(kVa, quarter));
  batch.Fill(&mem, 1, big);
  EXPECT_EQ(batch.pending(), 4u);
  // A first entry longer than that, or empty, is covered alone and fetched the usual way.
  for (uint32_t n : {quarter * 4 + 1, 0u}) {
    mem.calls.clear();
    batch.Fill(&mem, 1, std::vector<ch::GpfifoEntry>{Entry(kVa, n), Entry(kVa, 2)});
    EXPECT_TRUE(mem.calls.empty());
    EXPECT_EQ(batch.pending(), 1u);
    ASSERT_TRUE(batch.Next(1, Entry(kVa, n), &words));
    EXPECT_TRUE(words.empty());
  }
  // A read that fails covers its entries without words: each is fetched (and faults) alone.
  std::vector<ch::GpfifoEntry> faulting = {Entry(kVa, 2), Entry(0x7700000000, 2)};
  batch.Fill(&mem, 2, faulting);
  EXPECT_EQ(batch.pending(), 2u);
  for (const auto& e : faulting) {
    ASSERT_TRUE(batch.Next(2, e, &words));
    EXPECT_TRUE(words.empty());
  }
  // Another tag, or an entry out of turn, drops the batch.
  batch.Fill(&mem, 3, std::vector<ch::GpfifoEntry>(3, Entry(kVa, 2)));
  EXPECT_FALSE(batch.Next(4, Entry(kVa, 2), &words));
  EXPECT_EQ(batch.pending(), 0u);
  batch.Fill(&mem, 3, std::vector<ch::GpfifoEntry>(3, Entry(kVa, 2)));
  EXPECT_FALSE(batch.Next(3, Entry(kVa + 4, 2), &words));
  EXPECT_EQ(batch.pending(), 0u);
}

}  // namespace
}  // namespace nvsentry::hostshim::sim
