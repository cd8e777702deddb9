// The end of a process, sooner for its parent: HandOffTeardown, called just before _exit, clones
// a process that shares this one's memory and file table and waits for this one to be gone.
// The _exit then neither frees the memory nor closes the files, since the clone still holds
// both, and the parent's wait returns at once; the clone ends right after and does both. Here
// that is some 0.2-0.3 ms of `nvsentry run`'s end for a parent that waits for the process (a
// shell, a pidfd); one that reads nvsentry's output to its end gains nothing, as the files close
// only after the memory is freed (docs/benchmarks.md, "Start-up and the end, 2026-11-28").
// Nothing is left once the clone has ended, which it does by itself; a clone that cannot be made
// changes nothing. The clone is a process group of its own: a SIGSTOP to nvsentry's job that
// lands as it ends would otherwise stop it for good, with nvsentry's memory and files (its
// standard output: a reader never saw EOF) and nobody left to continue it.
#pragma once

namespace nvsentry::sentry {

// Only as the last step before _exit: the clone runs on a static stack, with this thread's TLS.
void HandOffTeardown();

}  // namespace nvsentry::sentry
