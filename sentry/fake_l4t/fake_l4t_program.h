// `nvsentry fake-l4t DIR -- PROGRAM [ARGS]`: PROGRAM runs with the fake Jetson's nodes at DIR (the
// FUSE filesystem of sentry/fake_l4t/fake_l4t_fs.h), and the calls that on r32.7.4 hand out a new
// fd (L4T-NODE-7) hand one out. FUSE cannot place an fd in its caller, so those calls never reach
// the filesystem: a seccomp filter on PROGRAM (inherited by everything it starts) traps exactly
// their ioctl codes (sentry/fake_l4t/fake_l4t_codes.h) to the fake (user notification), which
// serves them with the same hostshim::fake_l4t::FakeJetson as the filesystem serves the rest and
// places each new fd in the caller with SECCOMP_IOCTL_NOTIF_ADDFD before it answers. A trapped
// code on an fd that is no open of DIR's files runs natively (the notification answers
// "continue"). Every other call runs natively too: one on DIR's files reaches the filesystem as it
// does without PROGRAM.
//
// Stacked filters: when PROGRAM installs a filter of its own on a child (`nvsentry run`'s guest),
// the child's trapped calls go to the innermost listener (the kernel notifies the most recent
// filter that asks, and its "continue" runs the call without asking older filters); only calls of
// PROGRAM's own and of children without a listener of their own reach this one
// (docs/host-passthrough.md says why a guest never reaches the fake).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "hostshim/fake_l4t/fake_jetson.h"

namespace nvsentry::sentry {

// Runs `argv` (argv[0] looked up in PATH) under the fake's filter and serves its trapped calls
// until it exits; `dir` is where the filesystem (st_dev `dev`) is attached. The exit status to
// leave with: PROGRAM's, 128 + the signal that ended it, 127 when the program was not found, or 1
// with a message on standard error when it could not be started.
int ServeProgram(const std::string& dir, dev_t dev, hostshim::fake_l4t::FakeJetson& fake,
                 const std::vector<std::string>& argv);

}  // namespace nvsentry::sentry
