// A shared library a hostile guest plants where the dynamic loader looks, under the name of one
// the sentry loads (libunwind.so.8): if the sentry ever loads it, its constructor creates the file
// NVS_PLANTED_MARK names (tests/hostile/launcher_test.cc, LauncherPrivileges.*Planted*).
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void Planted(void) {
  const char* mark = getenv("NVS_PLANTED_MARK");
  if (mark == NULL) return;
  const int fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) close(fd);
}
