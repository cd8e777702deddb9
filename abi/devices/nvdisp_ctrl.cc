#include "abi/devices/nvdisp_ctrl.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nvdisp_ctrl {
namespace {

using enum FieldType;
constexpr Dir O = Dir::kOut, IO = Dir::kInOut;

// Opaque payloads: Switchbrew names these ioctls but shows no struct.
constexpr Field kOut4[] = {{"data", 0, kU8, 4, O}};
constexpr Field kInOut20[] = {{"data", 0, kU8, 20, IO}};
constexpr Field kInOut272[] = {{"data", 0, kU8, 272, IO}};
constexpr Field kInOut8[] = {{"data", 0, kU8, 8, IO}};
constexpr Field kInOut4[] = {{"data", 0, kU8, 4, IO}};
constexpr Field kInOut16[] = {{"data", 0, kU8, 16, IO}};
constexpr Field kOut1[] = {{"data", 0, kU8, 1, O}};

constexpr FwRange kBefore300{0, Fw(3, 0, 0)};
constexpr FwRange kFrom300{Fw(3, 0, 0)};
constexpr FwRange kFrom1100{Fw(11, 0, 0)};
constexpr NvError OK = NvError::kSuccess;

constexpr IoctlDesc kIoctls[] = {
    {kNumOutputs,
     "NVDISP_CTRL_NUM_OUTPUTS",
     kOut4,
     kOpaque | kPure,
     {},
     0,
     {},
     OK,
     "Reports how many display outputs exist."},
    {kGetDisplayProperties,
     "NVDISP_CTRL_GET_DISPLAY_PROPERTIES",
     kInOut20,
     kOpaque | kPure,
     {},
     0,
     {},
     OK,
     "Reports the properties of one display output."},
    {kQueryEdid,
     "NVDISP_CTRL_QUERY_EDID",
     kInOut272,
     kOpaque | kPure,
     {},
     0,
     {},
     OK,
     "Reads the EDID block of a connected display."},
    {kGetExtHpdInOutEvents,
     "NVDISP_CTRL_GET_EXT_HPD_IN_OUT_EVENTS",
     kInOut8,
     kOpaque | kPure,
     {},
     0,
     kFrom300,
     OK,
     "Returns the external hotplug connect and disconnect events together."},
    {kGetExtHpdInEventV1,
     "NVDISP_CTRL_GET_EXT_HPD_IN_EVENT",
     kInOut4,
     kOpaque | kPure,
     {},
     0,
     kBefore300,
     OK,
     "Returns the external hotplug connect event (pre-3.0.0 form)."},
    {kGetExtHpdOutEventV1,
     "NVDISP_CTRL_GET_EXT_HPD_OUT_EVENT",
     kInOut4,
     kOpaque | kPure,
     {},
     0,
     kBefore300,
     OK,
     "Returns the external hotplug disconnect event (pre-3.0.0 form)."},
    {kGetVblankHead0Event,
     "NVDISP_CTRL_GET_VBLANK_HEAD0_EVENT",
     kInOut16,
     kOpaque | kPure,
     {},
     0,
     {},
     OK,
     "Returns the vblank event of display head 0."},
    {kGetVblankHead1Event,
     "NVDISP_CTRL_GET_VBLANK_HEAD1_EVENT",
     kInOut16,
     kOpaque | kPure,
     {},
     0,
     {},
     OK,
     "Returns the vblank event of display head 1."},
    {kSuspend,
     "NVDISP_CTRL_SUSPEND",
     kInOut4,
     kOpaque,
     {},
     0,
     {},
     OK,
     "Suspends or resumes the display controller."},
    {kIsDisplayOled,
     "NVDISP_CTRL_IS_DISPLAY_OLED",
     kOut1,
     kOpaque | kPure,
     {},
     0,
     kFrom1100,
     OK,
     "Reports whether the built-in panel is an OLED panel."},
};
static_assert(TableIsSound(kIoctls), "nvdisp-ctrl layouts disagree with their codes");

}  // namespace

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::nvdisp_ctrl
