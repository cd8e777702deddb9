// What parked waits cost: a guest parks WAITS threads in SYNCPT_WAITEX
// under nvsentry and goes idle; the driver reads the sentry's CPU time from /proc/PID/stat over a
// window, then the guest times SYNCPT_READ. Every figure has its baseline from the same run:
// the same window and the same reads with nothing parked, and the raw seccomp-notify round trip
// (no sentry) with and without the same number of calls left pending in the kernel.
//
//   parked_bench NVSENTRY PARKED_GUEST [--waits=N] [--rounds=N] [--window=SECONDS]
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bench/raw_notify.h"
#include "bench/timing.h"

namespace nvbench {
namespace {

constexpr long kReadCalls = 500;  // per block: 5000 parked calls made a read cost ~2 ms before
constexpr int kBlocks = 5;
constexpr int kSettleSeconds = 2;  // after the last wait reached the sentry, before the window
constexpr int kStepTimeoutSeconds = 120;

struct Setup {
  std::string nvsentry, guest;
  int waits = 5000;
  int rounds = 3;
  int window = 5;
};

// The sentry process's CPU time (all its threads, user and system) in clock ticks.
std::optional<long> CpuTicks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = text.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(paren + 2));
  std::string f;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {  // field 3 is the state
    if (i == 14) utime = atol(f.c_str());
    if (i == 15) stime = atol(f.c_str());
  }
  return utime + stime;
}

int CountEntries(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n;
}

// A guest under nvsentry with its standard input and output on pipes.
class GuestProcess {
 public:
  bool Start(const std::vector<std::string>& args) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) return false;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], STDIN_FILENO);
      dup2(out[1], STDOUT_FILENO);
      std::vector<char*> argv;
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_ = in[1];
    from_ = out[0];
    return pid_ > 0;
  }
  ~GuestProcess() {
    if (to_ >= 0) close(to_);
    if (from_ >= 0) close(from_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }

  // The next line the guest prints, or nothing at its end or after the timeout.
  std::optional<std::string> Line() {
    const int64_t deadline = NowNs() + int64_t{kStepTimeoutSeconds} * 1'000'000'000;
    for (;;) {
      size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return line;
      }
      int left_ms = static_cast<int>((deadline - NowNs()) / 1'000'000);
      if (left_ms <= 0) return std::nullopt;
      pollfd p{from_, POLLIN, 0};
      if (poll(&p, 1, left_ms) < 0 && errno != EINTR) return std::nullopt;
      char chunk[4096];
      ssize_t n = read(from_, chunk, sizeof chunk);
      if (n == 0) return std::nullopt;
      if (n > 0) buf_.append(chunk, static_cast<size_t>(n));
    }
  }
  bool Go() { return write(to_, "go\n", 3) == 3; }
  bool Finish() {
    close(to_);
    to_ = -1;
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string buf_;
};

std::optional<double> MedianOfTagged(const std::string& line, const std::string& tag) {
  if (line.rfind(tag + " ", 0) != 0) return std::nullopt;
  std::optional<std::vector<double>> v = ParseSamples(kSamplesTag + line.substr(tag.size()));
  if (!v) return std::nullopt;
  return Median(*v);
}

struct Round {
  double idle_cpu = 0, parked_cpu = 0;  // share of one core
  double read_ns = 0, loaded_read_ns = 0;
  double raw_ns = 0, loaded_raw_ns = 0;
  int idle_threads = 0, parked_threads = 0, idle_fds = 0, parked_fds = 0;
};

std::string PolicyFile(int waits) {
  char path[] = "/tmp/parked_bench_policy_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return "";
  std::string text = "[budgets]\nparked_waits = " + std::to_string(waits) + "\n";
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok ? path : "";
}

// The sentry's CPU share over the window; the guest is idle at a handshake meanwhile.
std::optional<double> CpuShare(pid_t pid, int seconds) {
  std::optional<long> t0 = CpuTicks(pid);
  int64_t w0 = NowNs();
  sleep(static_cast<unsigned>(seconds));
  std::optional<long> t1 = CpuTicks(pid);
  int64_t w1 = NowNs();
  if (!t0 || !t1) return std::nullopt;
  return static_cast<double>(*t1 - *t0) / static_cast<double>(sysconf(_SC_CLK_TCK)) /
         (static_cast<double>(w1 - w0) / 1e9);
}

std::optional<double> RawRoundTrip(int parked) {
  RawOptions o{true, false, kReadCalls / 4, kBlocks, kReadCalls, parked};
  RawResult r = MeasureRawRoundTrip(o);
  if (!r.ns_per_call) return std::nullopt;
  return Median(*r.ns_per_call);
}

bool Fail(const char* step) {
  fprintf(stderr, "parked_bench: %s\n", step);
  return false;
}

bool RunRound(const Setup& s, const std::string& policy, Round* r) {
  std::optional<double> raw = RawRoundTrip(0), loaded_raw = RawRoundTrip(s.waits);
  if (!raw || !loaded_raw) return Fail("the raw round trip failed");
  r->raw_ns = *raw;
  r->loaded_raw_ns = *loaded_raw;

  GuestProcess g;
  // One thread per parked wait: the guest's task limit (--max-tasks, default 4096) must hold them.
  if (!g.Start({s.nvsentry, "run", "--policy=" + policy,
                "--max-tasks=" + std::to_string(s.waits + 64), "--", s.guest,
                std::to_string(s.waits), std::to_string(kReadCalls), std::to_string(kBlocks)}))
    return Fail("cannot start the guest");
  const std::string proc = "/proc/" + std::to_string(g.pid());
  std::optional<std::string> line = g.Line();
  std::optional<double> read = line ? MedianOfTagged(*line, "unloaded_ns") : std::nullopt;
  if (!read || g.Line() != "idle") return Fail("no unloaded figure from the guest");
  r->read_ns = *read;
  std::optional<double> idle = CpuShare(g.pid(), s.window);
  r->idle_threads = CountEntries(proc + "/task");
  r->idle_fds = CountEntries(proc + "/fd");
  if (!idle || !g.Go()) return Fail("no idle CPU figure");
  r->idle_cpu = *idle;
  fprintf(stderr, "parked_bench: parking %d waits\n", s.waits);
  if (g.Line() != "parked " + std::to_string(s.waits))
    return Fail("the guest did not park its waits");
  sleep(kSettleSeconds);
  std::optional<double> parked = CpuShare(g.pid(), s.window);
  r->parked_threads = CountEntries(proc + "/task");
  r->parked_fds = CountEntries(proc + "/fd");
  if (!parked || !g.Go()) return Fail("no parked CPU figure");
  r->parked_cpu = *parked;
  line = g.Line();
  std::optional<double> loaded = line ? MedianOfTagged(*line, "loaded_ns") : std::nullopt;
  if (!loaded) return Fail("no loaded figure from the guest");
  r->loaded_read_ns = *loaded;
  return g.Finish() || Fail("the guest failed");
}

template <typename F>
double MedianOf(const std::vector<Round>& rounds, F field) {
  std::vector<double> v;
  for (const Round& r : rounds) v.push_back(static_cast<double>(field(r)));
  return Median(v);
}

void Report(const Setup& s, const std::vector<Round>& rounds) {
  auto m = [&](auto field) { return MedianOf(rounds, field); };
  const double idle = m([](const Round& r) { return r.idle_cpu; });
  const double parked = m([](const Round& r) { return r.parked_cpu; });
  const double read = m([](const Round& r) { return r.read_ns; });
  const double loaded = m([](const Round& r) { return r.loaded_read_ns; });
  const double raw = m([](const Round& r) { return r.raw_ns; });
  const double loaded_raw = m([](const Round& r) { return r.loaded_raw_ns; });
  const double read_ratio = loaded / read, raw_ratio = loaded_raw / raw;
  printf("Parked waits: %d guest threads in SYNCPT_WAITEX (never reached, no timeout)\n", s.waits);
  printf(
      "median of %zu rounds; CPU over a %d s window with the guest idle, read from "
      "/proc/PID/stat\n\n",
      rounds.size(), s.window);
  printf("%-40s %14s %14s %8s  %s\n", "", "nothing parked", "waits parked", "ratio", "target");
  printf("%-40s %13.1f%% %13.1f%% %8s  < 5%%: %s\n", "sentry CPU (share of one core)", idle * 100,
         parked * 100, "", parked < 0.05 ? "PASS" : "MISS");
  printf("%-40s %14.0f %14.0f %7.2fx  <= 1.2x: %s\n", "SYNCPT_READ under nvsentry, ns/call", read,
         loaded, read_ratio, read_ratio <= 1.2 ? "PASS" : "MISS");
  printf("%-40s %14.0f %14.0f %7.2fx  (the kernel alone)\n", "raw notify round trip, no sentry, ns",
         raw, loaded_raw, raw_ratio);
  printf("%-40s %14s %14s %7.2fx\n", "nvsentry's ratio over the kernel's", "", "",
         read_ratio / raw_ratio);
  printf("%-40s %14.0f %14.0f\n", "sentry threads",
         m([](const Round& r) { return r.idle_threads; }),
         m([](const Round& r) { return r.parked_threads; }));
  printf("%-40s %14.0f %14.0f\n", "sentry fds", m([](const Round& r) { return r.idle_fds; }),
         m([](const Round& r) { return r.parked_fds; }));
  printf("\nper round (CPU idle/parked, read, loaded read, raw, loaded raw):\n");
  for (const Round& r : rounds)
    printf("  %.1f%% / %.1f%%, %.0f, %.0f, %.0f, %.0f ns\n", r.idle_cpu * 100, r.parked_cpu * 100,
           r.read_ns, r.loaded_read_ns, r.raw_ns, r.loaded_raw_ns);
}

std::optional<Setup> ParseArgs(int argc, char** argv) {
  if (argc < 3) return std::nullopt;
  Setup s{argv[1], argv[2]};
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* key, int* out) {
      size_t n = strlen(key);
      if (a.compare(0, n, key) != 0) return false;
      *out = atoi(a.c_str() + n);
      return *out > 0;
    };
    if (!value("--waits=", &s.waits) && !value("--rounds=", &s.rounds) &&
        !value("--window=", &s.window))
      return std::nullopt;
  }
  return s;
}

}  // namespace
}  // namespace nvbench

int main(int argc, char** argv) {
  std::optional<nvbench::Setup> setup = nvbench::ParseArgs(argc, argv);
  if (!setup) {
    fprintf(stderr,
            "usage: parked_bench NVSENTRY PARKED_GUEST [--waits=N] [--rounds=N] [--window=S]\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  const std::string policy = nvbench::PolicyFile(setup->waits);
  if (policy.empty()) return 1;
  std::vector<nvbench::Round> rounds;
  for (int i = 1; i <= setup->rounds; ++i) {
    fprintf(stderr, "parked_bench: round %d of %d\n", i, setup->rounds);
    nvbench::Round r;
    if (nvbench::RunRound(*setup, policy, &r)) rounds.push_back(r);
  }
  unlink(policy.c_str());
  if (rounds.empty()) return 1;
  nvbench::Report(*setup, rounds);
  return 0;
}
