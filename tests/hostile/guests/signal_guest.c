/* A hostile guest that signals everything it can name: kill(TARGET, SIG) with TARGET 0 (its
 * process group) or -1 (every process it may signal). Prints "sending" before and "after" once
 * the call returned (and, for a stop, once it was continued), then exits 0. Usage:
 *   signal_guest 0|-1 SIGNUM */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: signal_guest 0|-1 SIGNUM\n");
    return 2;
  }
  pid_t target = (pid_t)atoi(argv[1]);
  int sig = atoi(argv[2]);
  printf("sending %s to %d\n", strsignal(sig), (int)target);
  fflush(stdout);
  int rc = kill(target, sig);
  printf("after rc=%d errno=%d\n", rc, rc == 0 ? 0 : errno);
  fflush(stdout);
  return 0;
}
