// /dev/nvdisp-disp0/1: one display head each: windows, flips, modes, colour, backlight
// (Switchbrew).
#pragma once

#include <cstdint>
#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::nvdisp {

constexpr uint32_t kGetWindow = 0x40040201;
constexpr uint32_t kPutWindow = 0x40040202;
constexpr uint32_t kFlip = 0xC4C80203;
constexpr uint32_t kGetMode = 0x80380204;
constexpr uint32_t kSetMode = 0x40380205;
constexpr uint32_t kSetLut = 0x430C0206;
constexpr uint32_t kConfigCrc = 0x40010207;
constexpr uint32_t kGetCrc = 0x80040208;
constexpr uint32_t kGetHeadStatus = 0x80040209;
constexpr uint32_t kValidateMode = 0xC038020A;
constexpr uint32_t kSetCsc = 0x4018020B;
constexpr uint32_t kGetVblankSyncpt = 0xC004020C;
constexpr uint32_t kGetUnderflows = 0x8040020D;
constexpr uint32_t kSetCmu = 0xC99A020E;
constexpr uint32_t kDpms = 0xC004020F;
constexpr uint32_t kGetAviInfoframe = 0x80600210;
constexpr uint32_t kSetAviInfoframe = 0x40600211;
constexpr uint32_t kGetModeDb = 0xEBFC0215;
constexpr uint32_t kPanelGetVendorId = 0xC003021A;
constexpr uint32_t kGetMode2 = 0x803C021B;
constexpr uint32_t kSetMode2 = 0x403C021C;
constexpr uint32_t kValidateMode2 = 0xC03C021D;
constexpr uint32_t kGetModeDb2 = 0xEF20021E;
constexpr uint32_t kGetWinmask = 0xC004021F;
constexpr uint32_t kGetBacklightRange = 0x80080221;     // 10.0.0+
constexpr uint32_t kSetBacklightRangeMax = 0x40040222;  // 10.0.0+
constexpr uint32_t kSetBacklightRangeMin = 0x40040223;  // 11.0.0+
constexpr uint32_t kSendPanelMsg = 0x401C0225;          // 11.0.0+
constexpr uint32_t kGetPanelData = 0xC01C0226;          // 11.0.0+

// Argument structs, as the guest lays them out.

// GET_MODE (all out), SET_MODE (all in), VALIDATE_MODE (all inout). Switchbrew lists 13 words;
// the code's size is 56, so the last word is unnamed tail space.
struct Mode {
  uint32_t h_active;
  uint32_t v_active;
  uint32_t h_sync_width;
  uint32_t v_sync_width;
  uint32_t h_front_porch;
  uint32_t v_front_porch;
  uint32_t h_back_porch;
  uint32_t v_back_porch;
  uint32_t h_ref_to_sync;
  uint32_t v_ref_to_sync;
  uint32_t pclk_khz;
  uint32_t bits_per_pixel;  // GET_MODE reports 0
  uint32_t vmode;           // GET_MODE reports 0
  uint32_t reserved;        // not in Switchbrew's struct
};
struct BacklightRange {
  uint32_t min;
  uint32_t max;
};
struct BacklightRangeMax {
  uint32_t max;
};
struct BacklightRangeMin {
  uint32_t min;
};
// SEND_PANEL_MSG (msg in) and GET_PANEL_DATA (msg out): one DPAUX transaction.
struct PanelMsg {
  uint32_t cmd;     // AUXCTL command: send 1, 2 (I2C write), 4 (MOT write), 7 (AUX write);
                    // get 3 (I2C read), 5 (MOT read), 6 (AUX read)
  uint32_t addr;    // AUXADDR
  uint32_t size;    // bytes of msg in use
  uint32_t msg[4];  // AUXDATA
};

// FLIP. Switchbrew gives only the size, 1224 bytes. No public header has a struct of that size;
// the layout assumed (docs/simulated-gpu.md) is L4T's tegra_dc_ext_flip (uapi tegra_dc_ext.h,
// the ioctl with the same number, 3) in its LP64 form as the prefix: three window attributes of
// 136 bytes (struct timespec is two 64-bit words there) and the post-fence, then reserved bytes.
struct FlipWindow {  // tegra_dc_ext_flip_windowattr
  int32_t index;     // window of the head; < 0: slot unused
  uint32_t buff_id;  // nvmap handle; 0 disables the window
  uint32_t blend;
  uint32_t offset;
  uint32_t offset_u;
  uint32_t offset_v;
  uint32_t stride;  // bytes per line (pitch surfaces)
  uint32_t stride_uv;
  uint32_t pixformat;   // TEGRA_DC_EXT_FMT_*
  uint32_t x, y, w, h;  // source rectangle, 20.12 fixed point
  uint32_t out_x, out_y, out_w, out_h;
  uint32_t z;
  uint32_t swap_interval;
  uint32_t pad0;  // struct timespec's alignment
  int64_t timestamp_sec;
  int64_t timestamp_nsec;
  uint32_t pre_syncpt_id;  // 0xFFFFFFFF (NVSYNCPT_INVALID) or 0: no pre-fence
  uint32_t pre_syncpt_val;
  uint32_t buff_id_u;
  uint32_t buff_id_v;
  uint32_t flags;  // TEGRA_DC_EXT_FLIP_FLAG_*
  uint8_t global_alpha;
  uint8_t block_height_log2;
  uint8_t pad1[2];
  uint32_t extra[4];  // interlace / compression / CSC union
};
constexpr uint32_t kFlipWindows = 3;  // TEGRA_DC_EXT_FLIP_N_WINDOWS
struct Flip {
  FlipWindow win[kFlipWindows];
  uint32_t post_syncpt_id;   // out
  uint32_t post_syncpt_val;  // out
  uint8_t reserved[1224 - kFlipWindows * sizeof(FlipWindow) - 8];
};
// tegra_dc_ext.h pixel formats and flip flags the simulated display accepts.
constexpr uint32_t kFmtB5G6R5 = 6;
constexpr uint32_t kFmtB8G8R8A8 = 12;
constexpr uint32_t kFmtR8G8B8A8 = 13;
constexpr uint32_t kFlipFlagBlockLinear = 1u << 5;

// GET_MODE2 / SET_MODE2 / VALIDATE_MODE2: 60 bytes; assumed to be Mode's 13 named words and two
// words not public (stored as given).
struct Mode2 {
  Mode mode;
  uint32_t extra;
};
// GET_MODE_DB / GET_MODE_DB2: 4 + 201 modes exactly fills either code's size; assumed to be a
// count (in: ignored, out: modes written) then the modes.
constexpr uint32_t kModeDbEntries = 201;
struct ModeDb {
  uint32_t count;
  Mode modes[kModeDbEntries];
};
struct ModeDb2 {
  uint32_t count;
  Mode2 modes[kModeDbEntries];
};

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::nvdisp
