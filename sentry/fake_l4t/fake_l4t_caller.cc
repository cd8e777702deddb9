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
#include "hostshim/rate_limited_log.h"
#include "hostshim/unique_fd.h"
#include "sentry/devfs/device_fs.h"
#include "spdlog/spdlog.h"

namespace nvsentry::sentry {
namespace {

// iovecs per process_vm_* call (the kernel's UIO_MAXIOV).
constexpr size_t kMaxIov = 1024;
// Bytes per iovec: process_vm_* move at most MAX_RW_COUNT per call; stay far below it.
constexpr size_t kMaxChunk = size_t{1} << 30;

// Moves every piece or fails: a short count means a bad page on the caller's side.
bool Move(pid_t tid, std::span<const hostshim::fake_l4t::CallerPiece> pieces, bool to_caller) {
  if (tid <= 0) return false;
  std::vector<iovec> local, remote;
  size_t want = 0;
  auto flush = [&]() {
    if (local.empty()) return true;
    const ssize_t n =
        to_caller
            ? process_vm_writev(tid, local.data(), local.size(), remote.data(), remote.size(), 0)
            : process_vm_readv(tid, local.data(), local.size(), remote.data(), remote.size(), 0);
    const bool ok = n >= 0 && static_cast<size_t>(n) == want;
    local.clear();
    remote.clear();
    want = 0;
    return ok;
  };
  for (const auto& p : pieces) {
    for (uint64_t done = 0; done < p.len;) {
      const size_t len = static_cast<size_t>(std::min<uint64_t>(p.len - done, kMaxChunk));
      if (local.size() == kMaxIov || want + len > kMaxChunk) {
        if (!flush()) return false;
      }
      local.push_back({p.local + done, len});
      remote.push_back({reinterpret_cast<void*>(p.caller_addr + done), len});
      want += len;
      done += len;
    }
  }
  return flush();
}

}  // namespace

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
  return dst.empty() || Move(tid_, {&p, 1}, false);
}

bool FakeL4tCaller::Write(uint64_t addr, std::span<const uint8_t> src) {
  const hostshim::fake_l4t::CallerPiece p{addr, const_cast<uint8_t*>(src.data()), src.size()};
  return src.empty() || Move(tid_, {&p, 1}, true);
}

bool FakeL4tCaller::Transfer(std::span<const hostshim::fake_l4t::CallerPiece> pieces,
                             bool to_caller) {
  return Move(tid_, pieces, to_caller);
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
