#include "abi/nverror.h"

#include <cerrno>
#include <iterator>

namespace nvsentry::abi {
namespace {

// The guest contract's table (docs/guest-abi.md is written from the same rows).
constexpr NvErrorInfo kErrors[] = {
    {NvError::kSuccess, "Success", 0},
    {NvError::kNotImplemented, "NotImplemented", ENOSYS},
    {NvError::kNotSupported, "NotSupported", EOPNOTSUPP},
    {NvError::kNotInitialized, "NotInitialized", ENODEV},
    {NvError::kBadParameter, "BadParameter", EINVAL},
    {NvError::kTimeout, "Timeout", ETIMEDOUT},
    {NvError::kInsufficientMemory, "InsufficientMemory", ENOMEM},
    {NvError::kReadOnlyAttribute, "ReadOnlyAttribute", EROFS},
    {NvError::kInvalidState, "InvalidState", EINVAL},
    {NvError::kInvalidAddress, "InvalidAddress", EFAULT},
    {NvError::kInvalidSize, "InvalidSize", EINVAL},
    {NvError::kBadValue, "BadValue", EINVAL},
    {NvError::kAlreadyAllocated, "AlreadyAllocated", EEXIST},
    {NvError::kBusy, "Busy", EBUSY},
    {NvError::kResourceError, "ResourceError", EIO},
    {NvError::kCountMismatch, "CountMismatch", EINVAL},
    {NvError::kOverFlow, "OverFlow", EINVAL},
    {NvError::kInsufficientTransferMemory, "InsufficientTransferMemory", ENOMEM},
    {NvError::kInsufficientVideoMemory, "InsufficientVideoMemory", ENOMEM},
    {NvError::kBadSurfaceColorScheme, "BadSurfaceColorScheme", EINVAL},
    {NvError::kInvalidSurface, "InvalidSurface", EINVAL},
    {NvError::kSurfaceNotSupported, "SurfaceNotSupported", EOPNOTSUPP},
    {NvError::kDispInitFailed, "DispInitFailed", EIO},
    {NvError::kDispAlreadyAttached, "DispAlreadyAttached", EEXIST},
    {NvError::kDispTooManyDisplays, "DispTooManyDisplays", ENOSPC},
    {NvError::kDispNoDisplaysAttached, "DispNoDisplaysAttached", ENODEV},
    {NvError::kDispModeNotSupported, "DispModeNotSupported", EOPNOTSUPP},
    {NvError::kDispNotFound, "DispNotFound", ENODEV},
    {NvError::kDispAttachDissallowed, "DispAttachDissallowed", EPERM},
    {NvError::kDispTypeNotSupported, "DispTypeNotSupported", EOPNOTSUPP},
    {NvError::kDispAuthenticationFailed, "DispAuthenticationFailed", EACCES},
    {NvError::kDispNotAttached, "DispNotAttached", ENODEV},
    {NvError::kDispSamePwrState, "DispSamePwrState", EALREADY},
    {NvError::kDispEdidFailure, "DispEdidFailure", EIO},
    {NvError::kDispDsiReadAckError, "DispDsiReadAckError", EIO},
    {NvError::kDispDsiReadInvalidResp, "DispDsiReadInvalidResp", EIO},
    {NvError::kFileWriteFailed, "FileWriteFailed", EIO},
    {NvError::kFileReadFailed, "FileReadFailed", EIO},
    {NvError::kEndOfFile, "EndOfFile", ENODATA},
    {NvError::kFileOperationFailed, "FileOperationFailed", EIO},
    {NvError::kDirOperationFailed, "DirOperationFailed", EIO},
    {NvError::kEndOfDirList, "EndOfDirList", ENODATA},
    {NvError::kConfigVarNotFound, "ConfigVarNotFound", ENOENT},
    {NvError::kInvalidConfigVar, "InvalidConfigVar", EINVAL},
    {NvError::kLibraryNotFound, "LibraryNotFound", ENOENT},
    {NvError::kSymbolNotFound, "SymbolNotFound", ENOENT},
    {NvError::kMemoryMapFailed, "MemoryMapFailed", ENOMEM},
    {NvError::kIoctlFailed, "IoctlFailed", EIO},
    {NvError::kAccessDenied, "AccessDenied", EACCES},
    {NvError::kDeviceNotFound, "DeviceNotFound", ENODEV},
    {NvError::kKernelDriverNotFound, "KernelDriverNotFound", ENODEV},
    {NvError::kFileNotFound, "FileNotFound", ENOENT},
    {NvError::kPathAlreadyExists, "PathAlreadyExists", EEXIST},
    {NvError::kModuleNotPresent, "ModuleNotPresent", ENODEV},
};

const NvErrorInfo* Find(NvError e) {
  for (const auto& info : kErrors)
    if (info.code == e) return &info;
  return nullptr;
}

}  // namespace

const NvErrorInfo* AllNvErrors(size_t* count) {
  *count = std::size(kErrors);
  return kErrors;
}

std::string_view NvErrorName(NvError e) {
  const NvErrorInfo* info = Find(e);
  return info ? info->name : "Unknown";
}

int NvErrorToErrno(NvError e) {
  const NvErrorInfo* info = Find(e);
  return info ? info->err : EIO;
}

}  // namespace nvsentry::abi
