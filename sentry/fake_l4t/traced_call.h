// One trapped call of a program run under `nvsentry fake-l4t DIR -- PROGRAM`
// (sentry/fake_l4t/fake_l4t_program.h), served while its thread is stopped for the fake (a
// seccomp SECCOMP_RET_TRACE stop at the ioctl's entry; the fake is its ptrace tracer).
//
// The call is the fake's when its fd is an open of DIR's files: then the fake serves it
// (hostshim::fake_l4t::FakeJetson::Ioctl, the same as the filesystem's calls) and the ioctl itself
// is skipped, its result set by the fake. An fd the call hands out (L4T-NODE-7) is made by the
// caller itself: the fake turns the stopped ioctl into openat(DIR/node) in the caller (the path
// written below its stack's red zone), which the filesystem serves as any open, then identifies
// the new fd's session and gives the caller's registers back with the ioctl's result. nvmap's
// handle fds and TSG event fds are opens of DIR's unlisted handle and event files made the same
// way; GET_FD and FROM_FD are a fcntl(F_DUPFD_CLOEXEC), FREE a close, a fence fd an eventfd2, each
// run by the caller in the ioctl's place. Any other call goes on natively. x86-64 only (the
// registers); elsewhere the fake's calls answer ENOTTY.
#pragma once

#include <sys/types.h>

#include <string>

#include "hostshim/fake_l4t/fake_jetson.h"

namespace nvsentry::sentry {

struct TracedServer {
  const std::string& dir;  // where the filesystem is attached
  dev_t dev;               // its st_dev
  hostshim::fake_l4t::FakeJetson& fake;
};

// Serves the call thread `tid` is stopped in (a PTRACE_EVENT_SECCOMP stop) and resumes it. Runs on
// the tracer's thread.
void ServeTracedCall(const TracedServer& server, pid_t tid);

}  // namespace nvsentry::sentry
