#include "abi/devices/nvdcutil.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nvdcutil {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, O = Dir::kOut, IO = Dir::kInOut;

// Opaque payloads: Switchbrew names these ioctls but shows no struct.
constexpr Field kIn1[] = {{"data", 0, kU8, 1, I}};
// Switchbrew's size column says 1056 but its code 0x42040503 encodes 0x204 = 516 bytes; the code is
// what the guest passes, so the code's size is used.
constexpr Field kEdidF[] = {{"data", 0, kU8, 516, I}};
constexpr Field kModeF[] = {{"data", 0, kU8, 60, O}};
constexpr Field kShortWriteF[] = {{"data", 0, kU8, 12, I}};
constexpr Field kLongWriteF[] = {{"data", 0, kU8, 248, I}};
constexpr Field kDsiReadF[] = {{"data", 0, kU8, 244, IO}};
constexpr Field kDpSettingsF[] = {{"data", 0, kU8, 32, IO}};
constexpr Field kDpConfF[] = {{"data", 0, kU8, 112, O}};

constexpr FwRange k1000{Fw(10, 0, 0)};
constexpr FwRange k1100{Fw(11, 0, 0)};
constexpr NvError OK = NvError::kSuccess;

constexpr IoctlDesc kIoctls[] = {
    {kEnableCrc,
     "NVDCUTIL_ENABLE_CRC",
     kIn1,
     kOpaque,
     {},
     0,
     {},
     OK,
     "Turns output CRC capture on or off."},
    {kVirtualEdidEnable,
     "NVDCUTIL_VIRTUAL_EDID_ENABLE",
     kIn1,
     kOpaque,
     {},
     0,
     {},
     OK,
     "Switches between the real and a virtual EDID."},
    {kVirtualEdidSetData,
     "NVDCUTIL_VIRTUAL_EDID_SET_DATA",
     kEdidF,
     kOpaque,
     {},
     0,
     {},
     OK,
     "Loads the virtual EDID bytes."},
    {kGetMode,
     "NVDCUTIL_GET_MODE",
     kModeF,
     kOpaque | kPure,
     {},
     0,
     {},
     OK,
     "Reports the head's current mode."},
    {kBeginTelemetryTest,
     "NVDCUTIL_BEGIN_TELEMETRY_TEST",
     kIn1,
     kOpaque,
     {},
     0,
     {},
     OK,
     "Starts a display telemetry test."},
    {kDsiPacketTestShortWrite,
     "NVDCUTIL_DSI_PACKET_TEST_SHORT_WRITE",
     kShortWriteF,
     kOpaque,
     {},
     0,
     {},
     OK,
     "Sends a short DSI packet to the panel."},
    {kDsiPacketTestLongWrite,
     "NVDCUTIL_DSI_PACKET_TEST_LONG_WRITE",
     kLongWriteF,
     kOpaque,
     {},
     0,
     {},
     OK,
     "Sends a long DSI packet to the panel."},
    {kDsiPacketTestRead,
     "NVDCUTIL_DSI_PACKET_TEST_READ",
     kDsiReadF,
     kOpaque | kPure,
     {},
     0,
     {},
     OK,
     "Reads a DSI packet back from the panel."},
    {kDpElectricTestEn,
     "NVDCUTIL_DP_ELECTRIC_TEST_EN",
     kIn1,
     kOpaque,
     {},
     0,
     k1000,
     OK,
     "Turns DisplayPort electrical test mode on or off."},
    {kDpElectricTestSettings,
     "NVDCUTIL_DP_ELECTRIC_TEST_SETTINGS",
     kDpSettingsF,
     kOpaque,
     {},
     0,
     k1000,
     OK,
     "Exchanges the DisplayPort electrical test settings."},
    {kDpConfRead,
     "NVDCUTIL_DP_CONF_READ",
     kDpConfF,
     kOpaque | kPure,
     {},
     0,
     k1100,
     OK,
     "Reads the DisplayPort link configuration."},
};
static_assert(TableIsSound(kIoctls), "nvdcutil layouts disagree with their codes");

}  // namespace

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::nvdcutil
