// The rules of docs/host-abi.md that a translation's L4T calls must keep, checked independently of
// hostshim/host as each call reaches the in-process fake (in_process_l4t.h). A broken rule aborts
// with `xlate_fuzz: rule broken: ...` (a libFuzzer crash). What is checked:
//
// - L4T-NODE-2/5/6: every code is one the node's table (abi/l4t) has, so inside the node's
//   limits, and not one r32.7.4 answers ENOTTY (nvmap FROM_ID, GET_ID, PARAM; the channel's
//   EVENT_ID_CTRL and SET_TIMESLICE).
// - L4T-NODE-8: an fd named in an argument (AS and TSG BIND_CHANNEL, UNBIND_CHANNEL, SET_NVMAP_FD)
//   is one of the host fds the translation holds, of the right node; an nvmap handle
//   (MAP_BUFFER_EX, ALLOC, READ, WRITE, FREE, PARAMETERS, WAIT, SET_ERROR_NOTIFIER) is one its
//   nvmap opens made and have not freed.
// - L4T-AS-6, -8: MAP_BUFFER_EX has DIRECT_KIND_CTRL, and an anywhere map carries no
//   mapping_size and no buffer_offset.
// - L4T-TSG-2..5: no setup call (ALLOC_GPFIFO(_EX), SETUP_BIND, ALLOC_OBJ_CTX, SUBMIT_GPFIFO,
//   WAIT, ZCULL_BIND) on a channel before a TSG's BIND_CHANNEL of it succeeded.
// - L4T-CH-12: SET_ERROR_NOTIFIER never with `mem` 0.
// - No user pointer of a call (abi/l4t's user_ptrs) points into the guest's memory: the guest's
//   data never reaches the host by its own address.
// - SYNCPT_INCR only of a syncpoint a channel the translation still holds was answered as its
//   fence (the guest increments only its own syncpoints).
// - A guest call whose correspondence plan is NotSupported makes no host call.
// - What a SUBMIT_GPFIFO that reaches the host makes the GPU fetch (each entry's words, read back
//   from the host's object behind the channel's address space as this checker recorded its
//   mappings) binds no class the policy refuses and increments no syncpoint the guest does not
//   own by a host method (xlate_stream.h); every entry lies inside one mapping.
// - No L4T code on an fd number the translation closed (a stale host fd).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "abi/catalogue.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "tests/fuzz/in_process_l4t.h"
#include "tests/fuzz/xlate_stream.h"

namespace nvsentry::fuzz {

[[noreturn]] void RuleBroken(const char* rule, const char* what, uint32_t code, uint64_t value);

class XlateRules : public L4tObserver {
 public:
  // The guest's memory: [begin, end).
  void SetGuestMemory(uint64_t begin, uint64_t end) {
    guest_begin_ = begin;
    guest_end_ = end;
  }
  // The classes a pushbuffer may bind (the stream policy's; null: any).
  void SetClassAllowed(std::function<bool(uint32_t cls)> allowed) {
    class_allowed_ = std::move(allowed);
  }
  // The guest call being served on thread `tid` (null: none), for the NotSupported rule.
  void GuestCall(pid_t tid, const abi::DeviceDesc* device, const abi::IoctlDesc* desc);
  // The host fds of `node` open now.
  size_t OpenOf(abi::l4t::L4tNode node) const;
  // Host calls made so far (all threads), for the status line.
  uint64_t host_calls() const { return host_calls_.load(); }

  void Opened(int fd, abi::l4t::L4tNode node) override;
  void Closed(int fd) override;
  void Duplicated(int from, int to, abi::l4t::L4tNode node) override;
  void Before(int fd, abi::l4t::L4tNode node, uint32_t code, std::span<const uint8_t> arg,
              uint64_t value) override;
  void After(int fd, abi::l4t::L4tNode node, uint32_t code, std::span<const uint8_t> arg,
             uint64_t value, int err) override;
  void StaleFd(int fd, uint32_t code) override;

 private:
  struct Mapping {
    uint32_t handle;
    uint64_t buffer_offset, size;
  };
  struct Fd {
    abi::l4t::L4tNode node;
    int as_fd = -1;                              // a channel: the address space it was bound to
    std::map<uint64_t, Mapping> mappings;        // an address space: by GPU VA
    bool in_tsg = false;                         // a channel: a TSG's BIND_CHANNEL of it succeeded
    std::optional<uint32_t> syncpoint;           // a channel: its fence's syncpoint
    absl::flat_hash_map<uint32_t, int> handles;  // an nvmap open: live handles (references)
  };
  bool IsFd(uint32_t fd, abi::l4t::L4tNode node) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool LiveHandle(uint32_t handle) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool OwnedSyncpoint(uint32_t id) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CheckPointers(const abi::IoctlDesc& desc, uint32_t code, std::span<const uint8_t> arg) const;
  // A read of one entry's words: from `handle` of nvmap open `fd`.
  struct EntryRead {
    int fd;
    uint32_t handle;
    uint64_t offset;
    uint32_t words;
  };
  std::vector<EntryRead> EntriesOf(int fd, uint32_t code, std::span<const uint8_t> arg)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CheckStream(uint32_t code, const std::vector<EntryRead>& reads);
  void Record(int fd, abi::l4t::L4tNode node, uint32_t code, std::span<const uint8_t> arg,
              uint64_t value) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CheckFdsAndHandles(int fd, abi::l4t::L4tNode node, uint32_t code,
                          std::span<const uint8_t> arg, uint64_t value)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  uint64_t guest_begin_ = 0, guest_end_ = 0;
  std::function<bool(uint32_t cls)> class_allowed_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<int, Fd> fds_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint32_t, uint64_t> handle_size_ ABSL_GUARDED_BY(mu_);
  pid_t guest_tid_ ABSL_GUARDED_BY(mu_) = 0;
  const abi::DeviceDesc* guest_device_ ABSL_GUARDED_BY(mu_) = nullptr;
  const abi::IoctlDesc* guest_desc_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::atomic<uint64_t> host_calls_{0};
};

}  // namespace nvsentry::fuzz
