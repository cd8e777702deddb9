#include "hostshim/rate_limited_log.h"

#include <atomic>
#include <chrono>
#include <cstring>

namespace nvsentry {
namespace {

std::atomic<LogSite*> sites{nullptr};
std::atomic<uint32_t> site_burst{LogRateLimit::kBurst};

// "hostshim/unimplemented.cc" out of the build's absolute path: the last two components.
const char* ShortFile(const char* file) {
  const char* last = std::strrchr(file, '/');
  if (last == nullptr) return file;
  for (const char* p = last - 1; p >= file; --p)
    if (*p == '/') return p + 1;
  return file;
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint32_t SiteBurst() {
  const uint32_t b = site_burst.load(std::memory_order_relaxed);
  return b == 0 ? UINT32_MAX : b;
}

}  // namespace

void SetLogBurst(uint32_t burst) { site_burst.store(burst, std::memory_order_relaxed); }

bool LogRateLimit::Admit(int64_t now_ns, uint64_t* suppressed) {
  absl::MutexLock l(&mu_);
  *suppressed = 0;
  if (!started_ || now_ns - window_start_ >= interval_ns_) {
    started_ = true;
    window_start_ = now_ns;
    written_ = 0;
  }
  if (written_ >= burst_) {
    ++suppressed_;
    return false;
  }
  ++written_;
  *suppressed = suppressed_;
  suppressed_ = 0;
  return true;
}

uint64_t LogRateLimit::TakeSuppressed() {
  absl::MutexLock l(&mu_);
  const uint64_t n = suppressed_;
  suppressed_ = 0;
  return n;
}

LogSite::LogSite(const char* file, int line, spdlog::level::level_enum level)
    : file_(ShortFile(file)), line_(line), level_(level), limit_(SiteBurst()) {
  next_ = sites.load(std::memory_order_relaxed);
  while (!sites.compare_exchange_weak(next_, this, std::memory_order_release,
                                      std::memory_order_relaxed)) {
  }
}

bool LogSite::Admit() {
  uint64_t suppressed = 0;
  if (!limit_.Admit(NowNs(), &suppressed)) return false;
  if (suppressed != 0)
    spdlog::log(level_, "... suppressed {} similar messages ({}:{})", suppressed, file_, line_);
  return true;
}

void ReportSuppressedLogs() {
  for (LogSite* s = sites.load(std::memory_order_acquire); s != nullptr; s = s->next_) {
    if (const uint64_t n = s->limit_.TakeSuppressed(); n != 0)
      spdlog::log(s->level_, "... suppressed {} similar messages ({}:{})", n, s->file_, s->line_);
  }
}

}  // namespace nvsentry
