// What happens when the sentry itself faults: a backtrace (libunwind) on stderr and in the log
// file, the guest killed (its init, and so its whole PID namespace), then the default action.
#pragma once

#include <sys/types.h>

namespace nvsentry::sentry {

void InstallCrashHandler(int log_fd);
// The process to kill if the sentry crashes (the guest's init).
void SetCrashVictim(pid_t pid);
// True once a thread is reporting a crash; other threads must then not end the process first.
bool CrashInProgress();
// Each thread needs its own alternate stack so that a stack overflow can still be reported.
void InstallCrashStackForThread();
[[noreturn]] void CrashForTest();

}  // namespace nvsentry::sentry
