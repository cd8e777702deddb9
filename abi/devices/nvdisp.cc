#include "abi/devices/nvdisp.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nvdisp {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, O = Dir::kOut, IO = Dir::kInOut, N = Dir::kNone;
constexpr Fmt H = Fmt::kHex;

// The three mode ioctls share one layout and differ only in direction.
constexpr Field kGetModeF[] = {
    {"hActive", 0, kU32, 1, O},
    {"vActive", 4, kU32, 1, O},
    {"hSyncWidth", 8, kU32, 1, O},
    {"vSyncWidth", 12, kU32, 1, O},
    {"hFrontPorch", 16, kU32, 1, O},
    {"vFrontPorch", 20, kU32, 1, O},
    {"hBackPorch", 24, kU32, 1, O},
    {"vBackPorch", 28, kU32, 1, O},
    {"hRefToSync", 32, kU32, 1, O},
    {"vRefToSync", 36, kU32, 1, O},
    {"pclkKHz", 40, kU32, 1, O},
    {"bitsPerPixel", 44, kU32, 1, O},
    {"vmode", 48, kU32, 1, O},
    {"reserved", 52, kU32, 1, N},  // tail word Switchbrew's struct does not list
};
constexpr Field kSetModeF[] = {
    {"hActive", 0, kU32, 1, I},
    {"vActive", 4, kU32, 1, I},
    {"hSyncWidth", 8, kU32, 1, I},
    {"vSyncWidth", 12, kU32, 1, I},
    {"hFrontPorch", 16, kU32, 1, I},
    {"vFrontPorch", 20, kU32, 1, I},
    {"hBackPorch", 24, kU32, 1, I},
    {"vBackPorch", 28, kU32, 1, I},
    {"hRefToSync", 32, kU32, 1, I},
    {"vRefToSync", 36, kU32, 1, I},
    {"pclkKHz", 40, kU32, 1, I},
    {"bitsPerPixel", 44, kU32, 1, I},
    {"vmode", 48, kU32, 1, I},
    {"reserved", 52, kU32, 1, N},  // tail word Switchbrew's struct does not list
};
constexpr Field kValidateModeF[] = {
    {"hActive", 0, kU32, 1, IO},
    {"vActive", 4, kU32, 1, IO},
    {"hSyncWidth", 8, kU32, 1, IO},
    {"vSyncWidth", 12, kU32, 1, IO},
    {"hFrontPorch", 16, kU32, 1, IO},
    {"vFrontPorch", 20, kU32, 1, IO},
    {"hBackPorch", 24, kU32, 1, IO},
    {"vBackPorch", 28, kU32, 1, IO},
    {"hRefToSync", 32, kU32, 1, IO},
    {"vRefToSync", 36, kU32, 1, IO},
    {"pclkKHz", 40, kU32, 1, IO},
    {"bitsPerPixel", 44, kU32, 1, IO},
    {"vmode", 48, kU32, 1, IO},
    {"reserved", 52, kU32, 1, N},  // tail word Switchbrew's struct does not list
};

constexpr Field kBacklightRangeF[] = {{"min", 0, kU32, 1, O}, {"max", 4, kU32, 1, O}};
constexpr Field kBacklightMaxF[] = {{"max", 0, kU32, 1, I}};
constexpr Field kBacklightMinF[] = {{"min", 0, kU32, 1, I}};
constexpr Field kSendPanelMsgF[] = {{"cmd", 0, kU32, 1, I},
                                    {"addr", 4, kU32, 1, I, nullptr, false, H},
                                    {"size", 8, kU32, 1, I},
                                    {"msg", 12, kU32, 4, I, nullptr, false, H}};
constexpr Field kGetPanelDataF[] = {{"cmd", 0, kU32, 1, I},
                                    {"addr", 4, kU32, 1, I, nullptr, false, H},
                                    {"size", 8, kU32, 1, I},
                                    {"msg", 12, kU32, 4, O, nullptr, false, H}};

// Opaque payloads: Switchbrew names these ioctls but shows no struct.
constexpr Field kIn4[] = {{"data", 0, kU8, 4, I}};
// FLIP: L4T's tegra_dc_ext_flip in its 64-bit form as the prefix of the 1224 bytes (assumed: no
// public struct has that size; nvdisp.h FlipWindow, docs/simulated-gpu.md "The display").
constexpr Field kFlipWindowF[] = {{"index", 0, kS32, 1, I},
                                  {"buff_id", 4, kU32, 1, I, nullptr, false, H},
                                  {"blend", 8, kU32, 1, I},
                                  {"offset", 12, kU32, 1, I, nullptr, false, H},
                                  {"offset_u", 16, kU32, 1, I, nullptr, false, H},
                                  {"offset_v", 20, kU32, 1, I, nullptr, false, H},
                                  {"stride", 24, kU32, 1, I},
                                  {"stride_uv", 28, kU32, 1, I},
                                  {"pixformat", 32, kU32, 1, I},
                                  {"x", 36, kU32, 1, I, nullptr, false, H},
                                  {"y", 40, kU32, 1, I, nullptr, false, H},
                                  {"w", 44, kU32, 1, I, nullptr, false, H},
                                  {"h", 48, kU32, 1, I, nullptr, false, H},
                                  {"out_x", 52, kU32, 1, I},
                                  {"out_y", 56, kU32, 1, I},
                                  {"out_w", 60, kU32, 1, I},
                                  {"out_h", 64, kU32, 1, I},
                                  {"z", 68, kU32, 1, I},
                                  {"swap_interval", 72, kU32, 1, I},
                                  {"timestamp_sec", 80, kS64, 1, I},
                                  {"timestamp_nsec", 88, kS64, 1, I},
                                  {"pre_syncpt_id", 96, kU32, 1, I},
                                  {"pre_syncpt_val", 100, kU32, 1, I},
                                  {"buff_id_u", 104, kU32, 1, I, nullptr, false, H},
                                  {"buff_id_v", 108, kU32, 1, I, nullptr, false, H},
                                  {"flags", 112, kU32, 1, I, nullptr, false, H},
                                  {"global_alpha", 116, kU8, 1, I},
                                  {"block_height_log2", 117, kU8, 1, I},
                                  {"extra", 120, kU32, 4, I, nullptr, false, H}};
constexpr StructDesc kFlipWindow{"flip_window", 136, kFlipWindowF};
constexpr Field kFlipF[] = {{"win", 0, kStruct, 3, I, &kFlipWindow},
                            {"post_syncpt_id", 408, kU32, 1, O},
                            {"post_syncpt_val", 412, kU32, 1, O},
                            {"reserved", 416, kU8, 808, N}};
constexpr Field kSetLutF[] = {{"data", 0, kU8, 780, I}};
constexpr Field kIn1[] = {{"data", 0, kU8, 1, I}};
constexpr Field kOut4[] = {{"data", 0, kU8, 4, O}};
constexpr Field kSetCscF[] = {{"data", 0, kU8, 24, I}};
constexpr Field kInOut4[] = {{"data", 0, kU8, 4, IO}};
constexpr Field kUnderflowsF[] = {{"data", 0, kU8, 64, O}};
constexpr Field kSetCmuF[] = {{"data", 0, kU8, 2458, IO}};
constexpr Field kGetAviF[] = {{"data", 0, kU8, 96, O}};
constexpr Field kSetAviF[] = {{"data", 0, kU8, 96, I}};
constexpr Field kModeDbF[] = {{"data", 0, kU8, 11260, IO}};
constexpr Field kVendorIdF[] = {{"data", 0, kU8, 3, IO}};
constexpr Field kGetMode2F[] = {{"data", 0, kU8, 60, O}};
constexpr Field kSetMode2F[] = {{"data", 0, kU8, 60, I}};
constexpr Field kValidateMode2F[] = {{"data", 0, kU8, 60, IO}};
constexpr Field kModeDb2F[] = {{"data", 0, kU8, 12064, IO}};

constexpr FwRange k1000{Fw(10, 0, 0)};
constexpr FwRange k1100{Fw(11, 0, 0)};
constexpr NvError OK = NvError::kSuccess;
constexpr uint32_t kOp = kOpaque;

// FLIP: Switchbrew's direction column says In, but its code 0xC4C80203 is read/write; the opaque
// payload follows the code. It is marked neither pure nor blocking: Switchbrew says nothing of
// waits.
constexpr IoctlDesc kIoctls[] = {
    {kGetWindow,
     "NVDISP_GET_WINDOW",
     kIn4,
     kOp,
     {},
     0,
     {},
     OK,
     "Claims a hardware window of the head."},
    {kPutWindow, "NVDISP_PUT_WINDOW", kIn4, kOp, {}, 0, {}, OK, "Releases a claimed window."},
    {kFlip,
     "NVDISP_FLIP",
     kFlipF,
     kOp,
     {},
     0,
     {},
     OK,
     "Presents new buffers on the head's windows."},
    {kGetMode,
     "NVDISP_GET_MODE",
     kGetModeF,
     kPure,
     {},
     0,
     {},
     OK,
     "Reports the head's current timings."},
    {kSetMode, "NVDISP_SET_MODE", kSetModeF, 0, {}, 0, {}, OK, "Programs new timings on the head."},
    {kSetLut, "NVDISP_SET_LUT", kSetLutF, kOp, {}, 0, {}, OK, "Loads a colour lookup table."},
    {kConfigCrc,
     "NVDISP_CONFIG_CRC",
     kIn1,
     kOp,
     {},
     0,
     {},
     OK,
     "Turns output CRC capture on or off."},
    {kGetCrc, "NVDISP_GET_CRC", kOut4, kOp | kPure, {}, 0, {}, OK, "Reads the last output CRC."},
    {kGetHeadStatus,
     "NVDISP_GET_HEAD_STATUS",
     kOut4,
     kOp | kPure,
     {},
     0,
     {},
     OK,
     "Reports whether the head is active."},
    {kValidateMode,
     "NVDISP_VALIDATE_MODE",
     kValidateModeF,
     kPure,
     {},
     0,
     {},
     OK,
     "Checks timings against the head and returns the adjusted mode."},
    {kSetCsc,
     "NVDISP_SET_CSC",
     kSetCscF,
     kOp,
     {},
     0,
     {},
     OK,
     "Loads a colour space conversion matrix."},
    {kGetVblankSyncpt,
     "NVDISP_GET_VBLANK_SYNCPT",
     kInOut4,
     kOp | kPure,
     {},
     0,
     {},
     OK,
     "Returns the syncpoint the head increments at vblank."},
    {kGetUnderflows,
     "NVDISP_GET_UNDERFLOWS",
     kUnderflowsF,
     kOp | kPure,
     {},
     0,
     {},
     OK,
     "Reports the head's underflow counters."},
    {kSetCmu,
     "NVDISP_SET_CMU",
     kSetCmuF,
     kOp,
     {},
     0,
     {},
     OK,
     "Loads colour management unit tables."},
    {kDpms, "NVDISP_DPMS", kInOut4, kOp, {}, 0, {}, OK, "Changes the head's power state."},
    {kGetAviInfoframe,
     "NVDISP_GET_AVI_INFOFRAME",
     kGetAviF,
     kOp | kPure,
     {},
     0,
     {},
     OK,
     "Reads the HDMI AVI infoframe."},
    {kSetAviInfoframe,
     "NVDISP_SET_AVI_INFOFRAME",
     kSetAviF,
     kOp,
     {},
     0,
     {},
     OK,
     "Writes the HDMI AVI infoframe."},
    {kGetModeDb,
     "NVDISP_GET_MODE_DB",
     kModeDbF,
     kOp | kPure,
     {},
     0,
     {},
     OK,
     "Returns the list of modes the head supports."},
    {kPanelGetVendorId,
     "NVDISP_PANEL_GET_VENDOR_ID",
     kVendorIdF,
     kOp | kPure,
     {},
     0,
     {},
     OK,
     "Reads the built-in panel's vendor id."},
    {kGetMode2,
     "NVDISP_GET_MODE2",
     kGetMode2F,
     kOp | kPure,
     {},
     0,
     {},
     OK,
     "Reports the head's current timings (extended form).",
     {},
     {},
     "NVDISP_GET_MODE"},
    {kSetMode2,
     "NVDISP_SET_MODE2",
     kSetMode2F,
     kOp,
     {},
     0,
     {},
     OK,
     "Programs timings (extended form).",
     {},
     {},
     "NVDISP_SET_MODE"},
    {kValidateMode2,
     "NVDISP_VALIDATE_MODE2",
     kValidateMode2F,
     kOp | kPure,
     {},
     0,
     {},
     OK,
     "Checks timings (extended form).",
     {},
     {},
     "NVDISP_VALIDATE_MODE"},
    {kGetModeDb2,
     "NVDISP_GET_MODE_DB2",
     kModeDb2F,
     kOp | kPure,
     {},
     0,
     {},
     OK,
     "Returns the supported modes (extended form).",
     {},
     {},
     "NVDISP_GET_MODE_DB"},
    {kGetWinmask,
     "NVDISP_GET_WINMASK",
     kInOut4,
     kOp | kPure,
     {},
     0,
     {},
     OK,
     "Returns the mask of windows attached to the head."},
    {kGetBacklightRange,
     "NVDISP_GET_BACKLIGHT_RANGE",
     kBacklightRangeF,
     kPure,
     {},
     0,
     k1000,
     OK,
     "Reports the lowest and highest backlight intensity."},
    {kSetBacklightRangeMax,
     "NVDISP_SET_BACKLIGHT_RANGE_MAX",
     kBacklightMaxF,
     0,
     {},
     0,
     k1000,
     OK,
     "Sets the highest backlight intensity."},
    {kSetBacklightRangeMin,
     "NVDISP_SET_BACKLIGHT_RANGE_MIN",
     kBacklightMinF,
     0,
     {},
     0,
     k1100,
     OK,
     "Sets the lowest backlight intensity."},
    {kSendPanelMsg,
     "NVDISP_SEND_PANEL_MSG",
     kSendPanelMsgF,
     0,
     {},
     0,
     k1100,
     OK,
     "Writes a raw DPAUX message to the panel."},
    {kGetPanelData,
     "NVDISP_GET_PANEL_DATA",
     kGetPanelDataF,
     kPure,
     {},
     0,
     k1100,
     OK,
     "Reads a raw DPAUX message from the panel."},
};
static_assert(TableIsSound(kIoctls), "nvdisp layouts disagree with their codes");
static_assert(sizeof(Mode) == IocSize(kGetMode));
static_assert(sizeof(Mode) == IocSize(kSetMode));
static_assert(sizeof(Mode) == IocSize(kValidateMode));
static_assert(sizeof(FlipWindow) == 136);
static_assert(sizeof(Flip) == IocSize(kFlip));
static_assert(sizeof(Mode2) == IocSize(kSetMode2));
static_assert(sizeof(ModeDb) == IocSize(kGetModeDb));
static_assert(sizeof(ModeDb2) == IocSize(kGetModeDb2));
static_assert(sizeof(BacklightRange) == IocSize(kGetBacklightRange));
static_assert(sizeof(BacklightRangeMax) == IocSize(kSetBacklightRangeMax));
static_assert(sizeof(BacklightRangeMin) == IocSize(kSetBacklightRangeMin));
static_assert(sizeof(PanelMsg) == IocSize(kSendPanelMsg));
static_assert(sizeof(PanelMsg) == IocSize(kGetPanelData));

NVS_CHECK_MEMBER(kGetModeF, Mode, vmode);
NVS_CHECK_MEMBER(kGetModeF, Mode, reserved);
NVS_CHECK_MEMBER(kSetModeF, Mode, vmode);
NVS_CHECK_MEMBER(kSetModeF, Mode, reserved);
NVS_CHECK_MEMBER(kValidateModeF, Mode, vmode);
NVS_CHECK_MEMBER(kValidateModeF, Mode, reserved);
NVS_CHECK_MEMBER(kBacklightRangeF, BacklightRange, min);
NVS_CHECK_MEMBER(kBacklightRangeF, BacklightRange, max);
NVS_CHECK_MEMBER(kBacklightMaxF, BacklightRangeMax, max);
NVS_CHECK_MEMBER(kBacklightMinF, BacklightRangeMin, min);
NVS_CHECK_MEMBER(kSendPanelMsgF, PanelMsg, cmd);
NVS_CHECK_MEMBER(kSendPanelMsgF, PanelMsg, addr);
NVS_CHECK_MEMBER(kSendPanelMsgF, PanelMsg, size);
NVS_CHECK_MEMBER(kSendPanelMsgF, PanelMsg, msg);
NVS_CHECK_MEMBER(kGetPanelDataF, PanelMsg, cmd);
NVS_CHECK_MEMBER(kGetPanelDataF, PanelMsg, addr);
NVS_CHECK_MEMBER(kGetPanelDataF, PanelMsg, size);
NVS_CHECK_MEMBER(kGetPanelDataF, PanelMsg, msg);

}  // namespace

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::nvdisp
