#include "hostshim/sim/host1x_methods.h"

#include <algorithm>
#include <span>
#include <vector>

#include "absl/strings/str_cat.h"

namespace nvsentry::hostshim::sim {
namespace {

struct Name {
  uint32_t offset;
  const char* name;
};
// An engine method, or `count` of them `stride` bytes apart (named with their index).
struct EngineMethod {
  uint32_t offset;
  const char* name;
  uint32_t count = 1;
  uint32_t stride = 4;
};

// host1x class methods, word offsets (Linux drivers/gpu/host1x/hw/hw_host1x05_uclass.h and
// later generations for the 32-bit payload pair).
constexpr Name kHostMethods[] = {
    {0x00, "INCR_SYNCPT"},
    {0x01, "INCR_SYNCPT_CNTRL"},
    {0x02, "INCR_SYNCPT_ERROR"},
    {0x08, "WAIT_SYNCPT"},
    {0x09, "WAIT_SYNCPT_BASE"},
    {0x0b, "LOAD_SYNCPT_BASE"},
    {0x0c, "INCR_SYNCPT_BASE"},
    {0x0d, "DELAY_USEC"},
    {0x2d, "INDOFF"},
    {0x4e, "LOAD_SYNCPT_PAYLOAD_32"},
    {0x50, "WAIT_SYNCPT_32"},
};

// The host interface (THI) registers of an engine class, word offsets (the layout public
// emulators use for the Switch's VIC and NVDEC; METHOD0/METHOD1 as Linux's falcon.h has them).
constexpr Name kThiRegisters[] = {
    {0x00, "INCR_SYNCPT"}, {0x02, "INCR_SYNCPT_ERR"}, {0x03, "CTXSW_INCR_SYNCPT"},
    {0x08, "CTXSW"},       {0x0a, "CONT_SYNCPT_EOF"}, {0x10, "METHOD0"},
    {0x11, "METHOD1"},     {0x1e, "INT_STATUS"},      {0x1f, "INT_MASK"},
};

// Methods every falcon-based engine class has (NVIDIA's class headers: clb0b6.h for VIC,
// clc5b0.h for NVDEC; the same offsets in each).
constexpr EngineMethod kFalconMethods[] = {
    {0x100, "NOP"},
    {0x140, "PM_TRIGGER"},
    {0x200, "SET_APPLICATION_ID"},
    {0x204, "SET_WATCHDOG_TIMER"},
    {0x240, "SEMAPHORE_A"},
    {0x244, "SEMAPHORE_B"},
    {0x248, "SEMAPHORE_C"},
    {0x24c, "CTX_SAVE_AREA"},
    {0x250, "CTX_SWITCH"},
    {0x300, "EXECUTE"},
    {0x304, "SEMAPHORE_D"},
};

// VIC (NVB0B6_VIDEO_COMPOSITOR, clb0b6.h). Surface n of slot s: 0x400 + s * 0x60 + n * 0xC.
constexpr EngineMethod kVicMethods[] = {
    {0x400, "SET_SURFACE0_LUMA_OFFSET", 8, 0x60},
    {0x404, "SET_SURFACE0_CHROMA_U_OFFSET", 8, 0x60},
    {0x408, "SET_SURFACE0_CHROMA_V_OFFSET", 8, 0x60},
    {0x40c, "SET_SURFACE1_LUMA_OFFSET", 8, 0x60},
    {0x410, "SET_SURFACE1_CHROMA_U_OFFSET", 8, 0x60},
    {0x414, "SET_SURFACE1_CHROMA_V_OFFSET", 8, 0x60},
    {0x418, "SET_SURFACE2_LUMA_OFFSET", 8, 0x60},
    {0x41c, "SET_SURFACE2_CHROMA_U_OFFSET", 8, 0x60},
    {0x420, "SET_SURFACE2_CHROMA_V_OFFSET", 8, 0x60},
    {0x424, "SET_SURFACE3_LUMA_OFFSET", 8, 0x60},
    {0x428, "SET_SURFACE3_CHROMA_U_OFFSET", 8, 0x60},
    {0x42c, "SET_SURFACE3_CHROMA_V_OFFSET", 8, 0x60},
    {0x430, "SET_SURFACE4_LUMA_OFFSET", 8, 0x60},
    {0x434, "SET_SURFACE4_CHROMA_U_OFFSET", 8, 0x60},
    {0x438, "SET_SURFACE4_CHROMA_V_OFFSET", 8, 0x60},
    {0x43c, "SET_SURFACE5_LUMA_OFFSET", 8, 0x60},
    {0x440, "SET_SURFACE5_CHROMA_U_OFFSET", 8, 0x60},
    {0x444, "SET_SURFACE5_CHROMA_V_OFFSET", 8, 0x60},
    {0x448, "SET_SURFACE6_LUMA_OFFSET", 8, 0x60},
    {0x44c, "SET_SURFACE6_CHROMA_U_OFFSET", 8, 0x60},
    {0x450, "SET_SURFACE6_CHROMA_V_OFFSET", 8, 0x60},
    {0x454, "SET_SURFACE7_LUMA_OFFSET", 8, 0x60},
    {0x458, "SET_SURFACE7_CHROMA_U_OFFSET", 8, 0x60},
    {0x45c, "SET_SURFACE7_CHROMA_V_OFFSET", 8, 0x60},
    {0x700, "SET_PICTURE_INDEX"},
    {0x704, "SET_CONTROL_PARAMS"},
    {0x708, "SET_CONFIG_STRUCT_OFFSET"},
    {0x70c, "SET_FILTER_STRUCT_OFFSET"},
    {0x710, "SET_PALETTE_OFFSET"},
    {0x714, "SET_HIST_OFFSET"},
    {0x718, "SET_CONTEXT_ID"},
    {0x71c, "SET_FCE_UCODE_SIZE"},
    {0x720, "SET_OUTPUT_SURFACE_LUMA_OFFSET"},
    {0x724, "SET_OUTPUT_SURFACE_CHROMA_U_OFFSET"},
    {0x728, "SET_OUTPUT_SURFACE_CHROMA_V_OFFSET"},
    {0x72c, "SET_FCE_UCODE_OFFSET"},
    {0x730, "SET_CRC_STRUCT_OFFSET"},
    {0x734, "SET_CRC_MODE"},
    {0x738, "SET_STATUS_OFFSET"},
    {0x740, "SET_SLOT_CONTEXT_ID", 8},
    {0x780, "SET_HISTORY_BUFFER_OFFSET", 8},
    {0x7c0, "SET_COMP_TAG_BUFFER_OFFSET", 8},
    {0x1114, "PM_TRIGGER_END"},
};

// NVDEC (NVC5B0_VIDEO_DECODER, clc5b0.h: the methods the Switch's decoders use).
constexpr EngineMethod kNvdecMethods[] = {
    {0x400, "SET_CONTROL_PARAMS"},           {0x404, "SET_DRV_PIC_SETUP_OFFSET"},
    {0x408, "SET_IN_BUF_BASE_OFFSET"},       {0x40c, "SET_PICTURE_INDEX"},
    {0x410, "SET_SLICE_OFFSETS_BUF_OFFSET"}, {0x414, "SET_COLOC_DATA_OFFSET"},
    {0x418, "SET_HISTORY_OFFSET"},           {0x41c, "SET_DISPLAY_BUF_SIZE"},
    {0x420, "SET_HISTOGRAM_OFFSET"},         {0x424, "SET_NVDEC_STATUS_OFFSET"},
    {0x428, "SET_DISPLAY_BUF_LUMA_OFFSET"},  {0x42c, "SET_DISPLAY_BUF_CHROMA_OFFSET"},
    {0x430, "SET_PICTURE_LUMA_OFFSET", 17},  {0x474, "SET_PICTURE_CHROMA_OFFSET", 17},
    {0x4b8, "SET_PIC_SCRATCH_BUF_OFFSET"},   {0x500, "H264_SET_MBHIST_BUF_OFFSET"},
};

struct EngineClass {
  uint32_t id;
  const char* name;
  std::span<const EngineMethod> methods;  // besides kFalconMethods
};
// Host1x class ids: L4T include/linux/host1x.h. NVJPG, MSENC and TSEC: the common methods only.
constexpr EngineClass kClasses[] = {
    {0x5D, "VIC", kVicMethods}, {0xF0, "NVDEC", kNvdecMethods},
    {0xC0, "NVJPG", {}},        {0x21, "MSENC", {}},
    {0xE0, "TSEC", {}},
};

std::string_view Find(std::span<const Name> table, uint32_t offset) {
  for (const Name& n : table)
    if (n.offset == offset) return n.name;
  return {};
}

// "" unless `offset` is one of `m`'s; then its name (with the index for a repeated method).
std::string Match(const EngineMethod& m, uint32_t offset) {
  if (offset < m.offset || (offset - m.offset) % m.stride != 0) return {};
  const uint32_t i = (offset - m.offset) / m.stride;
  if (i >= m.count) return {};
  return m.count == 1 ? std::string(m.name) : absl::StrCat(m.name, "(", i, ")");
}

}  // namespace

std::string_view Host1xHostMethodName(uint32_t method) { return Find(kHostMethods, method); }
std::string_view Host1xThiName(uint32_t method) { return Find(kThiRegisters, method); }

std::string Host1xEngineMethodName(uint32_t engine_class, uint32_t byte_offset) {
  for (const EngineMethod& m : kFalconMethods)
    if (std::string s = Match(m, byte_offset); !s.empty()) return s;
  for (const EngineClass& c : kClasses) {
    if (c.id != engine_class) continue;
    for (const EngineMethod& m : c.methods)
      if (std::string s = Match(m, byte_offset); !s.empty()) return s;
  }
  return {};
}

std::string Host1xClassName(uint32_t engine_class) {
  for (const EngineClass& c : kClasses)
    if (c.id == engine_class) return c.name;
  return absl::StrCat("class 0x", absl::Hex(engine_class));
}

uint32_t Host1xTally::Key(Host1xSpace space, uint32_t offset) {
  if (space == Host1xSpace::kEngine)
    offset = std::min(offset, kMaxNamedEngineMethod);
  else
    offset &= 0xFFF;
  return (static_cast<uint32_t>(space) << 16) | offset;
}

void Host1xTally::Add(Host1xSpace space, uint32_t offset) {
  ++counts_[Key(space, offset)];
  ++total_;
}

uint64_t Host1xTally::Count(Host1xSpace space, uint32_t offset) const {
  auto it = counts_.find(Key(space, offset));
  return it == counts_.end() ? 0 : it->second;
}

void Host1xTally::Clear() {
  counts_.clear();
  total_ = 0;
}

void Host1xTally::Merge(const Host1xTally& other) {
  for (const auto& [key, n] : other.counts_) counts_[key] += n;
  total_ += other.total_;
}

std::string Host1xTally::Summary(uint32_t engine_class) const {
  std::vector<std::pair<uint32_t, uint64_t>> sorted(counts_.begin(), counts_.end());
  std::sort(sorted.begin(), sorted.end());
  std::string out;
  int last_space = -1;
  for (const auto& [key, n] : sorted) {
    const auto space = static_cast<Host1xSpace>(key >> 16);
    const uint32_t offset = key & 0xFFFF;
    std::string name;
    switch (space) {
      case Host1xSpace::kHost: name = std::string(Host1xHostMethodName(offset)); break;
      case Host1xSpace::kThi:
        if (offset == kThiMethod0 || offset == kThiMethod1) continue;
        name = std::string(Host1xThiName(offset));
        break;
      case Host1xSpace::kEngine:
        if (offset >= kMaxNamedEngineMethod) {
          name = absl::StrCat(">=0x", absl::Hex(kMaxNamedEngineMethod));
          break;
        }
        name = Host1xEngineMethodName(engine_class, offset);
        break;
    }
    if (name.empty()) name = absl::StrCat("0x", absl::Hex(offset));
    if (static_cast<int>(space) != last_space) {
      if (!out.empty()) out += "; ";
      absl::StrAppend(&out,
                      space == Host1xSpace::kEngine ? Host1xClassName(engine_class)
                      : space == Host1xSpace::kThi  ? "THI"
                                                    : "host1x",
                      ": ");
      last_space = static_cast<int>(space);
    } else {
      out += ", ";
    }
    absl::StrAppend(&out, name, " x", n);
  }
  return out;
}

}  // namespace nvsentry::hostshim::sim
