// Method offsets and field layouts of the GM20B classes the command processor models, as byte
// offsets (the command word carries offset / 4). Facts from NVIDIA's public class headers
// (open-gpu-doc: clb06f.h, clb197.h, clb0b5.h, cla140.h); docs/simulated-gpu.md lists them.
#pragma once

#include <cstdint>

namespace nvsentry::hostshim::sim::methods {

constexpr uint32_t Index(uint32_t byte_offset) { return byte_offset >> 2; }

// Extracts bits hi:lo of v.
constexpr uint32_t Bits(uint32_t v, unsigned hi, unsigned lo) {
  return (v >> lo) & ((hi - lo == 31) ? 0xFFFFFFFFu : ((1u << (hi - lo + 1)) - 1));
}

// Classes of the GM20B.
constexpr uint32_t kClassHost = 0xB06F, kClass2D = 0x902D, kClass3D = 0xB197,
                   kClassCompute = 0xB1C0, kClassI2M = 0xA140, kClassDma = 0xB0B5;

// Methods below this index go to the host class whatever the subchannel.
constexpr uint32_t kFirstEngineMethod = 0x40;
constexpr uint32_t kNumMethods = 0x1000;  // the command word's 12-bit method index

namespace host {
constexpr uint32_t kSetObject = 0x00, kIllegal = 0x04, kNop = 0x08, kSemaphoreA = 0x10,
                   kSemaphoreB = 0x14, kSemaphoreC = 0x18, kSemaphoreD = 0x1C,
                   kNonStallInterrupt = 0x20, kFbFlush = 0x24, kMemOpA = 0x28, kMemOpB = 0x2C,
                   kMemOpC = 0x30, kMemOpD = 0x34, kSetReference = 0x50, kSyncpointA = 0x70,
                   kSyncpointB = 0x74, kWfi = 0x78, kYield = 0x80;
// SEMAPHORED
constexpr uint32_t kSemOpAcquire = 1, kSemOpRelease = 2, kSemOpAcqGeq = 4, kSemOpAcqAnd = 8,
                   kSemOpReduction = 0x10;
constexpr uint32_t kSemReleaseSize4Byte = 1u << 24;  // clear: 16-byte release
constexpr unsigned kSemReductionHi = 30, kSemReductionLo = 27;
constexpr uint32_t kSemFormatUnsigned = 1u << 31;
// SYNCPOINTB
constexpr uint32_t kSyncptOpWait = 0, kSyncptOpIncr = 1, kSyncptOpBaseAdd = 2,
                   kSyncptOpBaseWrite = 3;
constexpr unsigned kSyncptIndexHi = 15, kSyncptIndexLo = 8;
}  // namespace host

// Semaphore reduction operations (host SEMAPHORED, DMA LAUNCH_DMA, 3D report D).
enum class Reduction : uint32_t {
  kMin = 0,
  kMax = 1,
  kXor = 2,
  kAnd = 3,
  kOr = 4,
  kAdd = 5,
  kInc = 6,
  kDec = 7
};

// Methods every graphics-engine class (2D, 3D, compute, inline-to-memory) has.
namespace graphics {
constexpr uint32_t kSetNotifyA = 0x104, kSetNotifyB = 0x108, kNotify = 0x10C, kWaitForIdle = 0x110;
}  // namespace graphics

namespace threed {
constexpr uint32_t kNoOperation = 0x100;  // also in compute, I2M and DMA
// The macro method expander (mme.h).
constexpr uint32_t kMmeCodePointer = 0x114, kMmeCode = 0x118, kMmeStartPointer = 0x11C,
                   kMmeStart = 0x120;
constexpr uint32_t kCallMmeMacro = 0x3800;      // CALL_MME_MACRO(j) at + 8j, CALL_MME_DATA(j) + 4
constexpr uint32_t kMmeShadowScratch = 0x3400;  // SET_MME_SHADOW_SCRATCH(0): the firmware's answer
constexpr uint32_t kSetFalcon04 = 0x2310;       // firmware method 4: a masked PGRAPH write
// INCREMENT_SYNC_POINT: INDEX 11:0, CLEAN_L2 bit 16, CONDITION bit 20 (stream-out or ROP writes
// done: every earlier method has completed in the simulator either way).
constexpr uint32_t kIncrementSyncPoint = 0x2C8;
constexpr unsigned kSyncPointIndexHi = 11, kSyncPointIndexLo = 0;
// Constant buffer updates: SELECTOR_A size 16:0 (bytes), B address 39:32, C address 31:0;
// LOAD_CONSTANT_BUFFER(i) (16 methods) writes a word at the offset, which moves on by 4.
constexpr uint32_t kCbSelectorA = 0x2380, kCbSelectorB = 0x2384, kCbSelectorC = 0x2388,
                   kCbOffset = 0x238C, kLoadCb = 0x2390, kLoadCbCount = 16;
constexpr uint32_t kReportAwaken = 1u << 20;
constexpr uint32_t kReportSemaphoreA = 0x1B00, kReportSemaphoreB = 0x1B04,
                   kReportSemaphoreC = 0x1B08, kReportSemaphoreD = 0x1B0C;
// SET_REPORT_SEMAPHORE_D
constexpr uint32_t kReportOpRelease = 0, kReportOpAcquire = 1, kReportOpReportOnly = 2,
                   kReportOpTrap = 3;
constexpr uint32_t kReportReductionEnable = 1u << 3;
constexpr unsigned kReportReductionOpHi = 11, kReportReductionOpLo = 9;
constexpr uint32_t kReportComparisonGe = 1u << 16;  // clear: equal
constexpr unsigned kReportTypeHi = 27, kReportTypeLo = 23;
constexpr uint32_t kReportStructureOneWord = 1u << 28;
constexpr unsigned kReportFormatHi = 18, kReportFormatLo = 17;  // 0 unsigned, 1 signed
// REDUCTION_OP of the 3D/compute report numbers the operations differently from host and DMA.
constexpr Reduction kReportReductions[8] = {Reduction::kAdd, Reduction::kMin, Reduction::kMax,
                                            Reduction::kInc, Reduction::kDec, Reduction::kAnd,
                                            Reduction::kOr,  Reduction::kXor};
}  // namespace threed

// Inline-to-memory: the 0xA140 class, and the same methods at the same offsets in 3D and compute.
namespace i2m {
constexpr uint32_t kLineLengthIn = 0x180, kLineCount = 0x184, kOffsetOutUpper = 0x188,
                   kOffsetOut = 0x18C, kPitchOut = 0x190, kLaunchDma = 0x1B0,
                   kLoadInlineData = 0x1B4, kSemaphoreA = 0x1DC, kSemaphoreB = 0x1E0,
                   kSemaphoreC = 0x1E4;
// LAUNCH_DMA
constexpr uint32_t kDstPitch = 1u << 0;
constexpr unsigned kCompletionHi = 5, kCompletionLo = 4;
constexpr uint32_t kCompletionReleaseSemaphore = 2;
constexpr unsigned kInterruptHi = 9, kInterruptLo = 8;
constexpr uint32_t kSemaphoreOneWord = 1u << 12;  // clear: four words (payload, 0, timestamp)
// A block-linear destination: SET_DST_BLOCK_SIZE (WIDTH 3:0, HEIGHT 7:4, DEPTH 11:8, log2 GOBs),
// its width (bytes), height (rows), depth and layer (slices), origin (ORIGIN_BYTES_X 19:0,
// ORIGIN_SAMPLES_Y 15:0).
constexpr uint32_t kDstBlockSize = 0x194, kDstWidth = 0x198, kDstHeight = 0x19C, kDstDepth = 0x1A0,
                   kDstLayer = 0x1A4, kDstOriginX = 0x1A8, kDstOriginY = 0x1AC;
constexpr unsigned kOriginXHi = 19, kOriginYHi = 15;
}  // namespace i2m

// SET_*_BLOCK_SIZE fields (DMA and inline-to-memory): log2 of the block's size in GOBs.
namespace block_size {
constexpr unsigned kWidthHi = 3, kWidthLo = 0, kHeightHi = 7, kHeightLo = 4, kDepthHi = 11,
                   kDepthLo = 8;
}  // namespace block_size

namespace dma {
constexpr uint32_t kSemaphoreA = 0x240, kSemaphoreB = 0x244, kSemaphorePayload = 0x248,
                   kLaunchDma = 0x300, kOffsetInUpper = 0x400, kOffsetInLower = 0x404,
                   kOffsetOutUpper = 0x408, kOffsetOutLower = 0x40C, kPitchIn = 0x410,
                   kPitchOut = 0x414, kLineLengthIn = 0x418, kLineCount = 0x41C,
                   kRemapConstA = 0x700, kRemapConstB = 0x704, kRemapComponents = 0x708;
// Block-linear surfaces: SET_DST_BLOCK_SIZE, WIDTH, HEIGHT, DEPTH, LAYER, ORIGIN (X 15:0, Y 31:16),
// then the same for the source.
constexpr uint32_t kDstBlockSize = 0x70C, kDstWidth = 0x710, kDstHeight = 0x714, kDstDepth = 0x718,
                   kDstLayer = 0x71C, kDstOrigin = 0x720, kSrcBlockSize = 0x728, kSrcWidth = 0x72C,
                   kSrcHeight = 0x730, kSrcDepth = 0x734, kSrcLayer = 0x738, kSrcOrigin = 0x73C;
// LAUNCH_DMA
constexpr unsigned kTransferHi = 1, kTransferLo = 0;
constexpr unsigned kSemaphoreTypeHi = 4, kSemaphoreTypeLo = 3;
constexpr uint32_t kSemaphoreNone = 0, kSemaphoreOneWord = 1, kSemaphoreFourWord = 2;
constexpr unsigned kInterruptHi = 6, kInterruptLo = 5;
constexpr uint32_t kSrcPitch = 1u << 7, kDstPitch = 1u << 8, kMultiLine = 1u << 9,
                   kRemap = 1u << 10, kSrcPhysical = 1u << 12, kDstPhysical = 1u << 13;
constexpr unsigned kReductionHi = 17, kReductionLo = 14;
constexpr uint32_t kReductionUnsigned = 1u << 18, kReductionEnable = 1u << 19;
// SET_REMAP_COMPONENTS: DST_X 2:0, DST_Y 6:4, DST_Z 10:8, DST_W 14:12; then sizes minus one.
constexpr uint32_t kRemapSrcX = 0, kRemapConstASel = 4, kRemapConstBSel = 5, kRemapNoWrite = 6;
constexpr unsigned kComponentSizeHi = 17, kComponentSizeLo = 16;
constexpr unsigned kNumSrcHi = 21, kNumSrcLo = 20;
constexpr unsigned kNumDstHi = 25, kNumDstLo = 24;
}  // namespace dma

}  // namespace nvsentry::hostshim::sim::methods
