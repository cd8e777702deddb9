#include "sentry/fake_l4t/fake_l4t_caller.h"

#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <fstream>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "hostshim/fake_l4t/caller_memory.h"
#include "hostshim/rate_limited_log.h"
#include "hostshim/unique_fd.h"
#include "sentry/devfs/device_fs.h"
#include "spdlog/spdlog.h"

namespace nvsentry::sentry {
using hostshim::fake_l4t::MoveCallerMemory;

pid_t TgidOf(pid_t tid) {
  std::ifstream status(absl::StrCat("/proc/", tid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    int v = 0;
    if (line.rfind("Tgid:", 0) == 0 && absl::SimpleAtoi(line.substr(5), &v)) return v;
  }
  return -1;
}

bool FakeL4tCaller::Read(uint64_t addr, std::span<uint8_t> dst) {
  const hostshim::fake_l4t::CallerPiece p{addr, dst.data(), dst.size()};
  return dst.empty() || MoveCallerMemory(tid_, {&p, 1}, false);
}

bool FakeL4tCaller::Write(uint64_t addr, std::span<const uint8_t> src) {
  const hostshim::fake_l4t::CallerPiece p{addr, const_cast<uint8_t*>(src.data()), src.size()};
  return src.empty() || MoveCallerMemory(tid_, {&p, 1}, true);
}

bool FakeL4tCaller::Transfer(std::span<const hostshim::fake_l4t::CallerPiece> pieces,
                             bool to_caller) {
  return MoveCallerMemory(tid_, pieces, to_caller);
}

uint64_t FakeL4tCaller::SessionOf(int32_t fd) {
  if (tid_ <= 0 || fd < 0) return 0;
  static std::atomic<int> identifying{0};
  if (identifying.fetch_add(1) >= kMaxIdentifying) {
    identifying.fetch_sub(1);
    NVS_LOG_LIMITED(spdlog::level::warn, "fake-l4t: too many fds being identified at once");
    return 0;
  }
  const absl::Cleanup done = [] { identifying.fetch_sub(1); };
  const pid_t tgid = TgidOf(tid_);
  if (tgid <= 0) return 0;
  const hostshim::UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, tgid, 0)));
  if (!pidfd) return 0;
  const hostshim::UniqueFd copy(static_cast<int>(syscall(SYS_pidfd_getfd, pidfd.get(), fd, 0)));
  if (!copy) return 0;
  struct stat st {};
  if (fstat(copy.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != dev_) return 0;
  const int64_t handle = IdentifyDeviceFile(copy.get());
  return handle > 0 ? static_cast<uint64_t>(handle) : 0;
}

bool FakeL4tCaller::IsOpenFd(int32_t fd) {
  if (tid_ <= 0 || fd < 0) return false;
  const pid_t tgid = TgidOf(tid_);
  const hostshim::UniqueFd pidfd(tgid > 0 ? static_cast<int>(syscall(SYS_pidfd_open, tgid, 0))
                                          : -1);
  if (!pidfd) return false;
  const hostshim::UniqueFd copy(static_cast<int>(syscall(SYS_pidfd_getfd, pidfd.get(), fd, 0)));
  return static_cast<bool>(copy);
}

}  // namespace nvsentry::sentry
