#include "sentry/process/crash.h"

#include "hostshim/rate_limited_log.h"
#include "sentry/process/job_control.h"
#include "sentry/process/teardown_handoff.h"
#include "spdlog/spdlog.h"

#define UNW_LOCAL_ONLY
#include <cxxabi.h>
#include <dlfcn.h>
#include <libunwind.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <system_error>
#include <thread>

namespace nvsentry::sentry {
namespace {

// libunwind's calls the backtrace makes, from the library loaded at run time (LoadUnwinder) when
// the guest first asks the sentry something: linked, it and the liblzma it needs were mapped and
// relocated before main, some 0.12 ms of every `nvsentry run` (docs/benchmarks.md).
struct Unwinder {
  int (*getcontext)(unw_context_t*);
  int (*init_local)(unw_cursor_t*, unw_context_t*);
  int (*step)(unw_cursor_t*);
  int (*get_reg)(unw_cursor_t*, unw_regnum_t, unw_word_t*);
  int (*get_proc_name)(unw_cursor_t*, char*, size_t, unw_word_t*);
};
Unwinder g_unwinder;
enum UnwinderState : int { kNotLoaded, kLoading, kLoaded, kUnavailable };
std::atomic<int> g_unwinder_state{kNotLoaded};

// Whoever set the state to kLoading: loads, then says how it went.
void LoadUnwinder() {
  // By the absolute paths the build found, never a name the loader would look for: it would look
  // in LD_LIBRARY_PATH, whose elements a guest may be able to write (an empty one is the working
  // directory, which the guest shares), and run what it planted there in the sentry. Its one
  // dependency not loaded already, liblzma, first, by its path too, so that the loader does not
  // look for it either.
  void* lib = nullptr;
  if (NVSENTRY_LZMA_SO[0] != '\0' && dlopen(NVSENTRY_LZMA_SO, RTLD_NOW | RTLD_LOCAL) != nullptr)
    lib = dlopen(NVSENTRY_UNWIND_SO, RTLD_NOW | RTLD_LOCAL);
  Unwinder u{};
  if (lib != nullptr) {
    // With UNW_LOCAL_ONLY, libunwind.h names these so (its macros unw_getcontext & co).
    u.getcontext = reinterpret_cast<decltype(u.getcontext)>(dlsym(lib, "_Ux86_64_getcontext"));
    u.init_local = reinterpret_cast<decltype(u.init_local)>(dlsym(lib, "_ULx86_64_init_local"));
    u.step = reinterpret_cast<decltype(u.step)>(dlsym(lib, "_ULx86_64_step"));
    u.get_reg = reinterpret_cast<decltype(u.get_reg)>(dlsym(lib, "_ULx86_64_get_reg"));
    u.get_proc_name =
        reinterpret_cast<decltype(u.get_proc_name)>(dlsym(lib, "_ULx86_64_get_proc_name"));
  }
  const bool complete = u.getcontext != nullptr && u.init_local != nullptr && u.step != nullptr &&
                        u.get_reg != nullptr && u.get_proc_name != nullptr;
  if (complete) g_unwinder = u;
  g_unwinder_state.store(complete ? kLoaded : kUnavailable);
}

// In the fault handler: the unwinder, waiting up to a second for a load under way on another
// thread; null when there is none.
const Unwinder* UnwinderForCrash() {
  for (int waited_ms = 0; g_unwinder_state.load() == kLoading && waited_ms < 1000; ++waited_ms) {
    const timespec ms{0, 1000000};
    nanosleep(&ms, nullptr);
  }
  return g_unwinder_state.load() == kLoaded ? &g_unwinder : nullptr;
}

std::atomic<int> g_victim_pidfd{-1};
std::atomic<bool> g_crashing{false};
int g_log_fd = -1;
// Allocated up front: the demangler may not allocate safely inside a fault handler.
char* g_demangle_buf = nullptr;
size_t g_demangle_len = 0;

void Emit(const char* s, size_t n) {
  (void)!write(STDERR_FILENO, s, n);
  if (g_log_fd >= 0) (void)!write(g_log_fd, s, n);
}

void Emitf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void Emitf(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0) Emit(buf, std::min(static_cast<size_t>(n), sizeof buf - 1));
}

void OnFatal(int sig, siginfo_t* info, void*) {
  g_crashing.store(true);
  Emitf("nvsentry: internal error: %s at address %p; the guest was killed. Backtrace:\n",
        strsignal(sig), info ? info->si_addr : nullptr);
  const Unwinder* u = UnwinderForCrash();
  if (u == nullptr) Emitf("  (no frames: libunwind is not loaded)\n");
  unw_context_t ctx;
  unw_cursor_t cur;
  if (u != nullptr) {
    u->getcontext(&ctx);
    u->init_local(&cur, &ctx);
  }
  for (int frame = 0; u != nullptr && frame < 64 && u->step(&cur) > 0; ++frame) {
    unw_word_t ip = 0, off = 0;
    u->get_reg(&cur, UNW_REG_IP, &ip);
    char name[256] = "??";
    u->get_proc_name(&cur, name, sizeof name, &off);
    const char* shown = name;
    int status = -1;
    size_t len = g_demangle_len;
    if (g_demangle_buf != nullptr && name[0] == '_' && name[1] == 'Z') {
      char* d = abi::__cxa_demangle(name, g_demangle_buf, &len, &status);
      if (status == 0 && d != nullptr) {
        g_demangle_buf = d;
        g_demangle_len = std::max(g_demangle_len, len);
        shown = d;
      }
    }
    Emitf("  #%-2d 0x%016lx %s+0x%lx\n", frame, static_cast<unsigned long>(ip), shown,
          static_cast<unsigned long>(off));
  }
  // The guest must not be left hanging on a dead sentry. (Its init would also die of
  // PDEATHSIG, but only once the whole sentry is gone.)
  if (const int victim = g_victim_pidfd.load(); victim >= 0)
    syscall(SYS_pidfd_send_signal, victim, SIGKILL, nullptr, 0);
  TakeBackTerminalAfterCrash();
  // SA_RESETHAND restored the default action: re-raise to die of the same signal.
  raise(sig);
}

}  // namespace

void InstallCrashStackForThread() {
  static thread_local char* stack = nullptr;
  if (stack != nullptr) return;
  const size_t size = 64 * 1024;
  stack = static_cast<char*>(malloc(size));
  stack_t ss{};
  ss.ss_sp = stack;
  ss.ss_size = size;
  sigaltstack(&ss, nullptr);
}

void InstallCrashHandler(int log_fd) {
  g_log_fd = log_fd;
  g_demangle_len = 4096;
  g_demangle_buf = static_cast<char*>(malloc(g_demangle_len));
  InstallCrashStackForThread();
  struct sigaction sa {};
  sa.sa_sigaction = OnFatal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) sigaction(sig, &sa, nullptr);
}

void LoadCrashUnwinder() {
  int expected = kNotLoaded;
  if (g_unwinder_state.compare_exchange_strong(expected, kLoading)) LoadUnwinder();
}

void LoadCrashUnwinderInBackground() {
  if (g_unwinder_state.load(std::memory_order_relaxed) != kNotLoaded) return;
  int expected = kNotLoaded;
  // Loading from here on: a crash from now waits for the thread.
  if (!g_unwinder_state.compare_exchange_strong(expected, kLoading)) return;
  try {
    std::thread([] { LoadUnwinder(); }).detach();
  } catch (const std::system_error&) {
    g_unwinder_state.store(kUnavailable);
  }
}

void SetCrashVictim(int pidfd) { g_victim_pidfd.store(pidfd); }

bool CrashInProgress() { return g_crashing.load(); }

void ExitSentry(int code, const std::function<void()>& before_exit) {
  ReportSuppressedLogs();
  // Not spdlog::shutdown(): it resets the default logger, and a thread's next spdlog::debug would
  // read its level through a null pointer (a fault at address 0x40).
  if (spdlog::logger* log = spdlog::default_logger_raw()) log->flush();
  fflush(stdout);
  fflush(stderr);
  if (before_exit) before_exit();
  while (CrashInProgress()) pause();  // the crashing thread ends the process with its signal
  HandOffTeardown();                  // the parent sees the end now; memory and files go just after
  _exit(code);
}

void CrashForTest() {
  volatile int* p = nullptr;
  *p = 0xCAFE;
  __builtin_unreachable();
}

}  // namespace nvsentry::sentry
