/* A guest for the job-control tests: what it sees of its terminal, and the signals that reach it.
 *   job_guest interactive  prints "ready fg=F" (F: 1 when its group is the terminal's foreground
 *                          group), "got-INT" for each SIGINT, "got-CONT fg=F" for each SIGCONT;
 *                          exits 7 when it reads the line "quit".
 *   job_guest wait         prints "ready", "got-CONT" for each SIGCONT, and waits for signals.
 *   job_guest tiocsti      tries to push "x\n" into its terminal's input (TIOCSTI), prints
 *                          "tiocsti=RC errno=E" and exits 0. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

static void say(const char* s) { (void)!write(1, s, strlen(s)); }

static const char* fg(void) { return tcgetpgrp(0) == getpgrp() ? "1" : "0"; }

static void on_int(int sig) {
  (void)sig;
  say("got-INT\n");
}

static void on_cont_tty(int sig) {
  (void)sig;
  say("got-CONT fg=");
  say(fg());
  say("\n");
}

static void on_cont(int sig) {
  (void)sig;
  say("got-CONT\n");
}

static void handle(int sig, void (*fn)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = fn;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "interactive") == 0) {
    handle(SIGINT, on_int);
    handle(SIGCONT, on_cont_tty);
    say("ready fg=");
    say(fg());
    say("\n");
    char line[256];
    for (;;) {
      ssize_t n = read(0, line, sizeof line - 1);
      if (n <= 0) return 1;
      line[n] = 0;
      if (strncmp(line, "quit", 4) == 0) return 7;
    }
  }
  if (strcmp(mode, "wait") == 0) {
    handle(SIGCONT, on_cont);
    say("ready\n");
    for (;;) pause();
  }
  if (strcmp(mode, "tiocsti") == 0) {
    int rc = 0, err = 0;
    for (const char* c = "x\n"; *c && rc == 0; ++c) {
      rc = ioctl(0, TIOCSTI, c);
      err = rc == 0 ? 0 : errno;
    }
    printf("tiocsti=%d errno=%d\n", rc, err);
    return 0;
  }
  fprintf(stderr, "usage: job_guest interactive|wait|tiocsti\n");
  return 2;
}
