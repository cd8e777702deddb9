// Log lines a guest can cause, rate-limited per call site, so that a guest looping on a call that
// logs (an unimplemented ioctl, a refused open, a channel it keeps breaking) cannot fill the disk
// or spend the sentry's time on writing: each site writes at most kBurst lines per kInterval,
// then counts what it drops and reports the count ("... suppressed K similar messages") with its
// next line, or at exit (ReportSuppressedLogs). Every spdlog call on a path a guest's action
// reaches goes through NVS_LOG_LIMITED; only start-up and shutdown lines do not.
//
//   NVS_LOG_LIMITED(spdlog::level::warn, "{} is not implemented", name);
//
// A line below the logger's level costs what spdlog's own check costs (no lock); one at or above
// it takes the site's mutex once.
#pragma once

#include <cstdint>

#include "absl/synchronization/mutex.h"
#include "spdlog/spdlog.h"

namespace nvsentry {

// The limit of one site, on an explicit clock (testable on its own).
class LogRateLimit {
 public:
  static constexpr uint32_t kBurst = 10;
  static constexpr int64_t kIntervalNs = 10'000'000'000;  // 10 s

  explicit LogRateLimit(uint32_t burst = kBurst, int64_t interval_ns = kIntervalNs)
      : burst_(burst), interval_ns_(interval_ns) {}
  // Whether a line may be written at `now_ns` (a monotonic clock). When it may, *suppressed is
  // how many lines were dropped since the last one written (to be reported with it), else 0.
  bool Admit(int64_t now_ns, uint64_t* suppressed);
  // The dropped lines not reported yet; the count starts again from 0.
  uint64_t TakeSuppressed();

 private:
  const uint32_t burst_;
  const int64_t interval_ns_;
  absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  int64_t window_start_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t written_ ABSL_GUARDED_BY(mu_) = 0;  // in the current window
  uint64_t suppressed_ ABSL_GUARDED_BY(mu_) = 0;
};

// One call site of NVS_LOG_LIMITED: a static, registered so that the counts left at exit are
// reported. Never destroyed (nvsentry leaves with _exit).
class LogSite {
 public:
  LogSite(const char* file, int line, spdlog::level::level_enum level);
  // True when the line may be written; writes the "suppressed" note first when there is one.
  bool Admit();

 private:
  friend void ReportSuppressedLogs();
  const char* file_;
  int line_;
  spdlog::level::level_enum level_;
  LogRateLimit limit_;
  LogSite* next_;  // the registry: a list pushed at construction, never popped
};

// The burst of every site created from now on (nvsentry sets it from --log-burst before the
// guest starts); 0 means no limit.
void SetLogBurst(uint32_t burst);

// Logs, for every site, the lines it dropped and has not reported yet (call before exit).
void ReportSuppressedLogs();

}  // namespace nvsentry

#define NVS_LOG_LIMITED(level, ...)                                        \
  do {                                                                     \
    if (spdlog::should_log(level)) {                                       \
      static ::nvsentry::LogSite nvs_log_site_(__FILE__, __LINE__, level); \
      if (nvs_log_site_.Admit()) spdlog::log(level, __VA_ARGS__);          \
    }                                                                      \
  } while (0)
