#include "sentry/sandbox/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "abi/services.h"
#include "absl/strings/str_cat.h"
#include "policy/parse.h"
#include "policy/render.h"
#include "proxy/enforce.h"
#include "proxy/learn.h"
#include "proxy/trace.h"
#include "sentry/core/filter.h"
#include "sentry/core/frames.h"
#include "sentry/core/sentry.h"
#include "sentry/devfs/device_fs.h"
#include "sentry/process/crash.h"
#include "sentry/process/job_control.h"
#include "sentry/process/startup_marks.h"
#include "sentry/process/test_hooks.h"
#include "sentry/sandbox/fd_passing.h"
#include "sentry/sandbox/guest_dev.h"
#include "sentry/sandbox/guest_init.h"
#include "sentry/sandbox/host_backend_check.h"
#include "sentry/sandbox/host_nodes.h"
#include "sentry/sandbox/identity.h"
#include "sentry/sandbox/kernel_check.h"
#include "sentry/sandbox/output_file.h"
#include "spdlog/spdlog.h"

namespace nvsentry::sentry {
namespace {

constexpr int kSandboxFailed = 125;
// --frames: at most this much PNG in DIR, whatever --frames-max says.
constexpr uint64_t kFramesMaxBytes = uint64_t{1} << 30;

// The seccomp listener init hands over, and whether the kernel makes its waits killable.
struct ReceivedListener {
  hostshim::UniqueFd fd;
  bool killable = false;
};

// Waits for init's first message: the listener fd, or why it could not start.
absl::StatusOr<ReceivedListener> ReceiveListener(int control_fd) {
  absl::StatusOr<FdMessage> m = ReceiveWithFd(control_fd);
  if (!m.ok()) return absl::UnavailableError("the sandbox's init exited before it was ready");
  if (!m->text.starts_with("ok") || !m->fd) return absl::InternalError(m->text);
  return ReceivedListener{std::move(m->fd), m->text == "ok:killable"};
}

int StatusToExitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kSandboxFailed;
}

// --learn: writes the learned policy when the guest has ended. False (with a message) when the
// file cannot be written.
bool WriteLearned(FILE* out, const std::string& name, const proxy::GuestConfig& guest,
                  const RunOptions& options) {
  policy::Policy learned =
      guest.services.learner->Learned(guest.policy.rules(), *guest.services.budget);
  learned.source = name;
  std::string text = "# Learned by nvsentry run --learn from:";
  for (const std::string& a : options.argv) text += " " + a;
  text +=
      "\n# The guest ran with action = audit; this policy allows what it did (devices, ioctls,\n"
      "# array counts, argument limits and budgets with 2x headroom) and refuses the rest.\n";
  text += policy::RenderToml(learned, true);
  // The guest is gone, but while it ran it could write the file if its identity may (an ordinary
  // user's nvsentry: the guest is that user), even replace it. A new file renamed over the name
  // is the learned policy alone, whatever was there; where nvsentry may not make one beside it
  // (root-started, the sentry checks files as the guest's identity), the file opened at the start,
  // cut to what is written, which that guest could not write either. Only a regular file is
  // replaced: a device, a pipe or a link's target is written through (renamed over, /dev/full was
  // replaced by a file when the sentry kept root's rights, as with --host-root).
  const std::string tmp_template = name + ".nvsentry-XXXXXX";
  std::vector<char> tmp(tmp_template.begin(), tmp_template.end());
  tmp.push_back('\0');
  bool ok = false;
  struct stat st;
  const bool regular = fstat(fileno(out), &st) == 0 && S_ISREG(st.st_mode);
  const int fresh = regular ? mkostemp(tmp.data(), O_CLOEXEC) : -1;
  if (fresh >= 0) {
    fchmod(fresh, st.st_mode & 07777);
    ok = write(fresh, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ok = close(fresh) == 0 && ok && rename(tmp.data(), name.c_str()) == 0;
    if (!ok) unlink(tmp.data());
  }
  int err = 0;
  if (!ok) {
    ok = fwrite(text.data(), 1, text.size(), out) == text.size() && fflush(out) == 0 &&
         ftruncate(fileno(out), static_cast<off_t>(text.size())) == 0;
    err = errno;
  }
  fclose(out);
  if (!ok) {
    fprintf(stderr, "nvsentry: --learn: cannot write %s: %s\n", name.c_str(), strerror(err));
    return false;
  }
  spdlog::info("learned policy written to {}", name);
  return true;
}

// The host's NVIDIA nodes the guest must not reach: those under /dev and, where the host backend
// is pointed elsewhere (--host-dev-dir, a simulated Jetson's directory say), those it opens there.
// Without the second walk the guest opened the host backend's own nodes at their host paths and
// its ioctls on them went to the host untouched (no session of the sentry's: continued).
std::vector<HostNode> HostNodesToHide(const RunOptions& o, const std::set<unsigned>& majors) {
  std::vector<HostNode> nodes = FindHostNvidiaNodes(majors);
  std::error_code ec;
  const std::filesystem::path host = std::filesystem::canonical(o.host_dev_dir, ec);
  if (!ec && host != std::filesystem::canonical("/dev", ec)) {
    std::vector<HostNode> more = FindHostNvidiaNodes(majors, host.string());
    nodes.insert(nodes.end(), more.begin(), more.end());
  }
  return nodes;
}

// The sandbox's filesystem view from the command line and the host's NVIDIA nodes; bind sources
// relative to nvsentry's own directory.
MountPlan GuestMountPlan(const RunOptions& o, std::vector<HostNode> hide) {
  MountPlan plan;
  plan.hide = std::move(hide);
  plan.read_only_root = o.ro_root;
  plan.private_tmp = o.private_tmp;
  plan.binds = o.binds;
  for (BindMount& b : plan.binds) b.source = std::filesystem::absolute(b.source).lexically_normal();
  return plan;
}

// Where the guest starts: --chdir (relative to nvsentry's directory), else nvsentry's directory.
std::string GuestWorkdir(const RunOptions& o) {
  std::error_code ec;
  std::filesystem::path dir =
      o.chdir.empty() ? std::filesystem::current_path(ec) : std::filesystem::absolute(o.chdir, ec);
  return ec ? "" : dir.lexically_normal().string();
}

// Reads the guest's exit status from init's reports, once init has exited; false if none came
// (init was killed, or could not start the program).
bool ReadExitReport(int report_fd, int* status) {
  InitReport r;
  while (read(report_fd, &r, sizeof r) == sizeof r) {
    if (r.kind == InitReport::kGuestExited) {
      *status = r.value;
      return true;
    }
  }
  return false;
}

// The CPUs this thread may run on but the one it is on; false when there is no other.
bool CpusBesidesThisOne(cpu_set_t& others) {
  const int here = sched_getcpu();
  if (here < 0 || sched_getaffinity(0, sizeof others, &others) != 0 || CPU_COUNT(&others) < 2)
    return false;
  CPU_CLR(here, &others);
  return true;
}

// The guest's init, cloned into its namespaces and told to go; its ends of the control socket and
// the report pipe are the sentry's.
struct StartedInit {
  pid_t pid;
  int pidfd;
  // SOCK_SEQPACKET: "go" (and, with device files, "dev") out, the listener (or why not) back
  hostshim::UniqueFd control;
  int report_fd;  // init's reports (InitReport); the sentry's for its whole life
};

// What init needs from the launcher, fixed before the clone.
struct InitPlan {
  const RunOptions& options;
  const GuestIdentity& identity;
  const FilterProgram& filter;
  MountPlan mounts;
  std::string workdir;
  sigset_t original_mask;
  int device_connection;  // GuestInitArgs::device_connection
};

// The control socket and the report pipe between the sentry and init, close-on-exec.
absl::Status OpenInitChannels(int control[2], int status_pipe[2]) {
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, control) != 0)
    return absl::ErrnoToStatus(errno, "socketpair");
  if (pipe2(status_pipe, O_CLOEXEC) != 0) {
    const int err = errno;
    close(control[0]);
    close(control[1]);
    return absl::ErrnoToStatus(err, "pipe2");
  }
  return absl::OkStatus();
}

// Why the clone into the guest's namespaces failed with `err`.
absl::Status NamespacesFailed(int err, bool user_ns) {
  return absl::ErrnoToStatus(
      err, absl::StrCat("cannot create the sandbox's namespaces",
                        user_ns && (err == EPERM || err == ENOSPC || err == EUSERS)
                            ? " (are unprivileged user namespaces disabled? see "
                              "user.max_user_namespaces, kernel.unprivileged_userns_clone or "
                              "AppArmor's kernel.apparmor_restrict_unprivileged_userns)"
                            : ""));
}

// The sentry's part in init's start once it is cloned: maps its ids and makes it a process group
// of its own that owns the terminal if nvsentry does. On failure, init is ended and waited for.
absl::Status AdoptInit(StartedInit& init, const GuestIdentity& identity, Terminal& tty) {
  auto give_up = [&](absl::Status why) {
    init.control.Reset();  // init exits on EOF
    tty.TakeBack();
    waitpid(init.pid, nullptr, 0);
    return why;
  };
  if (identity.user_ns) {
    if (absl::Status s = WriteIdMaps(init.pid, identity); !s.ok())
      return give_up(absl::InternalError(
          absl::StrCat("cannot map the guest's user namespace: ", s.message())));
  }
  // The guest's process group is init's (init does the same: whichever runs first). If nvsentry
  // is its terminal's foreground job, the guest's group takes the terminal before it starts.
  setpgid(init.pid, init.pid);
  tty.HandToIfForeground(init.pid);
  return absl::OkStatus();
}

// Clones init into the guest's user and PID (and, with --no-network, network) namespaces (init
// makes its mount namespace itself), maps its ids and makes it a process group of its own that owns
// the terminal if nvsentry does. Init then waits for GoAhead. The message says what failed.
absl::StatusOr<StartedInit> StartInit(InitPlan plan, Terminal& tty) {
  std::vector<char*> argv;
  for (const std::string& a : plan.options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int control[2], status_pipe[2];
  if (absl::Status s = OpenInitChannels(control, status_pipe); !s.ok()) return s;
  // Fork-like clone (no new stack): the sentry is still single-threaded here.
  const pid_t sentry_pid = getpid();
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof cpus, &cpus) != 0) CPU_ZERO(&cpus);  // none: init leaves it
  // With CLONE_NEWUSER the new PID namespace belongs to the guest's user namespace, and so does
  // the mount namespace init then makes itself (RunGuestInit): init may mount in them, and
  // nothing it does there reaches the host's. (Made by init, the mount namespace's copy of the
  // host's mounts is off the sentry's path: init does it while the sentry lists the device files.)
  const unsigned long ns_flags = CLONE_NEWPID | (plan.identity.user_ns ? CLONE_NEWUSER : 0) |
                                 (plan.options.no_network ? CLONE_NEWNET : 0);
  int pidfd = -1;
  long pid =
      syscall(SYS_clone, ns_flags | CLONE_PIDFD | SIGCHLD, nullptr, &pidfd, nullptr, nullptr);
  if (pid < 0) {
    const int err = errno;
    for (int fd : {control[0], control[1], status_pipe[0], status_pipe[1]}) close(fd);
    return NamespacesFailed(err, plan.identity.user_ns);
  }
  if (pid == 0) {
    close(control[0]);
    close(status_pipe[0]);
    RunGuestInit({argv.data(), std::move(plan.mounts), &plan.filter, control[1], status_pipe[1],
                  plan.original_mask, cpus, sentry_pid, plan.identity, plan.options.no_network,
                  plan.workdir, !plan.options.chdir.empty(), plan.options.max_tasks,
                  plan.device_connection, RefusedAdvice(plan.identity)});
  }
  close(control[1]);
  close(status_pipe[1]);
  // Like the /dev draft's thread, init is moved off this CPU, which the sentry keeps busy until it
  // waits for the listener: left here, init's first run waited 0.15-0.2 ms for it (2-CPU VM).
  // Init gives itself back the sentry's CPUs once told to go, before it runs anything of the guest.
  if (cpu_set_t others; CpusBesidesThisOne(others))
    sched_setaffinity(static_cast<pid_t>(pid), sizeof others, &others);
  StartedInit init{static_cast<pid_t>(pid), pidfd, hostshim::UniqueFd(control[0]), status_pipe[0]};
  SetCrashVictim(init.pidfd);
  if (absl::Status s = AdoptInit(init, plan.identity, tty); !s.ok()) return s;
  return init;
}

// Lets init go on: it sets up the guest's view (with device files, it attaches them once the
// sentry has said "dev") and starts the guest program.
absl::Status GoAhead(StartedInit& init, Terminal& tty) {
  if (SendWithFd(init.control.get(), "go", -1).ok()) return absl::OkStatus();
  init.control.Reset();  // init exits on EOF
  tty.TakeBack();
  waitpid(init.pid, nullptr, 0);
  return absl::UnavailableError("cannot start the sandbox: its init exited before it was ready");
}

// The device files (--devices), or nullopt when the sentry traps opens instead. An error when
// they were asked for and cannot be made.
absl::StatusOr<std::optional<DeviceFsMount>> ChooseDeviceFiles(DeviceMode mode) {
  if (mode == DeviceMode::kTrap) return std::nullopt;
  absl::StatusOr<DeviceFsMount> m = MakeDeviceFs();
  if (m.ok()) return std::optional<DeviceFsMount>(*std::move(m));
  if (mode == DeviceMode::kFiles)
    return absl::FailedPreconditionError(absl::StrCat("--devices=files: ", m.status().message(),
                                                      " (it needs nvsentry started as root)"));
  spdlog::info(
      "device nodes: every open is trapped ({}); --devices=files needs nvsentry "
      "started as root",
      std::string(m.status().message()));
  return std::nullopt;
}

// The guest's /dev (sentry/sandbox/guest_dev.h) is drafted on a thread of its own (the host's /dev
// listed) while the NVIDIA majors are read and the device files and the list of the host's
// NVIDIA nodes made. Take joins it, as the fork-like clone needs a single-threaded sentry, and
// finishes the /dev with the majors.
class GuestDevInBackground {
 public:
  explicit GuestDevInBackground(bool wanted) : wanted_(wanted) {
    if (!wanted) return;
    // A new thread tends to wait on its creator's CPU, the other one idle, until the creator
    // blocks (measured on a 2-CPU VM): this one starts on the others. Set as it is made:
    // pthread_setaffinity_np on a thread that has already ended (its tid cleared) sets the
    // caller's, which pinned the whole sentry, init and the guest to one CPU.
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (cpu_set_t others; CpusBesidesThisOne(others))
      pthread_attr_setaffinity_np(&attr, sizeof others, &others);
    started_ = pthread_create(&thread_, &attr, &GuestDevInBackground::Draft, this) == 0;
    pthread_attr_destroy(&attr);
  }
  GuestDevInBackground(const GuestDevInBackground&) = delete;
  GuestDevInBackground& operator=(const GuestDevInBackground&) = delete;
  ~GuestDevInBackground() { Join(); }

  absl::StatusOr<GuestDev> Take(const std::set<unsigned>& nvidia_majors) {
    if (wanted_ && !started_) Draft(this);  // no thread: here, then
    Join();
    if (!draft_.ok()) return draft_.status();
    return FinishGuestDev(*std::move(draft_), nvidia_majors);
  }

 private:
  static void* Draft(void* self) {
    auto* me = static_cast<GuestDevInBackground*>(self);
    if (me->wanted_) me->draft_ = DraftGuestDev(DeviceFileNames());
    return nullptr;
  }
  void Join() {
    if (started_) pthread_join(thread_, nullptr);
    started_ = false;
  }
  const bool wanted_;
  bool started_ = false;
  pthread_t thread_{};
  absl::StatusOr<GuestDevDraft> draft_ =
      absl::FailedPreconditionError("the guest's /dev: not made");
};

// After the guest runs: what nvsentry passes on between its own signals and the guest (job
// control, forwarded signals) and, when the whole guest is gone, the exit status.
class Supervisor {
 public:
  Supervisor(const StartedInit& init, Terminal& tty, Sentry& sentry,
             std::shared_ptr<std::atomic<bool>> killed_by_policy)
      : pid_(init.pid),
        pidfd_(init.pidfd),
        report_fd_(init.report_fd),
        tty_(tty),
        sentry_(sentry),
        killed_by_policy_(std::move(killed_by_policy)) {}

  // Until the guest is gone; its exit code.
  int Run(const sigset_t& handled) {
    const int sfd = signalfd(-1, &handled, SFD_CLOEXEC);
    for (;;) {
      pollfd fds[2] = {{sfd, POLLIN, 0}, {report_fd_, POLLIN, 0}};
      if (poll(fds, 2, -1) < 0) continue;
      if (fds[1].revents != 0) {
        if (std::optional<int> code = OnReport()) return *code;
        continue;
      }
      if (!(fds[0].revents & POLLIN)) continue;
      signalfd_siginfo si;
      if (read(sfd, &si, sizeof si) != sizeof si) continue;
      if (std::optional<int> code = OnSignal(si)) return *code;
    }
  }

 private:
  void Signal(int sig) { syscall(SYS_pidfd_send_signal, pidfd_, sig, nullptr, 0); }

  // The guest's exit code once the whole guest is gone, else nullopt.
  std::optional<int> OnReport() {
    InitReport report;
    if (read(report_fd_, &report, sizeof report) != sizeof report) {
      report_fd_ = -1;  // init is gone; SIGCHLD says so too
    } else if (report.kind == InitReport::kGuestExited) {
      // Init has killed and reaped the rest of the guest, and exits now: nvsentry does not wait
      // for its namespaces to be torn down.
      exit_status_ = report.value;
      return Finish(nullptr);
    } else if (report.kind == InitReport::kGuestStopped) {
      // The guest stopped (Ctrl-Z, a stop signal): so does nvsentry, for its shell to see. The
      // shell takes the terminal back; `fg` continues nvsentry, which continues the guest.
      spdlog::debug("the guest stopped with signal {}: stopping nvsentry", report.value);
      tty_.ForgetHandover();
      if (!StopSelf(report.value)) {
        // Discarded (an orphaned group): as for a program outside, the stop does not happen.
        spdlog::info(
            "nvsentry's process group is orphaned: signal {} does not stop it; "
            "continuing the guest",
            report.value);
        tty_.HandToIfForeground(pid_);
        Signal(SIGCONT);
      }
    }
    return std::nullopt;
  }

  // The guest's exit code once the whole guest is gone, else nullopt.
  std::optional<int> OnSignal(const signalfd_siginfo& si) {
    const int sig = static_cast<int>(si.ssi_signo);
    if (sig == SIGCONT) {
      // Continued (`fg` or `bg`, or a SIGSTOP/SIGCONT sent to nvsentry): the guest goes on too,
      // owning the terminal again if nvsentry is now the foreground job.
      tty_.HandToIfForeground(pid_);
      Signal(SIGCONT);
      return std::nullopt;
    }
    if (sig != SIGCHLD) {
      // The guest cannot reach nvsentry (another process group, outside its PID namespace): this
      // came from outside the sandbox, and goes to the guest program.
      spdlog::debug("signal {} from pid {}: forwarding", sig, si.ssi_pid);
      Signal(sig);
      return std::nullopt;
    }
    siginfo_t info{};
    if (waitid(P_PIDFD, static_cast<id_t>(pidfd_), &info, WEXITED | WNOHANG) != 0 ||
        info.si_pid == 0)
      return std::nullopt;
    // Init is gone, and with it the last of its PID namespace.
    return Finish(&info);
  }

  // The whole guest is gone (`init_exit`: how init ended, when that is how nvsentry learnt it):
  // ends what it left open; nvsentry's exit code.
  int Finish(const siginfo_t* init_exit) {
    while (CrashInProgress()) pause();  // the crashing thread ends the process with its signal
    StartupMark("the guest is gone");
    tty_.TakeBack();
    sentry_.sessions().EndAll();
    return ExitCode(init_exit);
  }

  int ExitCode(const siginfo_t* init_exit) {
    if (*killed_by_policy_) return 128 + SIGKILL;
    if (exit_status_ >= 0 || (report_fd_ >= 0 && ReadExitReport(report_fd_, &exit_status_)))
      return StatusToExitCode(exit_status_);
    // Init died without reporting: killed from outside, or it could not start the program.
    if (init_exit->si_code == CLD_KILLED || init_exit->si_code == CLD_DUMPED)
      return 128 + init_exit->si_status;
    return init_exit->si_status == 0 ? kSandboxFailed : init_exit->si_status;
  }

  const pid_t pid_;
  const int pidfd_;
  int report_fd_;         // -1 once init has closed it
  int exit_status_ = -1;  // the guest program's raw wait status, once init reported it
  Terminal& tty_;
  Sentry& sentry_;
  std::shared_ptr<std::atomic<bool>> killed_by_policy_;
};

// The sentry's side before its first thread: higher fd limits, and (root-started with a user
// namespace) no capability over the host.
void NarrowTheSentry(const GuestIdentity& identity) {
  // Sessions cost the sentry fds; the guest keeps the limits it was started with.
  rlimit nofile;
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
  // The sentry has made everything it needs from the host (namespaces, maps, files, limits):
  // from here on it holds no capability over the host, only over the guest's namespaces, which
  // its uid owns. Done before any thread exists, so every thread has the reduced set.
  if (identity.user_ns && identity.privileged) {
    if (const char* what = DropHostCapabilities(identity))
      spdlog::warn("{}: {}; the sentry keeps root's capabilities", what, strerror(errno));
  }
}

// --frames: the recorder, its writer forked now, with nvsentry's own identity (the sentry may no
// longer write DIR once it runs); null without --frames. An error (InvalidArgument: DIR is wrong)
// when it cannot start.
absl::Status StartFrameRecorder(const RunOptions& options, std::shared_ptr<FrameRecorder>& frames) {
  if (options.frames_dir.empty()) return absl::OkStatus();
  absl::StatusOr<FrameFileWriter> writer = FrameFileWriter::Start(options.frames_dir);
  if (!writer.ok()) return writer.status();
  frames = std::make_shared<FrameRecorder>(*std::move(writer), options.frames_max, kFramesMaxBytes);
  return absl::OkStatus();
}

// What RunGuest makes before the sandbox starts, every check of the command line done.
struct GuestRun {
  std::shared_ptr<proxy::GuestConfig> guest;
  GuestIdentity identity;
  std::optional<OutputFile> trace, learn;  // --trace's file (not standard error), --learn's
  std::shared_ptr<FrameRecorder> frames;   // --frames
  bool started = false;  // the sentry took init's listener: the guest program runs
};

// The guest runs: what --trace writes starts afresh.
void GuestStarts(GuestRun& run) {
  run.started = true;
  if (run.trace) EmptyOutputFile(*run.trace);
}

// What the sandbox is made of before init is cloned.
struct SandboxDraft {
  std::optional<DeviceFsMount> device_files;  // --devices: the device files; else opens trapped
  FilterProgram filter;
  MountPlan mounts;
  // The device files, the guest's whole /dev: served later, its mount points listed while init
  // starts (both never destroyed, as the sentry). An open, which only the guest makes, waits for
  // the sentry.
  DeferredDeviceFileHandler* deferred = nullptr;
  std::unique_ptr<DeviceFs> served;
};

// The device files, the filter, the guest's view and, with device files, the guest's /dev and
// its server (not serving yet). The message says what failed.
absl::Status DraftSandbox(const RunOptions& options, const GuestIdentity& identity,
                          SandboxDraft& draft) {
  GuestDevInBackground dev_maker(options.devices != DeviceMode::kTrap && geteuid() == 0);
  // Read once for the host's nodes and the guest's /dev: /proc/devices costs the kernel some
  // 0.1 ms a read here.
  const std::set<unsigned> nvidia_majors = NvidiaCharMajors();
  StartupMark("NVIDIA majors read");
  absl::StatusOr<std::optional<DeviceFsMount>> device_files = ChooseDeviceFiles(options.devices);
  if (!device_files.ok()) return device_files.status();
  draft.device_files = *std::move(device_files);
  StartupMark("device files made");
  absl::StatusOr<FilterProgram> filter = BuildGuestFilter(!draft.device_files.has_value());
  if (!filter.ok()) return filter.status();
  draft.filter = *std::move(filter);
  StartupMark("filter built");
  draft.mounts = GuestMountPlan(options, HostNodesToHide(options, nvidia_majors));
  draft.mounts.refused_advice = RefusedAdvice(identity);
  StartupMark("host nodes found");
  // Joined: the clone needs one thread.
  absl::StatusOr<GuestDev> made = dev_maker.Take(nvidia_majors);
  draft.deferred = new DeferredDeviceFileHandler;
  if (draft.device_files.has_value()) {
    if (!made.ok()) return made.status();
    draft.served =
        std::make_unique<DeviceFs>(std::move(draft.device_files->connection), *draft.deferred,
                                   std::move(made->entries), identity.host_uid, identity.host_gid);
    draft.mounts.device_mount = draft.device_files->mount.get();
    draft.mounts.dev_binds = std::move(made->binds);
    draft.mounts.device_files = DeviceFileNames();
  }
  StartupMark("the guest's /dev drafted");
  for (const HostNode& n : draft.mounts.hide) spdlog::info("hiding host node {}", n.path);
  return absl::OkStatus();
}

// Taken from the signalfd the supervisor reads. SIGTTOU also lets nvsentry give its terminal's
// foreground to the guest and take it back from the background. Blocks them; `original`: the mask
// before.
void BlockHandledSignals(sigset_t& handled, sigset_t& original) {
  sigemptyset(&handled);
  sigaddset(&handled, SIGCHLD);
  sigaddset(&handled, SIGCONT);
  for (int s : kForwardedSignals) sigaddset(&handled, s);
  sigprocmask(SIG_BLOCK, &handled, &original);
}

// The policy's "kill" action: SIGKILL to init ends the whole PID namespace, and nvsentry exits
// 137 (SIGKILL) whatever init reports. True in the flag once the guest was killed so.
std::shared_ptr<std::atomic<bool>> ArmPolicyKill(proxy::GuestConfig& guest, int init_pidfd) {
  auto killed_by_policy = std::make_shared<std::atomic<bool>>(false);
  guest.services.kill_guest = [pidfd = init_pidfd, killed_by_policy] {
    if (!killed_by_policy->exchange(true))
      spdlog::error("the policy's action is kill: killing the guest");
    syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
  };
  return killed_by_policy;
}

// Lists the device files' mount points, then tells init ("dev") it may attach them.
void ListDeviceFiles(DeviceFs& served, DeviceFsMount& device_files, const StartedInit& init) {
  // Init does its own part meanwhile (its identity, limits, the rest of its view): both took
  // about as long (2-CPU VM), and the listing came before the clone until 2026-11-28.
  // Should the serving fail, init is killed first: the sentry's start then fails (no listener),
  // and the asker's requests end with the connection.
  const bool listed = served.Prime(device_files.mount.get(), [pidfd = init.pidfd] {
    syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
  });
  if (!listed) spdlog::debug("the guest's /dev: not listed before init attaches it");
  // Init has its own copy of the mount to attach.
  device_files.mount.Reset();
  // A failure is init's end: ReceiveListener reports it.
  if (absl::Status s = SendWithFd(init.control.get(), "dev", -1); !s.ok())
    spdlog::debug("telling init the guest's /dev is listed: {}", std::string(s.message()));
  StartupMark("the guest's /dev listed");
}

// The sentry, serving the device files (if any) from now on. Never destroyed: workers may still
// be inside a call when the guest's end is reported, and the process ends right after RunGuest
// returns.
Sentry* MakeSentry(const RunOptions& options, const std::shared_ptr<proxy::GuestConfig>& guest,
                   const std::shared_ptr<FrameRecorder>& frames, SandboxDraft& draft) {
  dev_t device_files_dev = 0;
  if (draft.served) {
    device_files_dev = draft.device_files->dev;
    if (!draft.served->Serve()) draft.served.reset();
  }
  StartupMark("device files served");
  auto* sentry = new Sentry(SentryOptions{options.workers, options.sync_wakeup, guest, frames,
                                          options.frames_every, options.host_dev_dir});
  if (draft.served)
    sentry->ServeDeviceFiles(std::move(draft.served), device_files_dev, *draft.deferred);
  StartupMark("sentry made");
  return sentry;
}

// Takes the listener from init and starts receiving the guest's calls on it (the guest has
// started). False (with a message) when init could not hand it over: init is then waited for.
bool StartReceiving(StartedInit& init, Terminal& tty, Sentry& sentry, GuestRun& run) {
  absl::StatusOr<ReceivedListener> received = ReceiveListener(init.control.get());
  init.control.Reset();
  if (!received.ok()) {
    fprintf(stderr, "nvsentry: cannot start the sandbox: %s\n",
            std::string(received.status().message()).c_str());
    tty.TakeBack();
    waitpid(init.pid, nullptr, 0);
    return false;
  }
  if (!received->killable)
    spdlog::warn(
        "kernel lacks SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (5.19): a signal can "
        "interrupt a call after the sentry acted on it");
  // The listener is the sentry's for its whole life.
  StartupMark("listener received");
  GuestStarts(run);
  sentry.Start(received->fd.Release());
  StartupMark("receiver started");
  return true;
}

// The last frames the guest showed, on disk before nvsentry exits; one that could not be written
// is an error (the writer said why): the status, or 1 where the guest's own was 0.
int FinishFrames(const RunOptions& options, FrameRecorder* frames, int status) {
  if (frames == nullptr || frames->Finish()) return status;
  fprintf(stderr, "nvsentry: --frames: not every frame kept could be written to %s\n",
          options.frames_dir.c_str());
  return status == 0 ? 1 : status;
}

// Starts the sandbox and the guest in it, and waits for the guest's end: the exit status, and
// run.started when the guest ran (else kSandboxFailed, with a message).
int RunSandbox(const RunOptions& options, GuestRun& run) {
  const std::shared_ptr<proxy::GuestConfig>& guest = run.guest;
  const std::shared_ptr<FrameRecorder>& frames = run.frames;
  spdlog::info("the guest runs as {}", DescribeIdentity(run.identity));
  if (absl::Status s = JudgeKernel(ProbeKernel()); !s.ok()) {
    fprintf(stderr, "nvsentry: %s\n", std::string(s.message()).c_str());
    return kSandboxFailed;
  }
  // The host backend's nodes, before anything of the guest runs.
  if (guest->policy.rules().GpuOnHost() && !options.simulated_jetson)
    if (absl::Status s = CheckHostBackendNodes(options.host_dev_dir, run.identity); !s.ok()) {
      fprintf(stderr, "nvsentry: %s\n", std::string(s.message()).c_str());
      return kSandboxFailed;
    }
  SandboxDraft draft;
  if (absl::Status s = DraftSandbox(options, run.identity, draft); !s.ok()) {
    fprintf(stderr, "nvsentry: %s\n", std::string(s.message()).c_str());
    return kSandboxFailed;
  }
  sigset_t handled, original;
  BlockHandledSignals(handled, original);
  Terminal tty = Terminal::OpenControlling();
  absl::StatusOr<StartedInit> init =
      StartInit({options, run.identity, draft.filter, std::move(draft.mounts),
                 GuestWorkdir(options), original, draft.served ? draft.served->ConnectionFd() : -1},
                tty);
  if (!init.ok()) {
    fprintf(stderr, "nvsentry: %s\n", std::string(init.status().message()).c_str());
    return kSandboxFailed;
  }
  StartupMark("init cloned, id maps written");
  std::shared_ptr<std::atomic<bool>> killed_by_policy = ArmPolicyKill(*guest, init->pidfd);
  // Init goes on at once, while the sentry lists the device files' mount points, narrows itself,
  // serves the device files and is made (its own start-up, on the other CPU). Init waits for the
  // listing before it attaches the device files ("dev"), and then asks them nothing.
  if (absl::Status go = GoAhead(*init, tty); !go.ok()) {
    fprintf(stderr, "nvsentry: %s\n", std::string(go.message()).c_str());
    return kSandboxFailed;
  }
  StartupMark("init told to go");
  if (draft.served) ListDeviceFiles(*draft.served, *draft.device_files, *init);
  NarrowTheSentry(run.identity);
  if (frames) frames->Start();
  StartupMark("capabilities dropped");
  Sentry* sentry = MakeSentry(options, guest, frames, draft);
  if (!StartReceiving(*init, tty, *sentry, run)) return kSandboxFailed;
  const int status = Supervisor(*init, tty, *sentry, killed_by_policy).Run(handled);
  StartupMark("supervisor returned");
  sentry->Quiesce();
  StartupMark("engines quiesced");
  return FinishFrames(options, frames.get(), status);
}

// --trace: false (with a message) when records could not be written to it.
bool TraceWritten(const RunOptions& o, const proxy::GuestConfig& guest) {
  const proxy::Tracer* t = guest.services.tracer.get();
  const proxy::Tracer::Loss loss = t != nullptr ? t->loss() : proxy::Tracer::Loss{};
  if (loss.records == 0) return true;
  fprintf(stderr, "nvsentry: --trace: cannot write %s: %s (%llu records lost)\n",
          o.trace_file == "-" ? "standard error" : o.trace_file.c_str(), strerror(loss.err),
          static_cast<unsigned long long>(loss.records));
  return false;
}

// --trace's and --learn's files as they were, when the guest never ran.
void AbandonOutputs(GuestRun& run) {
  if (run.trace) AbandonOutputFile(*run.trace);
  if (run.learn) {
    AbandonOutputFile(*run.learn);
    fclose(run.learn->file);
  }
}

// Everything the command line asks for that can be wrong, checked before anything of the guest
// starts: the policy, the identity, the files --trace and --learn write (opened, not emptied)
// and --frames' directory (its writer started). InvalidArgument: the command line is wrong.
absl::Status PrepareGuestRun(const RunOptions& options, GuestRun& run) {
  StartupMark("sandbox starts");
  absl::StatusOr<std::shared_ptr<proxy::GuestConfig>> guest = MakeGuestConfig(options);
  if (!guest.ok()) return absl::InvalidArgumentError(guest.status().message());
  run.guest = *std::move(guest);
  absl::StatusOr<GuestIdentity> identity = ChooseGuestIdentity(options);
  if (!identity.ok()) return identity.status();
  run.identity = *identity;
  StartupMark("identity chosen");
  if (options.trace) {
    FILE* out = stderr;
    if (options.trace_file != "-") {
      absl::StatusOr<OutputFile> file = OpenOutputFile("--trace", options.trace_file);
      if (!file.ok()) return file.status();
      run.trace = *file;
      out = file->file;
    }
    run.guest->Trace(std::make_shared<proxy::Tracer>(
        out, options.trace_json ? proxy::Tracer::Format::kJson : proxy::Tracer::Format::kText));
  }
  if (!options.learn_file.empty()) {
    absl::StatusOr<OutputFile> file = OpenOutputFile("--learn", options.learn_file);
    if (!file.ok()) return file.status();
    run.learn = *file;
  }
  return StartFrameRecorder(options, run.frames);
}

}  // namespace

absl::StatusOr<std::shared_ptr<proxy::GuestConfig>> MakeGuestConfig(const RunOptions& options) {
  policy::Policy pol = policy::DefaultPolicy();
  if (!options.policy_file.empty()) {
    absl::StatusOr<policy::Policy> p = policy::LoadPolicy(options.policy_file);
    if (!p.ok())
      return absl::InvalidArgumentError(absl::StrCat("--policy: ", p.status().message()));
    pol = *std::move(p);
  } else {
    // The default policy, with the command line's shorthands for its [guest] table.
    pol.service = options.service;
    if (!options.firmware.empty()) {
      std::optional<abi::Firmware> fw = abi::ParseFirmware(options.firmware);
      if (!fw) return absl::InvalidArgumentError("--firmware: not a version: " + options.firmware);
      pol.firmware = *fw;
    }
    std::optional<uint32_t> mask = abi::ServiceMask(pol.service, pol.firmware);
    if (!mask) return absl::InvalidArgumentError("--service: unknown service " + pol.service);
    pol.permission_mask = *mask;
    pol.debug_mode = options.debug_mode;
    if (options.backend_host)
      for (const abi::DeviceDesc& dev : abi::Devices())
        if (policy::HostCapable(dev.id))
          pol.devices[dev.id] = policy::DeviceRule{policy::Backend::kHost, policy::Verdict::kAllow};
  }
  // Learning never refuses what the policy would: every violation is only logged.
  if (!options.learn_file.empty()) pol.action = policy::Action::kAudit;
  auto c = std::make_shared<proxy::GuestConfig>(std::move(pol));
  if (!options.learn_file.empty()) c->Learn(std::make_shared<proxy::Learner>());
  return c;
}

absl::StatusOr<int> RunGuest(const RunOptions& options) {
  GuestRun run;
  if (absl::Status s = PrepareGuestRun(options, run); !s.ok()) {
    AbandonOutputs(run);
    return s;
  }
  const int status = RunSandbox(options, run);
  if (!run.started) {  // the guest never ran: its files stay as they were
    AbandonOutputs(run);
    return status;
  }
  // What nvsentry could not write is an error: 1 when the guest's own status was 0.
  bool written =
      !run.learn || WriteLearned(run.learn->file, options.learn_file, *run.guest, options);
  written = TraceWritten(options, *run.guest) && written;
  return written || status != 0 ? status : 1;
}

}  // namespace nvsentry::sentry
