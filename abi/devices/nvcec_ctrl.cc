#include "abi/devices/nvcec_ctrl.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nvcec_ctrl {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, O = Dir::kOut, IO = Dir::kInOut;

// Opaque payloads: Switchbrew names these ioctls but shows no struct.
constexpr Field kIn1[] = {{"data", 0, kU8, 1, I}};
constexpr Field kIn4[] = {{"data", 0, kU8, 4, I}};
constexpr Field kOut76[] = {{"data", 0, kU8, 76, O}};
constexpr Field kInOut76[] = {{"data", 0, kU8, 76, IO}};

constexpr NvError OK = NvError::kSuccess;

// READ takes a message off the receive queue, so it is not marked pure.
constexpr IoctlDesc kIoctls[] = {
    {kEnable,
     "NVCEC_CTRL_ENABLE",
     kIn1,
     kOpaque,
     {},
     0,
     {},
     OK,
     "Turns the CEC controller on or off."},
    {kGetPaddr,
     "NVCEC_CTRL_GET_PADDR",
     kOut76,
     kOpaque | kPure,
     {},
     0,
     {},
     OK,
     "Reports the CEC physical address."},
    {kSetLaddr,
     "NVCEC_CTRL_SET_LADDR",
     kIn4,
     kOpaque,
     {},
     0,
     {},
     OK,
     "Sets the CEC logical address."},
    {kWrite, "NVCEC_CTRL_WRITE", kInOut76, kOpaque, {}, 0, {}, OK, "Sends a CEC message."},
    {kRead, "NVCEC_CTRL_READ", kInOut76, kOpaque, {}, 0, {}, OK, "Receives a CEC message."},
    {kGetConnectionStatus,
     "NVCEC_CTRL_GET_CONNECTION_STATUS",
     kOut76,
     kOpaque | kPure,
     {},
     0,
     {},
     OK,
     "Reports whether a CEC bus is connected."},
    {kGetWriteStatus,
     "NVCEC_CTRL_GET_WRITE_STATUS",
     kOut76,
     kOpaque | kPure,
     {},
     0,
     {},
     OK,
     "Reports the outcome of the last CEC send."},
};
static_assert(TableIsSound(kIoctls), "nvcec-ctrl layouts disagree with their codes");

}  // namespace

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::nvcec_ctrl
