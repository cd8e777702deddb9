#include "abi/devices/nvhdcp_up_ctrl.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nvhdcp_up_ctrl {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, IO = Dir::kInOut;

// Opaque payloads: Switchbrew names these ioctls but shows no struct.
constexpr Field kInOut1160[] = {{"data", 0, kU8, 1160, IO}};
constexpr Field kIn1[] = {{"data", 0, kU8, 1, I}};
constexpr Field kInOut8[] = {{"data", 0, kU8, 8, IO}};
constexpr Field kInOut1[] = {{"data", 0, kU8, 1, IO}};

constexpr NvError OK = NvError::kSuccess;

constexpr IoctlDesc kIoctls[] = {
    {kReadStatus,
     "NVHDCP_READ_STATUS",
     kInOut1160,
     kOpaque | kPure,
     {},
     0,
     {},
     OK,
     "Reads the HDCP link status."},
    {kReadM,
     "NVHDCP_READ_M",
     kInOut1160,
     kOpaque | kPure,
     {},
     0,
     {},
     OK,
     "Reads the HDCP link status with the M0 verification value."},
    {kEnable, "NVHDCP_ENABLE", kIn1, kOpaque, {}, 0, {}, OK, "Turns HDCP on or off."},
    {kCtrlStateTransitEventData,
     "NVHDCP_CTRL_STATE_TRANSIT_EVENT_DATA",
     kInOut8,
     kOpaque,
     {},
     0,
     {},
     OK,
     "Exchanges the event that signals HDCP state changes."},
    {kCtrlStateCb,
     "NVHDCP_CTRL_STATE_CB",
     kInOut1,
     kOpaque,
     {},
     0,
     {},
     OK,
     "Exchanges the HDCP state-change callback state."},
};
static_assert(TableIsSound(kIoctls), "nvhdcp_up-ctrl layouts disagree with their codes");

}  // namespace

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::nvhdcp_up_ctrl
