#include "sentry/core/guest_memory.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cstring>

namespace nvsentry::sentry {

bool ReadGuest(pid_t tid, uint64_t addr, std::span<uint8_t> dst) {
  if (dst.empty()) return true;
  iovec local{dst.data(), dst.size()};
  iovec remote{reinterpret_cast<void*>(addr), dst.size()};
  return process_vm_readv(tid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(dst.size());
}

bool WriteGuest(pid_t tid, uint64_t addr, std::span<const uint8_t> src) {
  if (src.empty()) return true;
  iovec local{const_cast<uint8_t*>(src.data()), src.size()};
  iovec remote{reinterpret_cast<void*>(addr), src.size()};
  return process_vm_writev(tid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(src.size());
}

std::optional<std::string> ReadGuestString(pid_t tid, uint64_t addr, size_t max_len) {
  static const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::string out;
  char chunk[4096];
  while (out.size() <= max_len) {
    // Read up to the end of the current page only, so a string that ends just before an
    // unmapped page is still readable.
    size_t n = kPage - (addr % kPage);
    n = std::min(n, sizeof(chunk));
    iovec local{chunk, n};
    iovec remote{reinterpret_cast<void*>(addr), n};
    ssize_t got = process_vm_readv(tid, &local, 1, &remote, 1, 0);
    if (got <= 0) return std::nullopt;
    const void* nul = std::memchr(chunk, 0, static_cast<size_t>(got));
    if (nul != nullptr) {
      out.append(chunk, static_cast<const char*>(nul) - chunk);
      return out.size() <= max_len ? std::optional(out) : std::nullopt;
    }
    out.append(chunk, static_cast<size_t>(got));
    addr += static_cast<uint64_t>(got);
  }
  return std::nullopt;
}

}  // namespace nvsentry::sentry
