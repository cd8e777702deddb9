// How `nvsentry run` ends (ExitSentry) while the sentry's threads still run.
#include "sentry/process/crash.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "gtest/gtest.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace nvsentry::sentry {
namespace {

// The receiver sees the listener hang up, and the device files' thread its filesystem end, only
// as the guest's namespaces go: often after the main thread began to exit. Their last line must
// not fault (it did: spdlog::shutdown() had reset the default logger, a fault at 0x40).
TEST(ExitSentryDeathTest, AThreadMayLogAfterTheExitBegan) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        auto log = spdlog::stderr_logger_mt("exit-test");
        log->set_level(spdlog::level::info);
        spdlog::set_default_logger(log);
        std::atomic<bool> go{false};
        std::thread late([&] {
          while (!go.load()) {
          }
          spdlog::debug("listener closed: {}", "Broken pipe");
          spdlog::info("the filesystem ended ({})", 0);
        });
        ExitSentry(7, [&] {
          go.store(true);
          late.join();
        });
      },
      ::testing::ExitedWithCode(7), "the filesystem ended \\(0\\)");
}

// A thread reporting a crash ends the process with its signal, backtrace complete, even when the
// main thread is exiting meanwhile. The report is held in its first write (to a full pipe, the
// log file's place) until 100 ms after it began: a main thread that does not wait exits first.
TEST(ExitSentryDeathTest, ACrashInProgressIsNotCutShort) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        int log[2];
        if (pipe(log) != 0) _exit(1);
        fcntl(log[1], F_SETFL, O_NONBLOCK);
        char fill[4096] = {};
        while (write(log[1], fill, sizeof fill) > 0) {
        }
        fcntl(log[1], F_SETFL, 0);
        InstallCrashHandler(log[1]);
        LoadCrashUnwinder();
        std::thread([fd = log[0]] {
          while (!CrashInProgress()) {
          }
          usleep(100'000);
          char buf[4096];
          while (read(fd, buf, sizeof buf) > 0) {
          }
        }).detach();
        std::thread([] {
          InstallCrashStackForThread();
          CrashForTest();
        }).detach();
        ExitSentry(7, [] {
          while (!CrashInProgress()) {
          }
        });
      },
      ::testing::KilledBySignal(SIGSEGV), "Backtrace:\n  #0 ");
}

}  // namespace
}  // namespace nvsentry::sentry
