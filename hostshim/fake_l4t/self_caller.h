// The pieces of an L4T call whose caller is this process itself (the in-process Jetson,
// in_process_jetson.h; the translation fuzzer's interposed ioctl): its memory, reached in place,
// and an answer the calling thread waits for.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "hostshim/fake_l4t/request.h"

namespace nvsentry::hostshim::fake_l4t {

// The caller's memory is ours: its user pointers are read and written in place. Only trusted
// code calls through it (the host backend's own, with its own buffers; tests): the lowest 64 KiB,
// which nothing maps (vm.mmap_min_addr), are EFAULT, and any other pointer is trusted as a
// kernel's copy_from_user would not trust it.
class SelfMemoryCaller : public L4tCaller {
 public:
  static constexpr uint64_t kLowestMapped = 0x10000;
  pid_t tid() const override { return tid_; }
  bool Read(uint64_t addr, std::span<uint8_t> dst) override {
    if (dst.empty()) return true;
    if (addr < kLowestMapped) return false;
    std::memcpy(dst.data(), reinterpret_cast<const void*>(addr), dst.size());
    return true;
  }
  bool Write(uint64_t addr, std::span<const uint8_t> src) override {
    if (src.empty()) return true;
    if (addr < kLowestMapped) return false;
    std::memcpy(reinterpret_cast<void*>(addr), src.data(), src.size());
    return true;
  }
  bool Transfer(std::span<const CallerPiece> pieces, bool to_caller) override {
    for (const CallerPiece& p : pieces) {
      if (p.len == 0) continue;
      if (p.caller_addr < kLowestMapped) return false;
      if (to_caller)
        std::memcpy(reinterpret_cast<void*>(p.caller_addr), p.local, p.len);
      else
        std::memcpy(p.local, reinterpret_cast<const void*>(p.caller_addr), p.len);
    }
    return true;
  }

 private:
  const pid_t tid_ = gettid();
};

// The answer of one call, waited for by the calling thread (a wait's may come from another).
class WaitedReply : public L4tReply {
 public:
  void Send(int err, std::span<const uint8_t> out) override {
    absl::MutexLock l(&mu_);
    if (done_) return;
    done_ = true;
    err_ = err;
    out_.assign(out.begin(), out.end());
  }
  bool Abandoned() override { return false; }
  // Waits for the answer: the errno (0: success).
  int Wait() {
    absl::MutexLock l(&mu_);
    mu_.Await(absl::Condition(&done_));
    return err_;
  }
  bool done() {
    absl::MutexLock l(&mu_);
    return done_;
  }
  // The bytes to copy back (once done).
  std::vector<uint8_t> out() {
    absl::MutexLock l(&mu_);
    return out_;
  }

 private:
  absl::Mutex mu_;
  bool done_ = false;
  int err_ = 0;
  std::vector<uint8_t> out_;
};

}  // namespace nvsentry::hostshim::fake_l4t
