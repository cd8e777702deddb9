// One call to the host's driver, as every translation makes it: the ioctl itself (EINTR
// retried: the sentry's threads take signals), the host's errno turned into the NvError the guest
// sees, and, when tracing, the host call decoded from the L4T tables (abi/l4t) right after the
// guest's, so `--trace` shows both sides.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include "abi/l4t/nodes.h"
#include "abi/nverror.h"

namespace nvsentry::hostshim::host {

// Where a host call's trace line goes (tid: the guest thread whose call it serves); null: nowhere.
using HostNote = std::function<void(pid_t tid, std::string_view text)>;

struct HostCallResult {
  int err = 0;  // the host's errno, 0 on success
  abi::NvError nv() const;
};

// ioctl(fd, code, arg) on the host. `arg` is the host-layout argument (may be empty for _IO
// calls that take a value: then `value` is passed). Traced through `note` when set.
HostCallResult HostIoctl(int fd, abi::l4t::L4tNode node, uint32_t code, std::span<uint8_t> arg,
                         const HostNote& note = nullptr, pid_t tid = 0);
HostCallResult HostIoctlValue(int fd, abi::l4t::L4tNode node, uint32_t code, uint64_t value,
                              const HostNote& note = nullptr, pid_t tid = 0);

template <typename T>
HostCallResult HostIoctlOf(int fd, abi::l4t::L4tNode node, uint32_t code, T& arg,
                           const HostNote& note = nullptr, pid_t tid = 0) {
  return HostIoctl(fd, node, code, {reinterpret_cast<uint8_t*>(&arg), sizeof arg}, note, tid);
}

// The NvError a host errno stands for (docs/host-passthrough.md, "Answers"): one NvError per
// errno, so where several NvErrors share an errno (EINVAL) the guest sees the commonest
// (BadParameter).
abi::NvError NvErrorOfHostErrno(int err);

}  // namespace nvsentry::hostshim::host
