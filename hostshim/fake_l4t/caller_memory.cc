#include "hostshim/fake_l4t/caller_memory.h"

#include <sys/uio.h>

#include <algorithm>
#include <vector>

namespace nvsentry::hostshim::fake_l4t {
namespace {

// iovecs per process_vm_* call (the kernel's UIO_MAXIOV).
constexpr size_t kMaxIov = 1024;
// Bytes per iovec: process_vm_* move at most MAX_RW_COUNT per call; stay far below it.
constexpr size_t kMaxChunk = size_t{1} << 30;

}  // namespace

bool MoveCallerMemory(pid_t tid, std::span<const CallerPiece> pieces, bool to_caller) {
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

}  // namespace nvsentry::hostshim::fake_l4t
