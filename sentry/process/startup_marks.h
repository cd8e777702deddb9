// Start-up marks: with `nvsentry run --startup-marks`, each call writes one line to standard
// error, "nvsentry-mark <microseconds since nvsentry's main> <pid> <what>", from the sentry, the
// guest's init and the guest before its exec; the first, "main", also gives the clock's reading
// then. A developer's tool for the start-up row of bench/run.sh (docs/benchmarks.md, "Start-up,
// step by step"); off, a call costs a load. Async-signal-safe once StartupMarksInit has run
// (init and the guest call it after a fork).
#pragma once

namespace nvsentry::sentry {

// In main, first: takes the zero of the clock. The marks are off until StartupMarksOn.
void StartupMarksInit();
// Turns the marks on, right after the command line asked for them: writes "main", at the zero,
// and "command line parsed", now.
void StartupMarksOn();
void StartupMark(const char* what);

}  // namespace nvsentry::sentry
