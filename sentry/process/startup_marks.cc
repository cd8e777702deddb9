#include "sentry/process/startup_marks.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

namespace nvsentry::sentry {
namespace {

bool on = false;
timespec zero{};

void Write(const timespec& t, const char* what) {
  const long us = (t.tv_sec - zero.tv_sec) * 1000000L + (t.tv_nsec - zero.tv_nsec) / 1000;
  char line[160];
  const int n = snprintf(line, sizeof line, "nvsentry-mark %ld %d %s\n", us, getpid(), what);
  if (n > 0)
    (void)!write(STDERR_FILENO, line, static_cast<size_t>(n) < sizeof line ? n : sizeof line - 1);
}

}  // namespace

void StartupMarksInit() { clock_gettime(CLOCK_MONOTONIC, &zero); }

void StartupMarksOn() {
  timespec parsed;
  clock_gettime(CLOCK_MONOTONIC, &parsed);
  on = true;
  char what[64];
  snprintf(what, sizeof what, "main (CLOCK_MONOTONIC %ld us)",
           static_cast<long>(zero.tv_sec * 1000000L + zero.tv_nsec / 1000));
  Write(zero, what);
  Write(parsed, "command line parsed");
}

void StartupMark(const char* what) {
  if (!on) return;
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  Write(t, what);
}

}  // namespace nvsentry::sentry
