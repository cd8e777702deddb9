// HandOffTeardown: the process's parent sees it end, and a clone that shares its memory and files
// ends by itself just after, releasing them.
#include "sentry/process/teardown_handoff.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace nvsentry::sentry {
namespace {

// The orphaned clone comes to this process, a subreaper meanwhile, which can then wait for it.
class HandOffTeardownTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0); }
  void TearDown() override { prctl(PR_SET_CHILD_SUBREAPER, 0); }

  // Forks a child that runs `body` (which must not return) with the writing end of a pipe whose
  // reading end is returned in *from_child.
  static pid_t StartChild(void (*body)(int to_parent), int* from_child) {
    int p[2];
    if (pipe(p) != 0) return -1;
    const pid_t child = fork();
    if (child == 0) {
      close(p[0]);
      body(p[1]);
    }
    close(p[1]);
    *from_child = p[0];
    return child;
  }
};

TEST_F(HandOffTeardownTest, TheParentSeesTheExitAndTheCloneEndsByItself) {
  int from_child = -1;
  const pid_t child = StartChild(
      [](int) {
        HandOffTeardown();
        _exit(5);
      },
      &from_child);
  ASSERT_GE(child, 0);
  int st = 0;
  ASSERT_EQ(waitpid(child, &st, 0), child);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 5) << st;
  // The clone: it held the child's files (the pipe's writing end) and ends once the child is
  // gone. (A clone that never ended would hang here, until ctest's timeout.)
  const pid_t clone = waitpid(-1, &st, 0);
  EXPECT_GT(clone, 0) << "no clone took the teardown over";
  EXPECT_NE(clone, child);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
  char byte;
  EXPECT_EQ(read(from_child, &byte, 1), 0) << "the files are released once the clone is gone";
  close(from_child);
}

// A job's SIGSTOP (a shell's kill -STOP %1, a test harness's killpg) that lands as nvsentry ends
// must not stop the clone: the parent has seen nvsentry end and continues nothing, and a stopped
// clone would keep nvsentry's memory and files (its standard output: no EOF for a reader) for
// good. The process below stands in for nvsentry: a group of its own, stopped and then ended with
// the clone made, as an exit racing the group's SIGSTOP is.
TEST_F(HandOffTeardownTest, TheJobsStopDoesNotHoldTheCloneAfterTheExit) {
  int ready = -1;
  const pid_t child = StartChild(
      [](int to_parent) {
        setpgid(0, 0);
        HandOffTeardown();
        (void)!write(to_parent, "r", 1);
        for (;;) pause();
      },
      &ready);
  ASSERT_GE(child, 0);
  char byte;
  ASSERT_EQ(read(ready, &byte, 1), 1);
  close(ready);
  const std::string id = std::to_string(child);
  pid_t clone = 0;  // the child's only child
  std::ifstream("/proc/" + id + "/task/" + id + "/children") >> clone;
  if (clone <= 0) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    FAIL() << "no clone";
  }
  ASSERT_EQ(killpg(child, SIGSTOP), 0);
  int st = 0;
  ASSERT_EQ(waitpid(child, &st, WUNTRACED), child);
  ASSERT_TRUE(WIFSTOPPED(st)) << st;
  kill(child, SIGKILL);
  ASSERT_EQ(waitpid(child, &st, 0), child);
  bool ended = false, stopped = false;
  for (int i = 0; i < 200 && !ended; ++i) {
    const pid_t p = waitpid(clone, &st, WNOHANG | WUNTRACED);
    if (p == clone && WIFSTOPPED(st)) stopped = true;
    if (p == clone && (WIFEXITED(st) || WIFSIGNALED(st))) ended = true;
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!ended) {
    kill(clone, SIGKILL);
    waitpid(clone, nullptr, 0);
  }
  EXPECT_TRUE(ended) << (stopped ? "the clone was stopped by its parent's group's SIGSTOP"
                                 : "the clone did not end");
}

}  // namespace
}  // namespace nvsentry::sentry
