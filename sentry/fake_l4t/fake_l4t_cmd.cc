#include "sentry/fake_l4t/fake_l4t_cmd.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

#include "hostshim/fake_l4t/fake_jetson.h"
#include "hostshim/fake_l4t/translate.h"
#include "hostshim/unique_fd.h"
#include "sentry/fake_l4t/fake_l4t_fs.h"
#include "sentry/fake_l4t/fake_l4t_program.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace nvsentry::sentry {
namespace {

void SetUpLog(const std::string& level) {
  auto logger = spdlog::stderr_logger_mt("fake-l4t");
  logger->set_pattern("nvsentry: %Y-%m-%d %H:%M:%S.%e [%l] [%t] %v");
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
}

// Leaves without destructors: serving threads and parked calls may still run, and the kernel
// answers whatever is left once the connection closes with this process.
[[noreturn]] void Leave(int status) {
  fflush(stdout);
  spdlog::default_logger()->flush();
  _exit(status);
}

// `-- PROGRAM`: serves it, then leaves with its status once its files are released.
[[noreturn]] void ServeProgramAndLeave(const FakeL4tOptions& o, FakeL4tFs& fs,
                                       hostshim::fake_l4t::FakeJetson& fake) {
  std::thread([&fs] {
    const int rc = fs.Serve();
    spdlog::debug("fake-l4t: the filesystem ended ({})", rc);
  }).detach();
  const int status = ServeProgram(o.dir, fs.dev(), fake, o.program);
  // FUSE releases come after the last close returns, and the sim frees some objects after that:
  // give them time.
  for (int i = 0; i < 1000 && !fake.HoldsNothing(); ++i) usleep(10000);
  fprintf(stderr, "%s\n", fake.Status().c_str());
  if (umount2(o.dir.c_str(), MNT_DETACH) != 0)
    spdlog::warn("fake-l4t: unmounting {}: {}", o.dir, strerror(errno));
  Leave(status);
}

// Root, and DIR a directory; false after saying what is wrong.
bool CanServe(const FakeL4tOptions& o) {
  if (geteuid() != 0) {
    fprintf(stderr,
            "nvsentry fake-l4t: needs root: /dev/fuse is root's and mounting a filesystem "
            "needs CAP_SYS_ADMIN\n");
    return false;
  }
  struct stat st {};
  if (stat(o.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    fprintf(stderr, "nvsentry fake-l4t: %s is not a directory\n", o.dir.c_str());
    return false;
  }
  return true;
}

}  // namespace

int RunFakeL4t(const FakeL4tOptions& o) {
  SetUpLog(o.log_level);
  if (!CanServe(o)) return 1;
  // Before any thread: the signals come through a signalfd only.
  sigset_t handled;
  sigemptyset(&handled);
  for (int sig : {SIGINT, SIGTERM, SIGUSR1}) sigaddset(&handled, sig);
  pthread_sigmask(SIG_BLOCK, &handled, nullptr);
  const hostshim::UniqueFd signals(signalfd(-1, &handled, SFD_CLOEXEC));
  const hostshim::UniqueFd ended(eventfd(0, EFD_CLOEXEC));
  if (!signals || !ended) {
    perror("nvsentry fake-l4t: signalfd/eventfd");
    return 1;
  }

  // GM20B's 64 KiB default big page where PROGRAM can get 128 KiB from ALLOC_AS; over FUSE alone,
  // where ALLOC_AS cannot hand out its fd, the sim's 128 KiB, which the suite's guests ask for.
  // nvmap handles are fds where PROGRAM's calls can take them, ids over FUSE alone.
  auto* fake = new hostshim::fake_l4t::FakeJetson(
      o.program.empty() ? 0x20000 : hostshim::fake_l4t::kL4tDefaultBigPageSize,
      /*handles_are_fds=*/!o.program.empty());  // lives on
  absl::StatusOr<std::unique_ptr<FakeL4tFs>> fs = FakeL4tFs::Mount(o.dir, *fake);
  if (!fs.ok()) {
    fprintf(stderr, "nvsentry fake-l4t: %s\n", std::string(fs.status().message()).c_str());
    return 1;
  }
  if (!o.program.empty()) ServeProgramAndLeave(o, **fs, *fake);
  std::thread([fs = fs->get(), fd = ended.get()] {
    const int rc = fs->Serve();
    spdlog::info("fake-l4t: the filesystem ended ({})", rc);
    const uint64_t one = 1;
    (void)!write(fd, &one, sizeof one);
  }).detach();
  // The files answer from here on (the kernel queues requests until a thread reads them).
  printf("fake-l4t: ready %s\n", o.dir.c_str());
  fflush(stdout);

  for (;;) {
    pollfd p[2] = {{signals.get(), POLLIN, 0}, {ended.get(), POLLIN, 0}};
    if (poll(p, 2, -1) < 0) continue;
    if (p[1].revents) Leave(0);  // unmounted by someone else, last file closed
    signalfd_siginfo si{};
    if (read(signals.get(), &si, sizeof si) != sizeof si) continue;
    if (si.ssi_signo == SIGUSR1) {
      printf("%s\n", fake->Status().c_str());
      fflush(stdout);
      continue;
    }
    // SIGINT, SIGTERM: detach the mount (open files keep the connection until this process
    // leaves, which answers them ENOTCONN from then on).
    if (umount2(o.dir.c_str(), MNT_DETACH) != 0)
      spdlog::warn("fake-l4t: unmounting {}: {}", o.dir, strerror(errno));
    printf("fake-l4t: stopped\n");
    Leave(0);
  }
}

}  // namespace nvsentry::sentry
