#include "sentry/sandbox/guest_exec.h"

#include <limits.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace nvsentry::sentry {
namespace {

constexpr char kDefaultPath[] = "/bin:/usr/bin";  // glibc's execvp without PATH

// The errors after which glibc's execvp tries PATH's next directory (any other ends the search).
bool SearchGoesOn(int err) {
  return err == EACCES || err == ENOENT || err == ENOTDIR || err == ESTALE || err == ENODEV ||
         err == ETIMEDOUT;
}

// PATH's directories that the guest may not search, for the message (as many as fit).
struct Skipped {
  char list[1024] = {};
  size_t used = 0;
  void Add(const char* dir, size_t n) {
    const int w = snprintf(list + used, sizeof list - used, "%s%.*s", used > 0 ? ", " : "",
                           static_cast<int>(n), dir);
    if (w > 0) used = std::min(sizeof list - 1, used + static_cast<size_t>(w));
  }
};

// Why a program that was found cannot be run (execve said EACCES): a reason of the file's own
// when it has one, else the identity's.
void ExplainRefused(const char* path, const GuestExecNotes& notes) {
  struct stat st;
  struct statvfs fs;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    fprintf(stderr, "nvsentry: %s: Permission denied: it is a directory\n", path);
  } else if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) == 0) {
    fprintf(stderr, "nvsentry: %s: Permission denied: it is not executable (chmod +x %s)\n", path,
            path);
  } else if (statvfs(path, &fs) == 0 && (fs.f_flag & ST_NOEXEC)) {
    fprintf(stderr, "nvsentry: %s: Permission denied: its filesystem is mounted noexec\n", path);
  } else if (notes.advice[0] != '\0') {
    fprintf(stderr, "nvsentry: %s: Permission denied: %s\n", path, notes.advice);
  } else {
    fprintf(stderr, "nvsentry: %s: Permission denied\n", path);
  }
  _exit(126);
}

[[noreturn]] void Failed(const char* path, int err, const GuestExecNotes& notes) {
  if (err == EACCES) ExplainRefused(path, notes);
  if (err == ENOENT && notes.lost_workdir != nullptr && path[0] != '/')
    fprintf(stderr, "nvsentry: %s: %s (looked up from /: the guest could not start in %s)\n", path,
            strerror(err), notes.lost_workdir);
  else
    fprintf(stderr, "nvsentry: %s: %s\n", path, strerror(err));
  _exit(err == ENOENT || err == ENOTDIR ? 127 : 126);
}

}  // namespace

void ExecGuestProgram(char* const* argv, const GuestExecNotes& notes) {
  const char* name = argv[0];
  // A path: no search (and, as with execvp, a file without #! runs under /bin/sh).
  if (strchr(name, '/') != nullptr) {
    execvp(name, argv);
    Failed(name, errno, notes);
  }
  if (name[0] == '\0') Failed(name, ENOENT, notes);
  const char* path = getenv("PATH");
  if (path == nullptr) path = kDefaultPath;
  const size_t name_len = strlen(name);
  char found_refused[PATH_MAX] = {};  // the first file found that could not be run
  Skipped skipped;
  for (const char* dir = path;; ++dir) {
    const char* end = strchrnul(dir, ':');
    const size_t dir_len = static_cast<size_t>(end - dir);
    char candidate[PATH_MAX];
    // An empty element is the working directory; "./NAME" keeps a '/' in the path, so that
    // execvp runs it as it is (and still runs a script without #! under /bin/sh).
    const int n = dir_len == 0 ? snprintf(candidate, sizeof candidate, "./%s", name)
                               : snprintf(candidate, sizeof candidate, "%.*s/%s",
                                          static_cast<int>(dir_len), dir, name);
    if (n > 0 && static_cast<size_t>(n) == (dir_len == 0 ? 2 : dir_len + 1) + name_len) {
      execvp(candidate, argv);
      const int err = errno;
      if (!SearchGoesOn(err)) Failed(candidate, err, notes);
      if (err == EACCES) {
        struct stat st;
        if (stat(candidate, &st) == 0) {
          if (found_refused[0] == '\0')
            snprintf(found_refused, sizeof found_refused, "%s", candidate);
        } else if (errno == EACCES) {
          skipped.Add(dir_len == 0 ? "." : dir, dir_len == 0 ? 1 : dir_len);
        }
      }
    }
    if (*end == '\0') break;
    dir = end;
  }
  if (found_refused[0] != '\0') ExplainRefused(found_refused, notes);
  if (skipped.used > 0 && notes.advice[0] != '\0')
    fprintf(stderr,
            "nvsentry: %s: not found in PATH (skipped, as the guest may not search them: %s; %s)\n",
            name, skipped.list, notes.advice);
  else
    fprintf(stderr, "nvsentry: %s: not found in PATH\n", name);
  _exit(127);
}

}  // namespace nvsentry::sentry
