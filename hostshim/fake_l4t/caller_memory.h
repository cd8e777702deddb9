// A caller's memory as the fake Jetson reaches it: process_vm_readv and process_vm_writev on the
// caller's thread, batched (UIO_MAXIOV pieces, and far below MAX_RW_COUNT bytes, per call).
#pragma once

#include <sys/types.h>

#include <span>

#include "hostshim/fake_l4t/request.h"

namespace nvsentry::hostshim::fake_l4t {

// Moves every piece between thread `tid`'s memory and ours (to the caller when `to_caller`), or
// fails: a short count means a bad page on the caller's side (the call answers EFAULT).
bool MoveCallerMemory(pid_t tid, std::span<const CallerPiece> pieces, bool to_caller);

}  // namespace nvsentry::hostshim::fake_l4t
