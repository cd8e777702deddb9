#include "hostshim/sim/host1x/host1x_methods.h"

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
// An engine method, or `count` of them `stride` bytes apart, named with their index: in place of
// a '#' in `name` when it has one ("SET_IN_REF_PIC#_LUMA" -> "SET_IN_REF_PIC3_LUMA", as a header
// spells out numbered methods), else after it ("SET_PICTURE_LUMA_OFFSET(3)").
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

// NVJPG (NVE7D0_VIDEO_NVJPG, cle7d0.h in NVIDIA/open-gpu-doc, classes/video: published for
// Tegra194 together with clc5b0.h and clc5b7.h; Switch clients push these offsets to the Tegra
// X1's NVJPG, e.g. averne's FFmpeg nvtegra MJPEG decoder).
constexpr EngineMethod kNvjpgMethods[] = {
    {0x700, "SET_CONTROL_PARAMS"},   {0x704, "SET_PICTURE_INDEX"},
    {0x708, "SET_IN_DRV_PIC_SETUP"}, {0x70c, "SET_OUT_STATUS"},
    {0x710, "SET_BITSTREAM"},        {0x714, "SET_CUR_PIC"},
    {0x718, "SET_CUR_PIC_CHROMA_U"}, {0x71c, "SET_CUR_PIC_CHROMA_V"},
};

// MSENC, Tegra's NVENC (NVC5B7_VIDEO_ENCODER, clc5b7.h in NVIDIA/open-gpu-doc, classes/video:
// published for Tegra194; the Tegra X1's older encoder may know only some of these).
constexpr EngineMethod kMsencMethods[] = {
    {0x400, "SET_IN_REF_PIC#_LUMA", 16},
    {0x440, "SET_IN_REF_PIC#_CHROMA", 16},
    {0x500, "SET_IN_REF_PIC_LAST_LUMA"},
    {0x504, "SET_IN_REF_PIC_GOLDEN_LUMA"},
    {0x508, "SET_IN_REF_PIC_ALTREF_LUMA"},
    {0x50c, "SET_UCODE_STATE"},
    {0x510, "SET_IO_VP8_ENC_STATUS"},
    {0x514, "SET_OUT_BITSTREAM_RES"},
    {0x518, "SET_IN_REF_PIC_LAST_CHROMA"},
    {0x51c, "SET_IN_REF_PIC_GOLDEN_CHROMA"},
    {0x520, "SET_IN_REF_PIC_ALTREF_CHROMA"},
    {0x524, "SET_OUT_VP9_COUNTER_DATA"},
    {0x528, "SET_IN_VP9_PROBABILITY_DATA"},
    {0x52c, "SET_IN_VP9_CUR_TEMPORAL_DATA"},
    {0x530, "SET_IN_VP9_REF_TEMPORAL_DATA"},
    {0x534, "SET_IN_VP9_COMBINEDLINE_BUF"},
    {0x538, "SET_IN_VP9_FILTERLINE_BUF"},
    {0x53c, "SET_IN_VP9_FILTERCOLLINE_BUF"},
    {0x544, "SET_IN_VP9_MOCOMP_PIC_LUMA"},
    {0x548, "SET_IN_VP9_MOCOMP_PIC_CHROMA"},
    {0x700, "SET_CONTROL_PARAMS"},
    {0x704, "SET_PICTURE_INDEX"},
    {0x70c, "SET_IN_RCDATA"},
    {0x710, "SET_IN_DRV_PIC_SETUP"},
    {0x714, "SET_IN_CEAHINTS_DATA"},
    {0x718, "SET_OUT_ENC_STATUS"},
    {0x71c, "SET_OUT_BITSTREAM"},
    {0x720, "SET_IOHISTORY"},
    {0x724, "SET_IO_RC_PROCESS"},
    {0x728, "SET_IN_COLOC_DATA"},
    {0x72c, "SET_OUT_COLOC_DATA"},
    {0x730, "SET_OUT_REF_PIC_LUMA"},
    {0x734, "SET_IN_CUR_PIC"},
    {0x738, "SET_IN_MEPRED_DATA"},
    {0x73c, "SET_OUT_MEPRED_DATA"},
    {0x740, "SET_IN_CUR_PIC_CHROMA_U"},
    {0x744, "SET_IN_CUR_PIC_CHROMA_V"},
    {0x748, "SET_IN_QP_MAP"},
    {0x74c, "SET_OUT_REF_PIC_CHROMA"},
    {0x750, "SET_IN_PARTITION_BUF"},
    {0x758, "SET_IN_CUR_PIC1_TASK_STATUS"},
    {0x75c, "SET_IN_CUR_PIC2_TASK_STATUS"},
    {0x760, "SET_OUT_TASK_STATUS"},
    {0x764, "SET_IN_MV_HINTS_TASK_STATUS"},
};

// TSEC: no class header is public. These are the methods of its HDCP application
// (SET_APPLICATION_ID 1), as L4T's nvhost driver sends them through METHOD0/METHOD1
// (drivers/video/tegra/host/tsec/tsec_methods.h, e.g. in OE4T/linux-tegra-4.9); what another
// application would read at these offsets is not public.
constexpr EngineMethod kTsecMethods[] = {
    {0x500, "HDCP_INIT"},
    {0x504, "HDCP_CREATE_SESSION"},
    {0x508, "HDCP_VERIFY_CERT_RX"},
    {0x50c, "HDCP_GENERATE_EKM"},
    {0x510, "HDCP_REVOCATION_CHECK"},
    {0x514, "HDCP_VERIFY_HPRIME"},
    {0x518, "HDCP_ENCRYPT_PAIRING_INFO"},
    {0x51c, "HDCP_DECRYPT_PAIRING_INFO"},
    {0x520, "HDCP_UPDATE_SESSION"},
    {0x524, "HDCP_GENERATE_LC_INIT"},
    {0x528, "HDCP_VERIFY_LPRIME"},
    {0x52c, "HDCP_GENERATE_SKE_INIT"},
    {0x530, "HDCP_VERIFY_VPRIME"},
    {0x534, "HDCP_ENCRYPTION_RUN_CTRL"},
    {0x538, "HDCP_SESSION_CTRL"},
    {0x53c, "HDCP_COMPUTE_SPRIME"},
    {0x540, "HDCP_GET_CERT_RX"},
    {0x544, "HDCP_EXCHANGE_INFO"},
    {0x548, "HDCP_DECRYPT_KM"},
    {0x54c, "HDCP_GET_HPRIME"},
    {0x550, "HDCP_GENERATE_EKH_KM"},
    {0x554, "HDCP_VERIFY_RTT_CHALLENGE"},
    {0x558, "HDCP_GET_LPRIME"},
    {0x55c, "HDCP_DECRYPT_KS"},
    {0x560, "HDCP_DECRYPT"},
    {0x564, "HDCP_GET_RRX"},
    {0x568, "HDCP_DECRYPT_REENCRYPT"},
    {0x700, "HDCP_VALIDATE_SRM"},
    {0x704, "HDCP_VALIDATE_STREAM"},
    {0x708, "HDCP_TEST_SECURE_STATUS"},
    {0x70c, "HDCP_SET_DCP_KPUB"},
    {0x710, "HDCP_SET_RX_KPUB"},
    {0x714, "HDCP_SET_CERT_RX"},
    {0x718, "HDCP_SET_SCRATCH_BUFFER"},
    {0x71c, "HDCP_SET_SRM"},
    {0x720, "HDCP_SET_RECEIVER_ID_LIST"},
    {0x724, "HDCP_SET_SPRIME"},
    {0x728, "HDCP_SET_ENC_INPUT_BUFFER"},
    {0x72c, "HDCP_SET_ENC_OUTPUT_BUFFER"},
    {0x730, "HDCP_GET_RTT_CHALLENGE"},
    {0x734, "HDCP_STREAM_MANAGE"},
    {0x738, "HDCP_READ_CAPS"},
    {0x73c, "HDCP_ENCRYPT"},
};

struct EngineClass {
  uint32_t id;
  const char* name;
  std::span<const EngineMethod> methods;  // besides kFalconMethods
};
// Host1x class ids: L4T include/linux/host1x.h.
constexpr EngineClass kClasses[] = {
    {0x5D, "VIC", kVicMethods},     {0xF0, "NVDEC", kNvdecMethods}, {0xC0, "NVJPG", kNvjpgMethods},
    {0x21, "MSENC", kMsencMethods}, {0xE0, "TSEC", kTsecMethods},
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
  if (m.count == 1) return m.name;
  std::string name = m.name;
  if (const size_t hash = name.find('#'); hash != std::string::npos)
    return name.replace(hash, 1, std::to_string(i));
  return absl::StrCat(name, "(", i, ")");
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
