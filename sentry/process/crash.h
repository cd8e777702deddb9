// What happens when the sentry itself faults: a backtrace (libunwind) on stderr and in the log
// file, the guest killed (its init, and so its whole PID namespace), then the default action.
#pragma once

#include <sys/types.h>

#include <functional>

namespace nvsentry::sentry {

void InstallCrashHandler(int log_fd);
// The backtrace's libunwind is loaded at run time, by its absolute path (and its liblzma's),
// never through the loader's search path, which a guest might have planted a library in: now, or
// on a thread of its own (the sentry asks for that when the guest first asks it something; after
// the first time, a load of an atomic). A crash while it loads waits for it (up to a second); one
// before it is asked for, or where it cannot be loaded, reports no frames.
void LoadCrashUnwinder();
void LoadCrashUnwinderInBackground();
// The process to kill if the sentry crashes (the guest's init), as a pidfd that stays open: a pid
// could name another process once init is reaped, and a crash (or a fault in the clone of
// HandOffTeardown, which inherits the handler) can come after that.
void SetCrashVictim(int pidfd);
// True once a thread is reporting a crash; other threads must then not end the process first.
bool CrashInProgress();
// Each thread needs its own alternate stack so that a stack overflow can still be reported.
void InstallCrashStackForThread();
[[noreturn]] void CrashForTest();

// How `nvsentry run` ends once the guest is gone: the rate limits' dropped lines reported, the log
// and stdio flushed, then _exit(code) without waiting for the sentry's threads (workers may sit in
// the kernel on a listener nobody feeds). Those threads run on until the _exit and may still log
// (the receiver's "listener closed", the device files' "the filesystem ended"), so the logger is
// flushed, never destroyed. If a thread is reporting a crash, its signal ends the process instead.
// `before_exit` (tests): runs just before the _exit.
[[noreturn]] void ExitSentry(int code, const std::function<void()>& before_exit = nullptr);

}  // namespace nvsentry::sentry
