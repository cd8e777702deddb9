// Block-linear surfaces: the layout's arithmetic, and the DMA copy engine and inline-to-memory
// moving bytes into and out of it. Expected addresses are computed here from the Tegra X1 TRM's
// block-linear formula (as NVIDIA documents it, and as the public texture tools quote it), not
// from the implementation: within a GOB, ((x % 64) / 32) * 256 + ((y % 8) / 2) * 64 +
// ((x % 32) / 16) * 32 + (y % 2) * 16 + x % 16; GOBs down a block, blocks across the width in
// GOBs, then down, then through the depth.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "gtest/gtest.h"
#include "hostshim/sim/engines/command_processor.h"
#include "hostshim/sim/memory/block_linear.h"
#include "tests/unit/fake_gpu_memory.h"

namespace nvsentry::hostshim::sim {
namespace {

using testing::FakeGpuMemory;
using Stop = RunResult::Stop;

// The TRM's formula, written out on its own.
uint64_t TrmOffset(uint64_t x, uint64_t y, uint64_t z, uint64_t width_bytes, uint64_t height,
                   uint32_t bh_log2, uint32_t bd_log2 = 0) {
  const uint64_t gobs_high = 1ull << bh_log2, gobs_deep = 1ull << bd_log2;
  const uint64_t width_in_gobs = (width_bytes + 63) / 64;
  const uint64_t block = 512 * gobs_high * gobs_deep;
  const uint64_t blocks_high = (height + 8 * gobs_high - 1) / (8 * gobs_high);
  const uint64_t layer = blocks_high * width_in_gobs * block;
  const uint64_t gob = (z / gobs_deep) * layer + (y / (8 * gobs_high)) * width_in_gobs * block +
                       (x / 64) * block + (z % gobs_deep) * gobs_high * 512 +
                       ((y % (8 * gobs_high)) / 8) * 512;
  return gob + ((x % 64) / 32) * 256 + ((y % 8) / 2) * 64 + ((x % 32) / 16) * 32 + (y % 2) * 16 +
         (x % 16);
}

TEST(BlockLinearLayout, GobSwizzleIsTheTrmFormula) {
  for (uint32_t y = 0; y < 8; ++y)
    for (uint32_t x = 0; x < 64; ++x) EXPECT_EQ(GobOffset(x, y), TrmOffset(x, y, 0, 64, 8, 0));
}

TEST(BlockLinearLayout, HandTableTwoGobsWideOneGobBlocks) {
  // 128 bytes wide (2 GOBs), 16 rows, blocks one GOB tall: GOB (gx, gy) at (gy * 2 + gx) * 512.
  const BlockLinearSurface s{.width = 128, .height = 16};
  struct {
    uint64_t x, y, offset;
  } table[] = {
      {0, 0, 0},      {15, 0, 15},  {16, 0, 32},   {31, 0, 47},    {32, 0, 256}, {48, 0, 288},
      {0, 1, 16},     {17, 1, 49},  {0, 2, 64},    {0, 7, 208},    {63, 7, 511}, {64, 0, 512},
      {127, 7, 1023}, {0, 8, 1024}, {64, 8, 1536}, {100, 9, 1812},  // GOB (1, 1) at 1536, then 256
                                                                    // (x5) + 16 (y0) + 4
  };
  for (const auto& t : table) {
    EXPECT_EQ(s.Offset(t.x, t.y, 0), t.offset) << t.x << "," << t.y;
    EXPECT_EQ(TrmOffset(t.x, t.y, 0, 128, 16, 0), t.offset) << "the test's own formula";
  }
  // Blocks two GOBs tall: row 8 is the block's second GOB; the next GOB column a block on.
  const BlockLinearSurface tall{.width = 128, .height = 16, .block_height_log2 = 1};
  EXPECT_EQ(tall.Offset(0, 8, 0), 512u);
  EXPECT_EQ(tall.Offset(64, 0, 0), 1024u);
  // Blocks two GOBs deep: slice 1 is the block's second GOB, slice 2 the next layer of blocks.
  const BlockLinearSurface deep{
      .width = 64, .height = 8, .depth = 4, .block_height_log2 = 0, .block_depth_log2 = 1};
  EXPECT_EQ(deep.Offset(0, 0, 1), 512u);
  EXPECT_EQ(deep.Offset(0, 0, 2), 1024u);
  EXPECT_EQ(deep.Offset(5, 3, 3), 1536u + TrmOffset(5, 3, 0, 64, 8, 0));
  EXPECT_EQ(deep.SizeBytes(), 2048u);
}

TEST(BlockLinearLayout, PiecesCoverTheBoxOnceAtTheFormulasAddresses) {
  for (uint32_t bh = 0; bh <= 2; ++bh) {
    const BlockLinearSurface s{
        .width = 200, .height = 40, .depth = 3, .block_height_log2 = bh, .block_depth_log2 = 1};
    const SurfaceBox box{.x = 13, .y = 5, .z = 2, .width = 150, .rows = 29};
    ASSERT_TRUE(InsideSurface(s, box));
    std::vector<int> seen(box.width * box.rows);
    ForEachPiece(s, box, [&](uint64_t off, uint64_t at, uint32_t n) {
      ASSERT_LE(n, 16u);
      for (uint32_t i = 0; i < n; ++i) {
        const uint64_t x = box.x + (at + i) % box.width, y = box.y + (at + i) / box.width;
        ASSERT_EQ(off + i, TrmOffset(x, y, box.z, 200, 40, bh, 1)) << x << "," << y;
        ++seen[at + i];
      }
    });
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(seen.size()));
  }
  const BlockLinearSurface s{.width = 100, .height = 10};  // 2 GOBs by 2 GOB rows
  EXPECT_TRUE(InsideSurface(s, SurfaceBox{.x = 0, .y = 0, .width = 128, .rows = 16}));
  EXPECT_FALSE(InsideSurface(s, SurfaceBox{.x = 1, .y = 0, .width = 128, .rows = 1}));
  EXPECT_FALSE(InsideSurface(s, SurfaceBox{.x = 0, .y = 9, .width = 1, .rows = 8}));
  EXPECT_FALSE(InsideSurface(s, SurfaceBox{.x = 0, .y = 0, .z = 1, .width = 1, .rows = 1}));
}

// --- the engines, on hand-built pushbuffers (encoding as sim_command_processor_test.cc) ---
uint32_t Cmd(uint32_t mode, uint32_t subch, uint32_t method_byte, uint32_t count) {
  return (mode << 29) | (count << 16) | (subch << 13) | (method_byte >> 2);
}
uint32_t Inc(uint32_t subch, uint32_t m, uint32_t n) { return Cmd(1, subch, m, n); }
uint32_t NonInc(uint32_t subch, uint32_t m, uint32_t n) { return Cmd(3, subch, m, n); }

constexpr uint32_t k3DSub = 0, kI2MSub = 2, kDmaSub = 4;
// DMA (clb0b5.h): LAUNCH_DMA NON_PIPELINED, SRC/DST_MEMORY_LAYOUT PITCH bits, MULTI_LINE_ENABLE,
// REMAP_ENABLE; the block-linear registers from SET_DST_BLOCK_SIZE and SET_SRC_BLOCK_SIZE.
constexpr uint32_t kLaunch = 0x300, kOffsetIn = 0x400, kRemapConstA = 0x700, kDstBlock = 0x70C,
                   kSrcBlock = 0x728;
constexpr uint32_t kCopy = 2 | (1u << 9), kSrcPitch = 1u << 7, kDstPitch = 1u << 8,
                   kRemap = 1u << 10;
// Inline-to-memory (cla140.h, the same in clb197.h).
constexpr uint32_t kI2MLineLength = 0x180, kI2MBlock = 0x194, kI2MLaunch = 0x1B0, kI2MData = 0x1B4,
                   kI2MSemA = 0x1DC;

struct Surface {
  uint64_t va;
  uint32_t width, height, depth = 1, bh = 0, bd = 0;
};

class SimBlockLinear : public ::testing::Test {
 protected:
  static constexpr uint64_t kPitchVa = 0x2000'0000, kBlVa = 0x3000'0000, kBl2Va = 0x3100'0000,
                            kOutVa = 0x4000'0000;

  SimBlockLinear() {
    pitch_ = &mem_.Map(kPitchVa, 1 << 20);
    bl_ = &mem_.Map(kBlVa, 1 << 20);
    bl2_ = &mem_.Map(kBl2Va, 1 << 20);
    out_ = &mem_.Map(kOutVa, 1 << 20);
    ChannelEnv env;
    env.memory = &mem_;
    env.syncpoints = &sp_;
    env.syncpoint_id = 21;
    env.gpu_time_ns = [] { return uint64_t{1}; };
    cp_ = std::make_unique<CommandProcessor>(std::move(env));
  }

  static void Append(std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
    a.insert(a.end(), b.begin(), b.end());
  }
  static std::vector<uint32_t> Lines(uint64_t src, uint64_t dst, uint32_t pitch_in,
                                     uint32_t pitch_out, uint32_t length, uint32_t lines) {
    return {Inc(kDmaSub, kOffsetIn, 8),
            static_cast<uint32_t>(src >> 32),
            static_cast<uint32_t>(src),
            static_cast<uint32_t>(dst >> 32),
            static_cast<uint32_t>(dst),
            pitch_in,
            pitch_out,
            length,
            lines};
  }
  // SET_*_BLOCK_SIZE .. SET_*_ORIGIN for `s`, with origin (x, y) and layer z.
  static std::vector<uint32_t> BlockRegs(uint32_t first, const Surface& s, uint32_t x, uint32_t y,
                                         uint32_t z = 0) {
    return {Inc(kDmaSub, first, 6), (s.bh << 4) | (s.bd << 8), s.width, s.height, s.depth, z,
            x | (y << 16)};
  }
  RunResult Run(std::vector<uint32_t> pb) {
    std::vector<uint32_t> words = {Inc(kDmaSub, 0, 1), 0xB0B5, Inc(kI2MSub, 0, 1), 0xA140,
                                   Inc(k3DSub, 0, 1),  0xB197};
    Append(words, pb);
    return cp_->RunWords(words);
  }
  // Copies a box of a pitch surface (pitch `pitch`, at kPitchVa + from) into block-linear `s` at
  // (x, y), or back, or between two block-linear surfaces.
  RunResult PitchToBl(uint64_t from, uint32_t pitch, const Surface& s, uint32_t x, uint32_t y,
                      uint32_t length, uint32_t lines) {
    std::vector<uint32_t> pb = Lines(kPitchVa + from, s.va, pitch, 0, length, lines);
    Append(pb, BlockRegs(kDstBlock, s, x, y));
    Append(pb, {Inc(kDmaSub, kLaunch, 1), kCopy | kSrcPitch});
    return Run(pb);
  }
  RunResult BlToPitch(const Surface& s, uint32_t x, uint32_t y, uint64_t to, uint32_t pitch,
                      uint32_t length, uint32_t lines) {
    std::vector<uint32_t> pb = Lines(s.va, kOutVa + to, 0, pitch, length, lines);
    Append(pb, BlockRegs(kSrcBlock, s, x, y));
    Append(pb, {Inc(kDmaSub, kLaunch, 1), kCopy | kDstPitch});
    return Run(pb);
  }

  FakeGpuMemory mem_;
  std::vector<uint8_t>*pitch_, *bl_, *bl2_, *out_;
  Syncpoints sp_;
  std::unique_ptr<CommandProcessor> cp_;
};

uint8_t Pattern(uint64_t i) { return static_cast<uint8_t>((i * 131 + i / 251) % 255 + 1); }

TEST_F(SimBlockLinear, PitchToBlockLinearPutsEachByteAtTheFormulasAddress) {
  // A 128x16 surface (2 GOBs wide, blocks one GOB tall), written whole from a pitch copy.
  for (size_t i = 0; i < 128 * 16; ++i) (*pitch_)[i] = Pattern(i);
  const Surface s{.va = kBlVa, .width = 128, .height = 16};
  ASSERT_EQ(PitchToBl(0, 128, s, 0, 0, 128, 16).stop, Stop::kDone);
  for (uint64_t y = 0; y < 16; ++y) {
    for (uint64_t x = 0; x < 128; ++x) {
      ASSERT_EQ((*bl_)[TrmOffset(x, y, 0, 128, 16, 0)], Pattern(y * 128 + x)) << x << "," << y;
    }
  }
  // The hand table's corners: GOB (1, 1) starts at 1536; (100, 9) is at 1812.
  EXPECT_EQ((*bl_)[1536], Pattern(8 * 128 + 64));
  EXPECT_EQ((*bl_)[1812], Pattern(9 * 128 + 100));
  EXPECT_EQ((*bl_)[2048], 0) << "nothing past the surface";
  EXPECT_EQ(cp_->stats().dma_bytes, 128u * 16);
}

TEST_F(SimBlockLinear, RoundTripsThroughEveryBlockHeightWithOddBoxes) {
  for (size_t i = 0; i < (1u << 20); ++i) (*pitch_)[i] = Pattern(i);
  struct Box {
    uint32_t width, height, x, y, length, lines;
  } boxes[] = {{100, 37, 13, 5, 61, 29},
               {37, 3, 0, 0, 37, 3},
               {300, 70, 250, 1, 49, 69},
               {64, 8, 63, 7, 1, 1}};
  for (uint32_t bh = 0; bh <= 5; ++bh) {
    for (const Box& b : boxes) {
      std::fill(bl_->begin(), bl_->end(), 0xEE);
      std::fill(out_->begin(), out_->end(), 0xDD);
      const Surface s{.va = kBlVa, .width = b.width, .height = b.height, .bh = bh};
      constexpr uint32_t kPitch = 333, kOutPitch = 401;
      ASSERT_EQ(PitchToBl(7, kPitch, s, b.x, b.y, b.length, b.lines).stop, Stop::kDone);
      ASSERT_EQ(BlToPitch(s, b.x, b.y, 3, kOutPitch, b.length, b.lines).stop, Stop::kDone);
      for (uint32_t l = 0; l < b.lines; ++l) {
        for (uint32_t i = 0; i < b.length; ++i) {
          ASSERT_EQ((*out_)[3 + l * kOutPitch + i], (*pitch_)[7 + l * kPitch + i])
              << "bh " << bh << " line " << l << " byte " << i;
          ASSERT_EQ((*bl_)[TrmOffset(b.x + i, b.y + l, 0, b.width, b.height, bh)],
                    (*pitch_)[7 + l * kPitch + i]);
        }
        EXPECT_EQ((*out_)[3 + l * kOutPitch + b.length], 0xDD) << "past the line";
      }
      // Only the box's bytes of the surface were written.
      std::vector<bool> in_box(bl_->size());
      for (uint32_t l = 0; l < b.lines; ++l)
        for (uint32_t i = 0; i < b.length; ++i)
          in_box[TrmOffset(b.x + i, b.y + l, 0, b.width, b.height, bh)] = true;
      for (size_t o = 0; o < bl_->size(); ++o) {
        if (in_box[o]) continue;
        ASSERT_EQ((*bl_)[o], 0xEE) << "bh " << bh << " offset " << o;
      }
    }
  }
}

TEST_F(SimBlockLinear, BlockLinearToBlockLinearAcrossLayoutsAndSlices) {
  for (size_t i = 0; i < 4096; ++i) (*pitch_)[i] = Pattern(i);
  // Source: 96x24, blocks 2 GOBs tall; destination: 160x40x4, blocks 4 tall and 2 deep, layer 3.
  const Surface a{.va = kBlVa, .width = 96, .height = 24, .bh = 1};
  const Surface b{.va = kBl2Va, .width = 160, .height = 40, .depth = 4, .bh = 2, .bd = 1};
  ASSERT_EQ(PitchToBl(0, 96, a, 0, 0, 96, 24).stop, Stop::kDone);
  std::vector<uint32_t> pb = Lines(a.va, b.va, 0, 0, 70, 20);
  Append(pb, BlockRegs(kSrcBlock, a, 20, 3));
  Append(pb, BlockRegs(kDstBlock, b, 75, 17, 3));
  Append(pb, {Inc(kDmaSub, kLaunch, 1), kCopy});
  ASSERT_EQ(Run(pb).stop, Stop::kDone);
  for (uint32_t l = 0; l < 20; ++l) {
    for (uint32_t i = 0; i < 70; ++i) {
      ASSERT_EQ((*bl2_)[TrmOffset(75 + i, 17 + l, 3, 160, 40, 2, 1)],
                Pattern((3 + l) * 96 + 20 + i))
          << l << " " << i;
    }
  }
}

TEST_F(SimBlockLinear, RemapCountsElementsOnTheBlockLinearSide) {
  // 4-byte elements (one 4-byte component): LINE_LENGTH_IN, WIDTH and ORIGIN.X count elements.
  for (size_t i = 0; i < 4096; ++i) (*pitch_)[i] = Pattern(i);
  const Surface s{.va = kBlVa, .width = 40, .height = 16};  // 160 bytes: 3 GOBs
  std::vector<uint32_t> pb = Lines(kPitchVa, s.va, 64, 0, 16, 4);
  Append(pb, BlockRegs(kDstBlock, s, 9, 2));
  Append(pb, {Inc(kDmaSub, kRemapConstA, 3), 0, 0, (3u << 16) /* X<-X, 4-byte, 1 src, 1 dst */,
              Inc(kDmaSub, kLaunch, 1), kCopy | kSrcPitch | kRemap});
  ASSERT_EQ(Run(pb).stop, Stop::kDone);
  for (uint32_t l = 0; l < 4; ++l)
    for (uint32_t i = 0; i < 64; ++i)
      ASSERT_EQ((*bl_)[TrmOffset(36 + i, 2 + l, 0, 160, 16, 0)], Pattern(l * 64 + i));
}

TEST_F(SimBlockLinear, InlineToMemoryWritesABlockLinearDestination) {
  // 20 bytes a line, 10 lines from (8, 3) of a 128x16 surface with blocks 2 GOBs tall: the lines
  // cross a GOB row, and the data comes in two commands that split a line.
  const uint32_t bh = 1;
  std::vector<uint32_t> data(50);
  std::iota(data.begin(), data.end(), 0x01020304u /* no zero byte */);
  const uint64_t sem = kOutVa + 0x100;
  for (uint32_t sub : {kI2MSub, k3DSub}) {
    std::fill(bl_->begin(), bl_->end(), 0);
    std::vector<uint32_t> pb = {Inc(sub, kI2MLineLength, 5),  20, 10, uint32_t{kBlVa >> 32},
                                static_cast<uint32_t>(kBlVa), 0};
    Append(pb, {Inc(sub, kI2MBlock, 7), bh << 4, 128, 16, 1, 0, 8, 3});
    Append(pb, {Inc(sub, kI2MSemA, 3), static_cast<uint32_t>(sem >> 32), static_cast<uint32_t>(sem),
                0x77});
    Append(pb, {Inc(sub, kI2MLaunch, 1), (2u << 4) | (1u << 12) /* release one word */,
                NonInc(sub, kI2MData, 22)});
    pb.insert(pb.end(), data.begin(), data.begin() + 22);
    Append(pb, {NonInc(sub, kI2MData, 28)});
    pb.insert(pb.end(), data.begin() + 22, data.end());
    ASSERT_EQ(Run(pb).stop, Stop::kDone);
    const uint8_t* bytes = reinterpret_cast<const uint8_t*>(data.data());
    for (uint32_t l = 0; l < 10; ++l)
      for (uint32_t i = 0; i < 20; ++i)
        ASSERT_EQ((*bl_)[TrmOffset(8 + i, 3 + l, 0, 128, 16, bh)], bytes[l * 20 + i])
            << "subchannel " << sub << " line " << l << " byte " << i;
    EXPECT_EQ(static_cast<size_t>(std::count(bl_->begin(), bl_->end(), 0)), bl_->size() - 200);
    uint32_t released;
    std::memcpy(&released, out_->data() + 0x100, 4);
    EXPECT_EQ(released, 0x77u);
    std::memset(out_->data() + 0x100, 0, 4);
  }
}

TEST_F(SimBlockLinear, InlineToMemoryOutsideItsSurfaceIsRefused) {
  std::vector<uint32_t> pb = {Inc(kI2MSub, kI2MLineLength, 5), 20, 10, uint32_t{kBlVa >> 32},
                              static_cast<uint32_t>(kBlVa),    0};
  Append(pb, {Inc(kI2MSub, kI2MBlock, 7), 0, 64, 8, 1, 0, 50, 0, Inc(kI2MSub, kI2MLaunch, 1), 0});
  RunResult r = Run(pb);
  ASSERT_EQ(r.stop, Stop::kError);
  EXPECT_EQ(r.error_class, 0xA140u);
  EXPECT_EQ(r.error_method, kI2MLaunch);
}

TEST_F(SimBlockLinear, CopyOutsideTheSurfaceOrWithAnUnknownBlockIsRefused) {
  const Surface s{.va = kBlVa, .width = 64, .height = 8};
  RunResult r = PitchToBl(0, 64, s, 1, 0, 64, 1);  // one byte past the GOB
  ASSERT_EQ(r.stop, Stop::kError);
  EXPECT_EQ(r.error_class, 0xB0B5u);
  EXPECT_EQ(r.error_method, kLaunch);
  const Surface huge_block{.va = kBlVa, .width = 64, .height = 8, .bh = 6};
  cp_->Reset();
  EXPECT_EQ(PitchToBl(0, 64, huge_block, 0, 0, 64, 1).stop, Stop::kError);
}

TEST_F(SimBlockLinear, CopyPastTheMappingFaultsAsAPitchCopyDoes) {
  // 256 bytes wide (4 GOBs), blocks 4 GOBs tall (2 KiB): a row of blocks is 8 KiB, and only the
  // first 4 KiB is mapped. The first 8 rows' third GOB (at 4096) is past the mapping.
  constexpr uint64_t kShortVa = 0x5000'0000;
  mem_.Map(kShortVa, 4096);
  const Surface s{.va = kShortVa, .width = 256, .height = 32, .bh = 2};
  RunResult bl = PitchToBl(0, 256, s, 0, 0, 256, 8);
  ASSERT_EQ(bl.stop, Stop::kFault);
  EXPECT_EQ(bl.fault.kind, MmuFault::Kind::kUnmapped);
  EXPECT_EQ(bl.fault.va, kShortVa + 4096);
  EXPECT_TRUE(bl.fault.write);
  // The same kind of fault as a pitch copy running off the same mapping.
  cp_->Reset();
  std::vector<uint32_t> pb = Lines(kPitchVa, kShortVa, 0, 0, 8192, 1);
  Append(pb, {Inc(kDmaSub, kLaunch, 1), kCopy | kSrcPitch | kDstPitch});
  RunResult pitch = Run(pb);
  ASSERT_EQ(pitch.stop, Stop::kFault);
  EXPECT_EQ(pitch.fault.kind, bl.fault.kind);
  EXPECT_EQ(pitch.fault.va, bl.fault.va);
  EXPECT_EQ(pitch.fault.write, bl.fault.write);
  // Reading: the same address, as a read.
  cp_->Reset();
  RunResult read = BlToPitch(s, 0, 0, 0, 256, 256, 8);
  ASSERT_EQ(read.stop, Stop::kFault);
  EXPECT_EQ(read.fault.kind, MmuFault::Kind::kUnmapped);
  EXPECT_EQ(read.fault.va, kShortVa + 4096);
  EXPECT_FALSE(read.fault.write);
  // A box inside the mapped GOBs copies.
  cp_->Reset();
  EXPECT_EQ(PitchToBl(0, 256, s, 0, 0, 128, 32).stop, Stop::kDone);
  // Inline-to-memory stops the same way.
  cp_->Reset();
  pb = {Inc(kI2MSub, kI2MLineLength, 5), 256, 1, static_cast<uint32_t>(kShortVa >> 32),
        static_cast<uint32_t>(kShortVa), 0};
  Append(pb, {Inc(kI2MSub, kI2MBlock, 7), 2u << 4, 256, 32, 1, 0, 0, 0, Inc(kI2MSub, kI2MLaunch, 1),
              0, NonInc(kI2MSub, kI2MData, 64)});
  pb.resize(pb.size() + 64, 0xAB);
  RunResult i2m = Run(pb);
  ASSERT_EQ(i2m.stop, Stop::kFault);
  EXPECT_EQ(i2m.fault.kind, MmuFault::Kind::kUnmapped);
  EXPECT_EQ(i2m.fault.va, kShortVa + 4096);
  EXPECT_TRUE(i2m.fault.write);
}

}  // namespace
}  // namespace nvsentry::hostshim::sim
