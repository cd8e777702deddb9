// Tracing of a guest's GPU traffic, strace-style: every device open, ioctl and close, decoded from
// the catalogue field by field, as text lines or JSON lines. One Tracer per sentry; calls from any
// worker thread; each record is written whole (one write per line).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "abi/catalogue.h"
#include "abi/nverror.h"
#include "abi/permissions.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "proxy/call_observer.h"

namespace nvsentry::proxy {

const char* ViaName(Via v);

struct TraceOpen {
  pid_t tid;
  std::string_view path;
  int fd;                                       // the guest's fd (or nvdrv fd) on success
  int err;                                      // errno, 0 on success
  abi::NvError nverr = abi::NvError::kSuccess;  // for nvdrv Open
  bool nvdrv = false;                           // opened through the /dev/nvdrv Open command
  std::chrono::nanoseconds took{0};
  // A device file (sentry/devfs/device_fs.h) whose fd the sentry never saw: no ioctl used it before
  // its last copy was closed.
  bool fd_unseen = false;
  // Refused because the guest's mask lacks the device's bit (proxy/refusal.h).
  std::optional<abi::MissingPermission> missing = std::nullopt;
};

struct TraceClose {
  pid_t tid;  // 0 when the last reference went away without a call (e.g. the process exited)
  std::string_view path;
  int fd;  // -1 when not known
  bool nvdrv = false;
};

// One ioctl (proxy/call_observer.h).
using TraceIoctl = CallRecord;

class Tracer final : public CallObserver {
 public:
  enum class Format { kText, kJson };
  // Takes ownership of `out` (closed on destruction unless it is stderr/stdout).
  Tracer(FILE* out, Format format);
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  void Open(const TraceOpen& r);
  // Runs `place`, which puts an opened fd into the guest and lets it run on, with the trace held,
  // then records the open under the fd `place` returns (nothing when negative): no record of what
  // the guest does with the fd can get ahead of the open's.
  int OpenPlaced(TraceOpen r, absl::FunctionRef<int()> place);
  void Close(const TraceClose& r);
  void Ioctl(const TraceIoctl& r);
  // As a CallObserver: every finished call, and each violation as a note.
  bool WantsInput() const override { return true; }
  void Finished(const CallRecord& r) override { Ioctl(r); }
  void Violated(const ViolationEvent& v) override { Note(v.tid, v.text); }
  // Anything else worth a line (a service command other than the ioctls, a note).
  void Note(pid_t tid, std::string_view what);
  // A record that could not be written (the file's disk full, say) does not stop the sentry:
  // the first write's errno (0: none failed) and how many records were lost, for nvsentry's
  // exit status (sentry/sandbox/launcher.cc).
  struct Loss {
    int err = 0;
    uint64_t records = 0;
  };
  Loss loss() const;

 private:
  std::string OpenRecord(const TraceOpen& r) const;
  void Emit(const std::string& line);
  void Write(const std::string& line) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Lost(int err) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  mutable absl::Mutex mu_;
  FILE* out_;
  Format format_;
  Loss loss_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nvsentry::proxy
