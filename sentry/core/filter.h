// The guest's seccomp filter. It traps to the sentry only what the sentry must see: ioctls whose
// magic belongs to a catalogue device and, only when the device nodes are not files the sentry
// serves (sentry/devfs/device_fs.h), the open family, so that device paths can be served.
// It refuses, with EPERM, what would let a guest uncover a host NVIDIA node that the sandbox hid:
// mount-family calls, open_by_handle_at, and mknod of device nodes; and the terminal ioctls that
// inject input into a terminal the guest shares with nvsentry's shell (TIOCSTI, TIOCLINUX).
// Everything else runs natively.
//
// libseccomp builds the program (sentry/core/filter_build.h). It does so at build time too, and the
// sentry takes that copy (sentry/core/filter_prebuilt.h): building costs some 0.2 ms of every
// start.
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace nvsentry::sentry {

enum class TrappedCall : uint8_t { kOther, kOpen, kOpenat, kOpenat2, kCreat, kIoctl };

struct FilterProgram {
  std::vector<sock_filter> code;
};

// One system call the filter may trap, as a notification names it.
struct SyscallRow {
  uint32_t arch;
  int nr;
  TrappedCall kind;
};

// The program: the copy built with nvsentry, or, where that build could not make one, built now.
absl::StatusOr<FilterProgram> BuildGuestFilter(bool trap_opens);

// Installs `prog` on the calling thread and returns the listener fd, or -errno. Tries the
// killable-after-receive mode first (Linux 5.19+), which keeps a received call from being
// interrupted by a non-fatal signal, so a call's effect and its answer cannot come apart.
int LoadGuestFilter(const FilterProgram& prog, bool* killable);

// Classifies a notification's (arch, nr) into what the sentry handles.
class SyscallTable {
 public:
  SyscallTable();
  TrappedCall Classify(uint32_t arch, int nr) const;

 private:
  std::vector<SyscallRow> rows_;
};

}  // namespace nvsentry::sentry
