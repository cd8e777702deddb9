#include "abi/devices/nverpt_ctrl.h"

#include <cstddef>

#include "abi/layout_check.h"

namespace nvsentry::abi::nverpt_ctrl {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, N = Dir::kNone;
constexpr NvError kOk = NvError::kSuccess;

constexpr Field kSubmitDataF[] = {
    {"TestU64", 0, kU64, 1, I},
    {"TestU32", 8, kU32, 1, I},
    {"padding0", 12, kU8, 4, N},
    {"TestI64", 16, kS64, 1, I},
    {"TestI32", 24, kS32, 1, I},
    {"TestString", 28, kChar, 32, I},
    {"TestU8Array", 60, kU8, 8, I},
    {"TestU8Array_size", 68, kU32, 1, I},
    {"TestU32Array", 72, kU32, 8, I},
    {"TestU32Array_size", 104, kU32, 1, I},
    {"align0", 108, kU8, 4, N},
    {"TestU64Array", 112, kU64, 8, I},
    {"TestU64Array_size", 176, kU32, 1, I},
    {"TestI32Array", 180, kS32, 8, I},
    {"TestI32Array_size", 212, kU32, 1, I},
    {"TestI64Array", 216, kS64, 8, I},
    {"TestI64Array_size", 280, kU32, 1, I},
    {"TestU16", 284, kU16, 1, I},
    {"TestU8", 286, kU8, 1, I},
    {"align1", 287, kU8, 1, N},
    {"TestI16", 288, kS16, 1, I},
    {"TestI8", 290, kS8, 1, I},
    {"padding1", 291, kU8, 5, N},
};
constexpr Field kSubmitDisplayDataF[] = {
    {"CodecType", 0, kU32, 1, I},
    {"DecodeBuffers", 4, kU32, 1, I},
    {"FrameWidth", 8, kU32, 1, I},
    {"FrameHeight", 12, kU32, 1, I},
    {"ColorPrimaries", 16, kU8, 1, I},
    {"TransferCharacteristics", 17, kU8, 1, I},
    {"MatrixCoefficients", 18, kU8, 1, I},
    {"padding", 19, kU8, 1, N},
    {"DisplayWidth", 20, kU32, 1, I},
    {"DisplayHeight", 24, kU32, 1, I},
    {"DARWidth", 28, kU32, 1, I},
    {"DARHeight", 32, kU32, 1, I},
    {"ColorFormat", 36, kU32, 1, I},
    {"ColorSpace", 40, kU32, 8, I},
    {"ColorSpace_size", 72, kU32, 1, I},
    {"SurfaceLayout", 76, kU32, 8, I},
    {"SurfaceLayout_size", 108, kU32, 1, I},
    {"ErrorString", 112, kChar, 64, I},
    {"VideoDecState", 176, kU32, 1, I},
    {"VideoLog", 180, kU8, 3712, I},
    {"VideoLog_size", 3892, kU32, 1, I},
    {"unknown", 3896, kU8, 32, N},  // beyond Switchbrew's members, up to the code's size
};

constexpr FwRange kFrom300{Fw(3, 0, 0)};

constexpr IoctlDesc kIoctls[] = {
    {kTelemetrySubmitData,
     "NVERPT_TELEMETRY_SUBMIT_DATA",
     kSubmitDataF,
     0,
     {},
     0,
     kFrom300,
     kOk,
     "Submits a block of test values from which an error report is made."},
    {kTelemetrySubmitDisplayData,
     "NVERPT_TELEMETRY_SUBMIT_DISPLAY_DATA",
     kSubmitDisplayDataF,
     0,
     {},
     0,
     kFrom300,
     kOk,
     "Submits video/display decode state from which an error report is made."},
};
static_assert(TableIsSound(kIoctls), "nverpt-ctrl layouts disagree with their codes");
static_assert(sizeof(TelemetrySubmitData) == IocSize(kTelemetrySubmitData));
static_assert(sizeof(TelemetrySubmitDisplayData) == IocSize(kTelemetrySubmitDisplayData));
static_assert(offsetof(TelemetrySubmitData, test_u64_array) == 112);
static_assert(offsetof(TelemetrySubmitData, test_i16) == 288);
static_assert(offsetof(TelemetrySubmitDisplayData, video_log_size) == 3892);

NVS_CHECK_MEMBER(kSubmitDataF, TelemetrySubmitData, padding0);
NVS_CHECK_MEMBER(kSubmitDataF, TelemetrySubmitData, align0);
NVS_CHECK_MEMBER(kSubmitDataF, TelemetrySubmitData, align1);
NVS_CHECK_MEMBER(kSubmitDataF, TelemetrySubmitData, padding1);
NVS_CHECK_MEMBER(kSubmitDisplayDataF, TelemetrySubmitDisplayData, padding);
NVS_CHECK_MEMBER(kSubmitDisplayDataF, TelemetrySubmitDisplayData, unknown);

}  // namespace

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::nverpt_ctrl
