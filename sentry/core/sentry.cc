#include "sentry/core/sentry.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>

#include "abi/catalogue.h"
#include "absl/strings/escaping.h"
#include "hostshim/host/host_driver.h"
#include "hostshim/rate_limited_log.h"
#include "proxy/device_open.h"
#include "proxy/enforce.h"
#include "proxy/learn.h"
#include "proxy/refusal.h"
#include "proxy/serve.h"
#include "proxy/trace.h"
#include "sentry/core/guest_memory.h"
#include "sentry/core/notify_call.h"
#include "sentry/process/crash.h"
#include "sentry/process/test_hooks.h"
#include "spdlog/spdlog.h"

namespace nvsentry::sentry {
namespace {

using Clock = std::chrono::steady_clock;

std::optional<std::string> ReadLink(const std::string& path) {
  char buf[PATH_MAX];
  ssize_t n = readlink(path.c_str(), buf, sizeof buf);
  if (n <= 0 || n >= static_cast<ssize_t>(sizeof buf)) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

// The simulated GPU serves the guest its policy describes: its budgets, mask and aruid, and the
// rules for its command streams (which classes they may bind; --learn hears what they bound).
// `guest` outlives the GPU (both belong to the Sentry).
hostshim::sim::GpuOptions GpuFor(const proxy::GuestConfig& guest,
                                 std::shared_ptr<FrameRecorder> frames, uint32_t frames_every) {
  hostshim::sim::GpuOptions o;
  o.budget = guest.services.budget;
  o.permission_mask = guest.policy.permission_mask();
  o.aruid = guest.policy.rules().aruid;
  o.stream.classes = policy::BindableClasses(guest.policy.rules());
  o.stream.violation = [&guest](uint32_t, std::string_view detail) {
    return proxy::CommandStreamViolation(guest, "SET_OBJECT", "channels classes", detail) ==
           proxy::ViolationOutcome::kProceed;
  };
  if (proxy::Learner* learner = guest.services.learner.get())
    o.stream.bound = [learner](uint32_t cls) { learner->Bound(cls); };
  if (frames) {
    o.frame_presented = [frames](hostshim::sim::Frame f) { frames->Presented(std::move(f)); };
    o.frames_every = frames_every;
    o.frame_wanted = [frames] { return frames->Wanted(); };
  }
  if (proxy::Tracer* tracer = guest.services.tracer.get())
    o.host1x_note = [tracer](pid_t tid, std::string_view text) { tracer->Note(tid, text); };
  return o;
}

}  // namespace

Sentry::Sentry(const SentryOptions& options)
    : options_(options), gpu_(GpuFor(*options_.guest, options_.frames, options_.frames_every)) {
  const policy::Policy& rules = options_.guest->policy.rules();
  if (rules.GpuOnHost()) {
    hostshim::host::HostOptions h;
    h.dev_dir = options_.host_dev_dir;
    h.budget = options_.guest->services.budget;
    h.nvmap = &gpu_.nvmap();
    h.stream = &gpu_.stream_policy();  // the same rules for pushbuffers the host runs
    if (proxy::Tracer* tracer = options_.guest->services.tracer.get())
      h.note = [tracer](pid_t tid, std::string_view text) { tracer->Note(tid, text); };
    host_ = std::make_unique<hostshim::host::HostDriver>(std::move(h));
  }
  driver_ = std::make_unique<hostshim::DriverRouter>(gpu_, host_.get(), [&rules](abi::DeviceId id) {
    return rules.Device(id).backend == policy::Backend::kHost;
  });
  if (options_.workers <= 0) options_.workers = std::max(2u, std::thread::hardware_concurrency());
}

void Sentry::ServeDeviceFiles(std::unique_ptr<DeviceFs> files, dev_t dev,
                              DeferredDeviceFileHandler& deferred) {
  sessions_.SetDeviceFiles(dev);
  device_fs_ = std::move(files);
  DeviceFileHandler& handler = *this;
  deferred.Set(handler);
}

void Sentry::Start(int listener_fd) {
  listener_ = Listener(listener_fd);
  if (options_.sync_wakeup && !listener_.SetSyncWakeUp())
    spdlog::debug("synchronous wake-up not supported by this kernel; continuing without");
  Receiver::Options o;
  o.pool_threads = options_.workers;
  receiver_ = std::make_unique<Receiver>(
      listener_, o, [this](const seccomp_notif& req) { return !fast_calls_.IsFast(req); },
      [this](const seccomp_notif& req) { Serve(req); },
      // The forwarded signals are already blocked (inherited from the main thread, which takes
      // them through a signalfd); faults must stay deliverable so the crash handler runs.
      [] { InstallCrashStackForThread(); });
  receiver_->Start();
}

void Sentry::AddListener(int listener_fd) {
  const Listener& listener = more_listeners_.emplace_back(listener_fd);
  if (options_.sync_wakeup) listener.SetSyncWakeUp();
  Receiver::Options o;
  o.pool_threads = options_.workers;
  auto serve = [this, &listener](const seccomp_notif& req) {
    LoadCrashUnwinderInBackground();
    if (syscalls_.Classify(req.data.arch, req.data.nr) == TrappedCall::kIoctl)
      HandleIoctl(listener, req);
    else
      listener.Continue(req.id);
  };
  more_receivers_.push_back(std::make_unique<Receiver>(
      listener, o, [this](const seccomp_notif& req) { return !fast_calls_.IsFast(req); }, serve,
      [] { InstallCrashStackForThread(); }));
  more_receivers_.back()->Start();
}

void Sentry::Serve(const seccomp_notif& req) {
  if (!TestHookOn(TestHook::kHoldFirstIoctl) ||
      syscalls_.Classify(req.data.arch, req.data.nr) != TrappedCall::kIoctl) {
    Handle(req);
    return;
  }
  HoldFirstIoctl held;
  Handle(req);
}

void Sentry::Handle(const seccomp_notif& req) {
  // The crash report's unwinder, once the guest asks the sentry something (a guest that never
  // does, /bin/true say, never pays for it).
  LoadCrashUnwinderInBackground();
  TrappedCall kind = syscalls_.Classify(req.data.arch, req.data.nr);
  switch (kind) {
    case TrappedCall::kIoctl: HandleIoctl(listener_, req); return;
    case TrappedCall::kOther: listener_.Continue(req.id); return;
    default: HandleOpen(req, kind);
  }
}

// The open's path and flags as the guest passed them, for any of the four calls; nullopt when the
// arguments cannot be read (the kernel then reports that itself).
std::optional<Sentry::OpenArgs> Sentry::DecodeOpen(const seccomp_notif& req, TrappedCall kind) {
  const pid_t tid = static_cast<pid_t>(req.pid);
  const __u64* a = req.data.args;
  OpenArgs o;
  switch (kind) {
    case TrappedCall::kOpen:
      o.path_addr = a[0];
      o.flags = a[1];
      break;
    case TrappedCall::kCreat:
      o.path_addr = a[0];
      o.flags = O_CREAT | O_WRONLY | O_TRUNC;
      break;
    case TrappedCall::kOpenat:
      o.dirfd = static_cast<int>(a[0]);
      o.path_addr = a[1];
      o.flags = a[2];
      break;
    case TrappedCall::kOpenat2: {
      o.dirfd = static_cast<int>(a[0]);
      o.path_addr = a[1];
      open_how how{};
      if (a[3] < sizeof(uint64_t) ||
          !ReadGuest(tid, a[2], std::span(reinterpret_cast<uint8_t*>(&how), sizeof(uint64_t))))
        return std::nullopt;
      o.flags = how.flags;
      break;
    }
    default: break;
  }
  return o;
}

// The absolute, normalised path the open names when it may be a device node of the catalogue's
// namespace; nullopt for everything else (unreadable paths too: the kernel fails them the same
// way on its own read).
std::optional<NormalPath> Sentry::DevicePath(pid_t tid, const OpenArgs& o) {
  std::optional<std::string> path = ReadGuestString(tid, o.path_addr, PATH_MAX - 1);
  if (!path || !MayNameNvidiaNode(*path)) return std::nullopt;
  std::string base;
  if ((*path)[0] != '/') {
    std::string link = o.dirfd == AT_FDCWD
                           ? "/proc/" + std::to_string(tid) + "/cwd"
                           : "/proc/" + std::to_string(tid) + "/fd/" + std::to_string(o.dirfd);
    auto resolved = ReadLink(link);
    if (!resolved || (*resolved)[0] != '/') return std::nullopt;
    base = *resolved;
  }
  NormalPath np = NormalizePath(base, *path);
  if (!abi::LooksLikeNvidiaNode(np.path)) return std::nullopt;
  return np;
}

// An open refused by the driver's rules: logged (rate-limited), traced, answered with `err`.
void Sentry::RefuseOpen(const seccomp_notif& req, std::string_view path, abi::NvError verdict,
                        int err, std::string_view why, Clock::time_point t0,
                        std::optional<abi::MissingPermission> missing) {
  // The path is the guest's: escaped, so that newlines and terminal escapes in it cannot forge a
  // log line or reach the terminal the log goes to.
  if (missing)
    proxy::LogRefusedOpen(path, *missing);
  else
    NVS_LOG_LIMITED(spdlog::level::info, "open \"{}\": {}",
                    absl::CEscape(absl::string_view(path.data(), path.size())), why);
  if (proxy::Tracer* t = options_.guest->services.tracer.get())
    t->Open({static_cast<pid_t>(req.pid), path, -1, err, verdict, false, Clock::now() - t0, false,
             std::move(missing)});
  listener_.Fail(req.id, err);
}

void Sentry::HandleOpen(const seccomp_notif& req, TrappedCall kind) {
  const auto t0 = Clock::now();
  const pid_t tid = static_cast<pid_t>(req.pid);
  const proxy::GuestConfig& guest = *options_.guest;
  // 1. What the guest asked for: anything but a catalogue-namespace path continues natively.
  std::optional<OpenArgs> args = DecodeOpen(req, kind);
  std::optional<NormalPath> np = args ? DevicePath(tid, *args) : std::nullopt;
  if (!np) {
    listener_.Continue(req.id);
    return;
  }
  // 2. The guest contract's answer for this device (identity, firmware, policy) and the flags.
  const abi::DeviceDesc* dev = abi::FindDeviceByPath(np->path);
  if (abi::NvError verdict = proxy::MayOpen(guest, dev); verdict != abi::NvError::kSuccess) {
    RefuseOpen(req, np->path, verdict, proxy::OpenErrno(verdict),
               dev == nullptr ? "not a device the catalogue has" : abi::NvErrorName(verdict), t0,
               proxy::RefusedOpen(guest, dev, verdict));
    return;
  }
  if (np->trailing_slash || (args->flags & O_DIRECTORY)) {
    listener_.Fail(req.id, ENOTDIR);
    return;
  }
  if ((args->flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
    listener_.Fail(req.id, EEXIST);
    return;
  }
  if (TestHookOn(TestHook::kCrashOnOpen)) CrashForTest();
  if (!listener_.IdValid(req.id)) return;
  // 3. The session, as the nvdrv Open command makes one: its backend and its open_fds charge.
  proxy::NewSession made = proxy::MakeSession(guest, *dev, *driver_);
  if (!made.session) {
    RefuseOpen(req, np->path, made.refused, abi::NvErrorToErrno(made.refused),
               "the driver cannot keep another (the device's own budget or open_fds)", t0);
    return;
  }
  // 4. Its fd in the guest.
  PlaceSession(req, np->path, *dev, std::move(made.session), (args->flags & O_CLOEXEC) != 0, t0);
}

void Sentry::PlaceSession(const seccomp_notif& req, std::string_view path,
                          const abi::DeviceDesc& dev, std::shared_ptr<proxy::Session> session,
                          bool cloexec, Clock::time_point t0) {
  const pid_t tid = static_cast<pid_t>(req.pid);
  proxy::Tracer* tracer = options_.guest->services.tracer.get();
  // The worker keeps its reference until the open is finished: the session may end (the guest
  // closed the fd, or exited) as soon as its fd is placed.
  auto pending = sessions_.Create(session);
  if (!pending.ok()) {
    NVS_LOG_LIMITED(spdlog::level::err, "open {}: {}", path, pending.status().ToString());
    listener_.Fail(req.id, ENFILE);
    return;
  }
  // The lifetime thread starts watching the session at Placed(), and the guest may close the fd
  // the moment it is placed: the session learns its fd number before then.
  auto place = [&] {
    const int fd = listener_.AddFdAndReturn(req.id, pending->guest_end.get(), cloexec);
    if (fd >= 0 && tracer != nullptr) session->TraceCloseAs(fd);
    return fd;
  };
  const int guest_fd =
      tracer != nullptr
          ? tracer->OpenPlaced({tid, path, -1, 0, abi::NvError::kSuccess, false, Clock::now() - t0},
                               place)
          : place();
  if (guest_fd < 0) {
    NVS_LOG_LIMITED(spdlog::level::debug, "open {}: placing the fd failed: {}", path,
                    strerror(-guest_fd));
    sessions_.Abandon(*pending);
    // EMFILE and the like are the guest's to see; a vanished call has nobody to answer.
    if (guest_fd != -ENOENT) listener_.Fail(req.id, -guest_fd);
    return;
  }
  sessions_.Placed(*pending);
  if (TestHookOn(TestHook::kHoldOpenAfterPlacing))
    sessions_.WaitUntilEnded(pending->slot, absl::Seconds(10));
  if (proxy::Learner* l = options_.guest->services.learner.get()) l->Opened(dev);
  NVS_LOG_LIMITED(spdlog::level::debug, "thread {} opened {} as fd {}", tid, path, guest_fd);
}

int64_t Sentry::OpenFile(const abi::DeviceDesc& dev, int flags, pid_t tid) {
  LoadCrashUnwinderInBackground();  // as in Handle
  const auto t0 = Clock::now();
  const proxy::GuestConfig& guest = *options_.guest;
  proxy::Tracer* tracer = guest.services.tracer.get();
  auto refuse = [&](abi::NvError verdict, int err, std::string_view why) {
    std::optional<abi::MissingPermission> missing = proxy::RefusedOpen(guest, &dev, verdict);
    if (missing)
      proxy::LogRefusedOpen(dev.path, *missing);
    else
      NVS_LOG_LIMITED(spdlog::level::info, "open {}: {}", dev.path, why);
    if (tracer != nullptr)
      tracer->Open(
          {tid, dev.path, -1, err, verdict, false, Clock::now() - t0, false, std::move(missing)});
    return -static_cast<int64_t>(err);
  };
  if (abi::NvError verdict = proxy::MayOpen(guest, &dev); verdict != abi::NvError::kSuccess)
    return refuse(verdict, proxy::OpenErrno(verdict), abi::NvErrorName(verdict));
  if (TestHookOn(TestHook::kCrashOnOpen)) CrashForTest();
  proxy::NewSession made = proxy::MakeSession(guest, dev, *driver_);
  if (!made.session)
    return refuse(made.refused, abi::NvErrorToErrno(made.refused),
                  "the driver cannot keep another (the device's own budget or open_fds)");
  // The open's record waits for its fd, which only the session's first call tells: written then,
  // before that call's own record (or, if none comes, when the session ends).
  std::function<void(pid_t, int)> first_seen;
  if (tracer != nullptr) {
    const std::chrono::nanoseconds took = Clock::now() - t0;
    first_seen = [tracer, session = made.session.get(), path = dev.path, tid, took](pid_t user,
                                                                                    int fd) {
      proxy::TraceOpen r{user != 0 ? user : tid, path, fd, 0, abi::NvError::kSuccess, false, took};
      r.fd_unseen = fd < 0;
      tracer->Open(r);
      session->TraceCloseAs(fd);
    };
  }
  absl::StatusOr<uint64_t> handle = sessions_.AddFile(std::move(made.session), first_seen);
  if (!handle.ok()) return -ENFILE;
  if (proxy::Learner* l = guest.services.learner.get()) l->Opened(dev);
  NVS_LOG_LIMITED(spdlog::level::debug, "thread {} opened {} (flags {:#x}) as session {}", tid,
                  dev.path, flags, *handle);
  return static_cast<int64_t>(*handle);
}

void Sentry::ReleaseFile(uint64_t handle) { sessions_.EndFile(handle); }

void Sentry::HandleIoctl(const Listener& listener, const seccomp_notif& req) {
  const pid_t tid = static_cast<pid_t>(req.pid);
  const int fd = static_cast<int>(req.data.args[0]);
  std::shared_ptr<proxy::Session> session = sessions_.Lookup(tid, fd);
  if (!session) {
    listener.Continue(req.id);  // not ours: exactly what the kernel would do without us
    return;
  }
  NotifyCall call(listener, req.id, tid, &sessions_, &parking_);
  const uint32_t code = static_cast<uint32_t>(req.data.args[1]);
  proxy::IoctlOutcome out =
      proxy::Serve(*session, proxy::IoctlRequest::Direct(code, req.data.args[2], fd), call);
  if (out.kind != proxy::IoctlOutcome::kAnswer) return;
  if (out.err == 0)
    listener.Return(req.id, 0);
  else
    listener.Fail(req.id, out.err);
}

}  // namespace nvsentry::sentry
