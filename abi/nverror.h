// NvError, the nvdrv result code (Switchbrew), and the one table that maps it to a Linux errno for
// guests that speak the Linux ioctl convention.
#pragma once

#include <cstdint>
#include <string_view>

namespace nvsentry::abi {

enum class NvError : uint32_t {
  kSuccess = 0x0,
  kNotImplemented = 0x1,
  kNotSupported = 0x2,
  kNotInitialized = 0x3,
  kBadParameter = 0x4,
  kTimeout = 0x5,
  kInsufficientMemory = 0x6,
  kReadOnlyAttribute = 0x7,
  kInvalidState = 0x8,
  kInvalidAddress = 0x9,
  kInvalidSize = 0xA,
  kBadValue = 0xB,
  kAlreadyAllocated = 0xD,
  kBusy = 0xE,
  kResourceError = 0xF,
  kCountMismatch = 0x10,
  kOverFlow = 0x11,
  kInsufficientTransferMemory = 0x1000,
  kInsufficientVideoMemory = 0x10000,
  kBadSurfaceColorScheme = 0x10001,
  kInvalidSurface = 0x10002,
  kSurfaceNotSupported = 0x10003,
  kDispInitFailed = 0x20000,
  kDispAlreadyAttached = 0x20001,
  kDispTooManyDisplays = 0x20002,
  kDispNoDisplaysAttached = 0x20003,
  kDispModeNotSupported = 0x20004,
  kDispNotFound = 0x20005,
  kDispAttachDissallowed = 0x20006,
  kDispTypeNotSupported = 0x20007,
  kDispAuthenticationFailed = 0x20008,
  kDispNotAttached = 0x20009,
  kDispSamePwrState = 0x2000A,
  kDispEdidFailure = 0x2000B,
  kDispDsiReadAckError = 0x2000C,
  kDispDsiReadInvalidResp = 0x2000D,
  kFileWriteFailed = 0x30000,
  kFileReadFailed = 0x30001,
  kEndOfFile = 0x30002,
  kFileOperationFailed = 0x30003,
  kDirOperationFailed = 0x30004,
  kEndOfDirList = 0x30005,
  kConfigVarNotFound = 0x30006,
  kInvalidConfigVar = 0x30007,
  kLibraryNotFound = 0x30008,
  kSymbolNotFound = 0x30009,
  kMemoryMapFailed = 0x3000A,
  kIoctlFailed = 0x3000F,
  kAccessDenied = 0x30010,
  kDeviceNotFound = 0x30011,
  kKernelDriverNotFound = 0x30012,
  kFileNotFound = 0x30013,
  kPathAlreadyExists = 0x30014,
  kModuleNotPresent = 0xA000E,
};

struct NvErrorInfo {
  NvError code;
  std::string_view name;
  int err;  // the errno a Linux guest sees; 0 for Success
};

// Every NvError of Switchbrew, in code order.
const NvErrorInfo* AllNvErrors(size_t* count);

std::string_view NvErrorName(NvError e);  // "Unknown" for a code Switchbrew does not list
int NvErrorToErrno(NvError e);            // EIO for a code Switchbrew does not list

}  // namespace nvsentry::abi
