// The exec of the guest program, in the sandbox, as its identity. The PATH search is execvp's
// (glibc: a name without '/' is looked up in PATH, /bin:/usr/bin without it; an empty element is
// the working directory; a file without a #! line runs under /bin/sh), except that a directory
// the guest may not search is skipped: glibc's execvp reports EACCES for such a directory when
// the name is found nowhere else, so a missing program was "Permission denied" (126) whenever
// PATH held one, as root's PATH does for nobody. EACCES is reported only for a file that was
// found and cannot be run, with who the guest is and what to do.
#pragma once

namespace nvsentry::sentry {

struct GuestExecNotes {
  // RefusedAdvice of the guest's identity (sentry/sandbox/identity.h); "" for none.
  const char* advice = "";
  // The working directory the guest could not start in (it started in / instead), or null.
  const char* lost_workdir = nullptr;
};

// Never returns: runs argv[0], or writes one line to stderr and exits 127 when no such program
// is found, 126 when it was found but cannot be run. Safe in a child that shares its parent's
// memory (no allocation: the path is built on the stack).
[[noreturn]] void ExecGuestProgram(char* const* argv, const GuestExecNotes& notes);

}  // namespace nvsentry::sentry
