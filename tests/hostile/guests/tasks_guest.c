/* A guest that takes pids without end: children that exit at once and are never reaped (each
 * zombie holds a pid of the host until then), up to N or until fork fails. Prints made=K
 * error=ERRNO (0: it made all N), then raise=RC/ERRNO for putting RLIMIT_NPROC back up to
 * unlimited, then reaps everything and exits 0. Usage: tasks_guest N */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
  char* end = NULL;
  const long n = argc > 1 ? strtol(argv[1], &end, 10) : 10000;
  if (argc > 2 || (argc == 2 && (*end != '\0' || n < 0))) {
    fprintf(stderr, "tasks_guest: N must be a number, 0 or more\nusage: tasks_guest [N]\n");
    return 2;
  }
  long made = 0;
  int error = 0;
  for (; made < n; made++) {
    pid_t pid = fork();
    if (pid < 0) {
      error = errno;
      break;
    }
    if (pid == 0) _exit(0);
  }
  printf("made=%ld error=%d\n", made, error);
  struct rlimit unlimited = {RLIM_INFINITY, RLIM_INFINITY};
  int rc = setrlimit(RLIMIT_NPROC, &unlimited);
  printf("raise=%d/%d\n", rc, rc == 0 ? 0 : errno);
  fflush(stdout);
  while (wait(NULL) > 0) {
  }
  return 0;
}
