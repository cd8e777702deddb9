// The variable-array arithmetic and the engine's handling of variable ioctls, Ioctl2 and Ioctl3,
// on a small synthetic device whose layouts are written here (so the tests do not depend on, or
// repeat, Switchbrew tables).
#include "abi/array_layout.h"

#include <cerrno>
#include <cstring>
#include <map>

#include "abi/layout_check.h"
#include "gtest/gtest.h"
#include "proxy/engine.h"

namespace nvsentry {
namespace {

using namespace abi;
using enum FieldType;
constexpr Dir I = Dir::kIn, O = Dir::kOut, IO = Dir::kInOut, N = Dir::kNone;

// A submit-like ioctl: {u64 ignored; u32 count; union{out u32 err / in u32 flags}} then
// count 8-byte entries inline.
constexpr Field kEntryF[] = {{"lo", 0, kU32, 1, I}, {"hi", 4, kU32, 1, I}};
constexpr StructDesc kEntry{"entry", 8, kEntryF};
constexpr Field kSubmitF[] = {{"ignored", 0, kU64, 1, N},
                              {"count", 8, kU32, 1, I},
                              {"detailed_error", 12, kU32, 1, O},
                              {"flags", 12, kU32, 1, I, nullptr, true}};
constexpr ArrayDesc kSubmitA[] = {{"entries", &kEntry, I, Buffer::kMain, CountFrom::kField, 8, 16}};
// Two inline arrays counted by two fields, the second written back.
constexpr Field kPairF[] = {{"a", 0, kU32, 1, I}, {"b", 4, kU32, 1, I}};
constexpr Field kU32F[] = {{"v", 0, kU32, 1, IO}};
constexpr StructDesc kWord{"word", 4, kU32F};
constexpr ArrayDesc kPairA[] = {{"first", &kEntry, I, Buffer::kMain, CountFrom::kField, 0, 100},
                                {"second", &kWord, O, Buffer::kMain, CountFrom::kField, 4, 100}};
// A bare array taking the whole buffer.
constexpr ArrayDesc kRestA[] = {{"ops", &kEntry, I, Buffer::kMain, CountFrom::kRest, 0, 100}};
// Header with entries in the Ioctl2 buffer.
constexpr Field kHdr2F[] = {{"count", 0, kU32, 1, I}, {"result", 4, kU32, 1, O}};
constexpr ArrayDesc kIn2A[] = {{"entries", &kEntry, I, Buffer::kIn2, CountFrom::kField, 0, 8}};
// Struct whose copy also goes to the Ioctl3 buffer.
constexpr Field kRegionF[] = {{"offset", 0, kU64, 1, O}, {"pages", 8, kU64, 1, O}};
constexpr StructDesc kRegion{"region", 16, kRegionF};
constexpr Field kHdr3F[] = {{"size", 0, kU32, 1, IO}, {"pad", 4, kU32, 1, N}};
constexpr ArrayDesc kOut2A[] = {{"regions", &kRegion, O, Buffer::kOut2, CountFrom::kFixed, 2, 2}};

constexpr uint32_t kSubmit = 0xC000F001, kPair = 0xC000F002, kRest = 0xC000F003;
constexpr uint32_t kWith2 = IocCode(Dir::kInOut, 0xF0, 4, 8),
                   kWith3 = IocCode(Dir::kInOut, 0xF0, 5, 8);
constexpr uint32_t kNotSupported = IocCode(Dir::kOut, 0xF0, 6, 8);
constexpr Field kOpaque8[] = {{"data", 0, kU8, 8, O}};

constexpr IoctlDesc kTable[] = {
    {kSubmit, "TEST_SUBMIT", kSubmitF, kVariable, kSubmitA, 16},
    {kPair, "TEST_PAIR", kPairF, kVariable, kPairA, 8},
    {kRest, "TEST_REST", {}, kVariable, kRestA, 0},
    {kWith2, "TEST_IOCTL2", kHdr2F, kUsesIoctl2, kIn2A},
    {kWith3, "TEST_IOCTL3", kHdr3F, kUsesIoctl3, kOut2A},
    {kNotSupported,
     "TEST_SEED_ANSWER",
     kOpaque8,
     kFixedAnswer | kOpaque,
     {},
     0,
     {},
     NvError::kNotSupported},
};
static_assert(TableIsSound(kTable));

// Model checks: things TableIsSound must refuse.
constexpr Field kOverlapF[] = {{"a", 0, kU32, 1, I}, {"b", 2, kU32, 1, I}};
constexpr IoctlDesc kOverlap[] = {{IocCode(Dir::kIn, 0xF0, 1, 6), "X", kOverlapF}};
static_assert(!TableIsSound(kOverlap), "overlapping fields");
constexpr Field kShortF[] = {{"a", 0, kU32, 1, I}};
constexpr IoctlDesc kShort[] = {{IocCode(Dir::kIn, 0xF0, 1, 8), "X", kShortF}};
static_assert(!TableIsSound(kShort), "fields must cover the encoded size");
constexpr ArrayDesc kBadCount[] = {{"e", &kEntry, I, Buffer::kMain, CountFrom::kField, 0, 9}};
constexpr IoctlDesc kNoCountField[] = {{0xC000F001, "X", kSubmitF, kVariable, kBadCount, 16}};
static_assert(!TableIsSound(kNoCountField), "count must name a u32 input field");
constexpr IoctlDesc kDup[] = {{kWith2, "A", kHdr2F, kUsesIoctl2, kIn2A},
                              {kWith2, "B", kHdr2F, kUsesIoctl2, kIn2A}};
static_assert(!TableIsSound(kDup), "one code, two entries, same firmware");
constexpr IoctlDesc kVariants[] = {{kWith2, "A", kHdr2F, kUsesIoctl2, kIn2A, 0, {0, Fw(3, 0, 0)}},
                                   {kWith2, "B", kHdr2F, kUsesIoctl2, kIn2A, 0, {Fw(3, 0, 0)}}};
static_assert(TableIsSound(kVariants), "variants on disjoint firmware ranges");

std::vector<uint8_t> Bytes(std::initializer_list<uint32_t> words) {
  std::vector<uint8_t> b(words.size() * 4);
  size_t i = 0;
  for (uint32_t w : words) std::memcpy(&b[4 * i++], &w, 4);
  return b;
}

uint32_t Sized(uint32_t code, uint32_t size) { return code | (size << 16); }

TEST(ArrayLayout, SubmitCountsMustMatchTheSize) {
  auto hdr = Bytes({0, 0, 3, 0});
  ArrayLayout ok = LayOutArrays(kTable[0], Via::kDirect, hdr, {16 + 3 * 8});
  ASSERT_EQ(ok.err, NvError::kSuccess) << ok.problem;
  ASSERT_EQ(ok.slices.size(), 1u);
  EXPECT_EQ(ok.slices[0].offset, 16u);
  EXPECT_EQ(ok.slices[0].count, 3u);
  EXPECT_EQ(ok.out_end, 16u) << "input-only entries are not written back";
  EXPECT_EQ(LayOutArrays(kTable[0], Via::kDirect, hdr, {16 + 4 * 8}).err, NvError::kCountMismatch);
  EXPECT_EQ(LayOutArrays(kTable[0], Via::kDirect, hdr, {16 + 2 * 8}).err, NvError::kCountMismatch);
  EXPECT_EQ(LayOutArrays(kTable[0], Via::kDirect, hdr, {12}).err, NvError::kInvalidSize);
  EXPECT_EQ(LayOutArrays(kTable[0], Via::kDirect, std::span(hdr).first(12), {40}).err,
            NvError::kInvalidSize);
}

TEST(ArrayLayout, CountsAtAndAboveTheLimit) {
  auto at = Bytes({0, 0, 16, 0});
  EXPECT_EQ(LayOutArrays(kTable[0], Via::kDirect, at, {16 + 16 * 8}).err, NvError::kSuccess);
  auto above = Bytes({0, 0, 17, 0});
  EXPECT_EQ(LayOutArrays(kTable[0], Via::kDirect, above, {16 + 17 * 8}).err,
            NvError::kBadParameter);
  const uint32_t lower[] = {2};
  EXPECT_EQ(LayOutArrays(kTable[0], Via::kDirect, Bytes({0, 0, 3, 0}), {40}, lower).err,
            NvError::kBadParameter);
}

TEST(ArrayLayout, OverflowingCountTimesSize) {
  // 0x20000000 * 8 = 2^32: wraps to 0 in 32-bit arithmetic, which would "match" size 16.
  auto hdr = Bytes({0, 0, 0x20000000, 0});
  EXPECT_EQ(LayOutArrays(kTable[0], Via::kDirect, hdr, {16}).err, NvError::kOverFlow);
  auto big = Bytes({0, 0, 0xFFFFFFFF, 0});
  EXPECT_EQ(LayOutArrays(kTable[0], Via::kDirect, big, {16}).err, NvError::kOverFlow);
}

TEST(ArrayLayout, SeveralArraysFollowInOrder) {
  auto hdr = Bytes({2, 3});
  ArrayLayout l = LayOutArrays(kTable[1], Via::kDirect, hdr, {8 + 2 * 8 + 3 * 4});
  ASSERT_EQ(l.err, NvError::kSuccess) << l.problem;
  EXPECT_EQ(l.slices[1].offset, 8u + 16u);
  EXPECT_EQ(l.out_end, 8u + 16u + 12u) << "the output array is written back";
  // A short first array must not shift the second: the sum must match exactly.
  EXPECT_EQ(LayOutArrays(kTable[1], Via::kDirect, hdr, {8 + 1 * 8 + 3 * 4}).err,
            NvError::kCountMismatch);
}

TEST(ArrayLayout, RestTakesWholeElements) {
  ArrayLayout l = LayOutArrays(kTable[2], Via::kDirect, {}, {5 * 8});
  ASSERT_EQ(l.err, NvError::kSuccess);
  EXPECT_EQ(l.slices[0].count, 5u);
  EXPECT_EQ(LayOutArrays(kTable[2], Via::kDirect, {}, {5 * 8 + 3}).err, NvError::kInvalidSize);
  EXPECT_EQ(LayOutArrays(kTable[2], Via::kDirect, {}, {101 * 8}).err, NvError::kBadParameter);
}

TEST(ArrayLayout, SecondInputBufferMustHoldExactlyTheEntries) {
  auto hdr = Bytes({3, 0});
  EXPECT_EQ(LayOutArrays(kTable[3], Via::kIoctl2, hdr, {8, 24}).err, NvError::kSuccess);
  EXPECT_EQ(LayOutArrays(kTable[3], Via::kIoctl2, hdr, {8, 32}).err, NvError::kCountMismatch);
  EXPECT_EQ(LayOutArrays(kTable[3], Via::kIoctl2, hdr, {8, 16}).err, NvError::kCountMismatch);
  EXPECT_EQ(LayOutArrays(kTable[3], Via::kDirect, hdr, {8}).err, NvError::kCountMismatch)
      << "no second buffer: a nonzero count cannot be served";
  EXPECT_EQ(LayOutArrays(kTable[3], Via::kDirect, Bytes({0, 0}), {8}).err, NvError::kSuccess);
}

TEST(ArrayLayout, SecondOutputBuffer) {
  auto hdr = Bytes({32, 0});
  EXPECT_EQ(LayOutArrays(kTable[4], Via::kIoctl3, hdr, {8, 0, 32}).out2_bytes, 32u);
  EXPECT_EQ(LayOutArrays(kTable[4], Via::kIoctl3, hdr, {8, 0, 16}).err, NvError::kInvalidSize);
  ArrayLayout plain = LayOutArrays(kTable[4], Via::kDirect, hdr, {8});
  EXPECT_EQ(plain.err, NvError::kSuccess);
  EXPECT_EQ(plain.slices[0].count, 0u) << "a plain ioctl carries no second output";
}

// ---- The engine on the synthetic device ----

constexpr uint8_t kMagic[] = {0xF0};
const DeviceDesc kDevice{DeviceId::kNvhostCtrl, "/dev/test", kNoPermissionBit, kMagic, kTable};

class RecordingBackend : public hostshim::DeviceBackend {
 public:
  hostshim::Result Ioctl(hostshim::Call& call) override {
    ++calls;
    last_arrays.clear();
    for (auto a : call.arrays) last_arrays.emplace_back(a.begin(), a.end());
    if (call.desc.code == kWith2) {
      uint32_t sum = 0;
      for (const uint32_t& w : call.Array<uint32_t>(0)) sum += w;
      std::memcpy(call.arg.data() + 4, &sum, 4);
    }
    if (call.desc.code == kWith3 && !call.out2.empty()) {
      for (size_t i = 0; i < call.out2.size(); ++i) call.out2[i] = static_cast<uint8_t>(i + 1);
    }
    if (call.desc.code == kPair) {
      for (uint32_t& w : call.Array<uint32_t>(1)) w = 0xAB;
    }
    return hostshim::Result::Done(NvError::kSuccess);
  }
  int calls = 0;
  std::vector<std::vector<uint8_t>> last_arrays;
};

class Memory : public proxy::CallContext {
 public:
  std::map<uint64_t, std::vector<uint8_t>> regions;
  int reads = 0, writes = 0;
  bool Read(uint64_t addr, std::span<uint8_t> dst) override {
    ++reads;
    uint8_t* p = Find(addr, dst.size());
    if (!p) return false;
    std::memcpy(dst.data(), p, dst.size());
    return true;
  }
  bool Write(uint64_t addr, std::span<const uint8_t> src) override {
    ++writes;
    uint8_t* p = Find(addr, src.size());
    if (!p) return false;
    std::memcpy(p, src.data(), src.size());
    return true;
  }
  bool StillValid() override { return true; }
  std::shared_ptr<hostshim::Continuation> Detach(std::string_view, std::vector<uint8_t>,
                                                 proxy::Finisher) override {
    return nullptr;
  }
  int PlaceFd(int, bool) override { return -ENOSYS; }
  pid_t tid() const override { return 1; }
  uint8_t* Find(uint64_t addr, size_t n) {
    for (auto& [base, b] : regions)
      if (addr >= base && addr + n <= base + b.size()) return b.data() + (addr - base);
    return nullptr;
  }
};

class EngineArrays : public ::testing::Test {
 protected:
  proxy::GuestConfig config;
  RecordingBackend* backend = new RecordingBackend;
  proxy::Session session{kDevice, std::unique_ptr<hostshim::DeviceBackend>(backend), config};
  Memory mem;
  // An nvdrv-style answer that records the NvError instead of mapping it to errno.
  NvError seen = NvError::kSuccess;
  proxy::Answer record = [this](NvError e, proxy::GuestIo&) {
    seen = e;
    return 0;
  };
};

TEST_F(EngineArrays, InlineArraysReachTheBackendAndOutputsComeBack) {
  auto arg = Bytes({2, 3, 0x11, 0x12, 0x21, 0x22, 7, 7, 7});
  mem.regions[0x1000] = arg;
  proxy::IoctlRequest req = proxy::IoctlRequest::Direct(Sized(kPair, 36), 0x1000);
  EXPECT_EQ(proxy::RunIoctl(session, req, mem).err, 0);
  ASSERT_EQ(backend->last_arrays.size(), 2u);
  EXPECT_EQ(backend->last_arrays[0], Bytes({0x11, 0x12, 0x21, 0x22}));
  EXPECT_EQ(mem.regions[0x1000], Bytes({2, 3, 0x11, 0x12, 0x21, 0x22, 0xAB, 0xAB, 0xAB}));
  EXPECT_EQ(mem.reads, 1) << "header and arrays are copied in one read";
  EXPECT_EQ(mem.writes, 1);
}

TEST_F(EngineArrays, MismatchedCountIsEinvalAndNeverReachesTheBackend) {
  mem.regions[0x1000] = Bytes({2, 4, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(
      proxy::RunIoctl(session, proxy::IoctlRequest::Direct(Sized(kPair, 36), 0x1000), mem).err,
      EINVAL);
  EXPECT_EQ(backend->calls, 0);
  EXPECT_EQ(mem.writes, 0);
}

TEST_F(EngineArrays, BufferShorterThanTheEncodedSizeIsEfault) {
  mem.regions[0x1000] = Bytes({2, 3, 1, 2, 3, 4, 5, 6});  // 32 of 36 bytes mapped
  EXPECT_EQ(
      proxy::RunIoctl(session, proxy::IoctlRequest::Direct(Sized(kPair, 36), 0x1000), mem).err,
      EFAULT);
  EXPECT_EQ(backend->calls, 0);
}

TEST_F(EngineArrays, Ioctl2ReadsTheSecondBufferOnce) {
  mem.regions[0x1000] = Bytes({2, 0});
  mem.regions[0x2000] = Bytes({1, 2, 3, 4});
  mem.regions[0x3000] = Bytes({0, 0});
  proxy::IoctlRequest req{kWith2, Via::kIoctl2, {0x1000, 8, 0x3000, 8, 0x2000, 16, 0, 0}};
  EXPECT_EQ(proxy::RunIoctl(session, req, mem, record).err, 0);
  EXPECT_EQ(seen, NvError::kSuccess);
  EXPECT_EQ(mem.regions[0x3000], Bytes({2, 10})) << "outputs go to the output buffer";
  EXPECT_EQ(mem.regions[0x1000], Bytes({2, 0})) << "the input buffer is not written";
  EXPECT_EQ(mem.reads, 2);
  // The same ioctl through Ioctl3 is not something it takes.
  proxy::IoctlRequest wrong{kWith2, Via::kIoctl3, {0x1000, 8, 0x3000, 8, 0, 0, 0x2000, 16}};
  EXPECT_EQ(proxy::RunIoctl(session, wrong, mem, record).err, 0);
  EXPECT_EQ(seen, NvError::kNotSupported);
  // A second buffer larger than the count says.
  proxy::IoctlRequest roomy{kWith2, Via::kIoctl2, {0x1000, 8, 0x3000, 8, 0x2000, 24, 0, 0}};
  mem.regions[0x2000].resize(24);
  EXPECT_EQ(proxy::RunIoctl(session, roomy, mem, record).err, 0);
  EXPECT_EQ(seen, NvError::kCountMismatch);
}

TEST_F(EngineArrays, Ioctl3FillsTheSecondOutput) {
  mem.regions[0x1000] = Bytes({32, 0});
  mem.regions[0x4000] = std::vector<uint8_t>(40, 0xEE);
  proxy::IoctlRequest req{kWith3, Via::kIoctl3, {0x1000, 8, 0x1000, 8, 0, 0, 0x4000, 40}};
  EXPECT_EQ(proxy::RunIoctl(session, req, mem, record).err, 0);
  EXPECT_EQ(seen, NvError::kSuccess);
  EXPECT_EQ(mem.regions[0x4000][0], 1);
  EXPECT_EQ(mem.regions[0x4000][31], 32);
  EXPECT_EQ(mem.regions[0x4000][32], 0xEE) << "nothing past the regions is written";
}

TEST_F(EngineArrays, InvalidSizeWhenTheBuffersAreSmallerThanTheCode) {
  mem.regions[0x1000] = Bytes({32, 0});
  proxy::IoctlRequest req{kWith3, Via::kIoctl, {0x1000, 4, 0x1000, 8}};
  EXPECT_EQ(proxy::RunIoctl(session, req, mem, record).err, 0);
  EXPECT_EQ(seen, NvError::kInvalidSize);
  EXPECT_EQ(mem.reads, 0);
}

TEST_F(EngineArrays, FixedAnswersNeedNoBackend) {
  mem.regions[0x1000] = std::vector<uint8_t>(8, 0x5A);
  EXPECT_EQ(proxy::RunIoctl(session, proxy::IoctlRequest::Direct(kNotSupported, 0x1000), mem).err,
            EOPNOTSUPP);
  EXPECT_EQ(backend->calls, 0);
  EXPECT_EQ(mem.regions[0x1000], std::vector<uint8_t>(8, 0x5A));
}

TEST_F(EngineArrays, UnknownCodeThroughTheServiceIsNotImplemented) {
  mem.regions[0x1000] = Bytes({0, 0});
  proxy::IoctlRequest req{0xC008F0EE, Via::kIoctl, {0x1000, 8, 0x1000, 8}};
  EXPECT_EQ(proxy::RunIoctl(session, req, mem, record).err, 0);
  EXPECT_EQ(seen, NvError::kNotImplemented);
  EXPECT_EQ(proxy::RunIoctl(session, proxy::IoctlRequest::Direct(0xC008F0EE, 0x1000), mem).err,
            ENOTTY);
}

}  // namespace
}  // namespace nvsentry
