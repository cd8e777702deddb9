#include "hostshim/host/host_call.h"

#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>

#include "abi/decode.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hostshim/host/host_port.h"
#include "hostshim/rate_limited_log.h"

namespace nvsentry::hostshim::host {
namespace {

void Trace(const HostNote& note, pid_t tid, abi::l4t::L4tNode node, uint32_t code,
           std::span<const uint8_t> before, std::span<const uint8_t> after, int err, bool value_arg,
           uint64_t value) {
  const abi::IoctlDesc* desc = abi::l4t::FindL4tIoctl(node, code);
  const std::string name = desc ? std::string(desc->name) : absl::StrFormat("0x%08X", code);
  const std::string path(abi::l4t::Node(node).path.empty() ? "host fd" : abi::l4t::Node(node).path);
  std::string line = absl::StrCat("  host ioctl(", path, ", ", name, ", ");
  if (value_arg) {
    absl::StrAppend(&line, value);
  } else if (desc != nullptr) {
    absl::StrAppend(&line, abi::DecodeCall(*desc, abi::Via::kDirect, before, {}, {}, abi::Show::kIn,
                                           abi::DecodeFormat::kText));
  }
  absl::StrAppend(&line, ") = ", err == 0 ? "0" : absl::StrCat("-1 ", strerrorname_np(err)));
  if (err == 0 && desc != nullptr && !value_arg && !after.empty())
    absl::StrAppend(&line, " -> ",
                    abi::DecodeCall(*desc, abi::Via::kDirect, after, {}, {}, abi::Show::kOut,
                                    abi::DecodeFormat::kText));
  note(tid, line);
}

int Do(int fd, uint32_t code, unsigned long arg) {
  if (std::optional<int> served = PortIoctl(fd, code, arg)) return *served;
  int r;
  do {
    r = ioctl(fd, code, arg);
  } while (r < 0 && errno == EINTR);
  return r < 0 ? errno : 0;
}

}  // namespace

abi::NvError HostCallResult::nv() const { return NvErrorOfHostErrno(err); }

HostCallResult HostIoctl(int fd, abi::l4t::L4tNode node, uint32_t code, std::span<uint8_t> arg,
                         const HostNote& note, pid_t tid) {
  // The driver copies _IOC_SIZE bytes each way: an argument shorter than that is the sentry's
  // bug, refused before anything writes past it.
  if (arg.size() < _IOC_SIZE(code)) {
    NVS_LOG_LIMITED(spdlog::level::err, "host backend: a {}-byte argument for code 0x{:08X}",
                    arg.size(), code);
    return HostCallResult{EINVAL};
  }
  std::vector<uint8_t> before;
  if (note) before.assign(arg.begin(), arg.end());
  HostCallResult r{Do(fd, code, reinterpret_cast<unsigned long>(arg.data()))};
  if (note) Trace(note, tid, node, code, before, arg, r.err, false, 0);
  return r;
}

HostCallResult HostIoctlValue(int fd, abi::l4t::L4tNode node, uint32_t code, uint64_t value,
                              const HostNote& note, pid_t tid) {
  HostCallResult r{Do(fd, code, value)};
  if (note) Trace(note, tid, node, code, {}, {}, r.err, true, value);
  return r;
}

abi::NvError NvErrorOfHostErrno(int err) {
  using abi::NvError;
  switch (err) {
    case 0: return NvError::kSuccess;
    case EINVAL:
    case ERANGE:
    case E2BIG: return NvError::kBadParameter;
    case ENOMEM:
    case ENOSPC: return NvError::kInsufficientMemory;
    case EFAULT: return NvError::kInvalidAddress;
    case ETIMEDOUT: return NvError::kTimeout;
    case EBUSY:
    case EAGAIN: return NvError::kBusy;
    case ENOTTY:
    case EOPNOTSUPP:
    case ENOSYS: return NvError::kNotSupported;
    case EPERM:
    case EACCES: return NvError::kAccessDenied;
    case ENODEV:
    case ENXIO: return NvError::kNotInitialized;
    case EEXIST: return NvError::kAlreadyAllocated;
    case ENOENT: return NvError::kDeviceNotFound;
    default: return NvError::kIoctlFailed;
  }
}

}  // namespace nvsentry::hostshim::host
