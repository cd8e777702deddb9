#include "sentry/process/startup_marks.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

namespace nvsentry::sentry {
namespace {

bool on = false;
timespec zero{};

}  // namespace

void StartupMarksInit() {
  on = getenv("NVSENTRY_STARTUP_MARKS") != nullptr;
  clock_gettime(CLOCK_MONOTONIC, &zero);
  if (!on) return;
  char what[64];
  snprintf(what, sizeof what, "main (CLOCK_MONOTONIC %ld us)",
           static_cast<long>(zero.tv_sec * 1000000L + zero.tv_nsec / 1000));
  StartupMark(what);
}

void StartupMark(const char* what) {
  if (!on) return;
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  const long us = (t.tv_sec - zero.tv_sec) * 1000000L + (t.tv_nsec - zero.tv_nsec) / 1000;
  char line[160];
  const int n = snprintf(line, sizeof line, "nvsentry-mark %ld %d %s\n", us, getpid(), what);
  if (n > 0)
    (void)!write(STDERR_FILENO, line, static_cast<size_t>(n) < sizeof line ? n : sizeof line - 1);
}

}  // namespace nvsentry::sentry
