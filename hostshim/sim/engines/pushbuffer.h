// Field layouts of GPFIFO entries and pushbuffer command words (clb06f.h's GP_ENTRY and DMA_*
// formats, NVIDIA's open-gpu-doc). Pure bit arithmetic: no state, no checks.
#pragma once

#include <cstdint>

namespace nvsentry::hostshim::sim::pb {

// GPFIFO entry: entry0 31:2 = VA 31:2; entry1 7:0 = VA 39:32, 9 LEVEL, 30:10 LENGTH (words), 31
// SYNC.
constexpr uint64_t EntryVa(uint32_t e0, uint32_t e1) {
  return (static_cast<uint64_t>(e1 & 0xFFu) << 32) | (e0 & ~3u);
}
constexpr uint32_t EntryLength(uint32_t e1) { return (e1 >> 10) & 0x1FFFFFu; }

// Command word: 31:29 mode (SEC_OP), 28:16 count or immediate data, 15:13 subchannel,
// 11:0 method index. The legacy modes 0 and 2 take a tertiary op in 17:16, an 11-bit count in
// 28:18 and the method index in 12:2.
enum Mode : uint32_t {
  kModeLegacyInc = 0,  // TERT_OP 0: incrementing; 1..3: subdevice-mask ops; word 0: NOP
  kModeInc = 1,
  kModeLegacyNonInc = 2,
  kModeNonInc = 3,
  kModeImmediate = 4,
  kModeIncOnce = 5,
  kModeReserved = 6,
  kModeEndSegment = 7,
};
constexpr uint32_t WordMode(uint32_t w) { return w >> 29; }
constexpr uint32_t WordCount(uint32_t w) { return (w >> 16) & 0x1FFFu; }
constexpr uint32_t WordImmediate(uint32_t w) { return (w >> 16) & 0x1FFFu; }
constexpr uint32_t WordSubchannel(uint32_t w) { return (w >> 13) & 7u; }
constexpr uint32_t WordMethod(uint32_t w) { return w & 0xFFFu; }
constexpr uint32_t LegacyTertOp(uint32_t w) { return (w >> 16) & 3u; }
constexpr uint32_t LegacyCount(uint32_t w) { return (w >> 18) & 0x7FFu; }
constexpr uint32_t LegacyMethod(uint32_t w) { return (w >> 2) & 0x7FFu; }

}  // namespace nvsentry::hostshim::sim::pb
