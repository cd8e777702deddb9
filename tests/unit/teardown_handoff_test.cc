// HandOffTeardown: the process's parent sees it end, and a clone that shares its memory and files
// ends by itself just after, releasing them.
#include "sentry/teardown_handoff.h"

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

TEST(HandOffTeardown, TheParentSeesTheExitAndTheCloneEndsByItself) {
  // The orphaned clone comes to this process, which can then wait for it.
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(p[0]);
    HandOffTeardown();
    _exit(5);
  }
  close(p[1]);
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
  EXPECT_EQ(read(p[0], &byte, 1), 0) << "the files are released once the clone is gone";
  close(p[0]);
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

// A job's SIGSTOP (a shell's kill -STOP %1, a test harness's killpg) that lands as nvsentry ends
// must not stop the clone: the parent has seen nvsentry end and continues nothing, and a stopped
// clone would keep nvsentry's memory and files (its standard output: no EOF for a reader) for
// good. The process below stands in for nvsentry: a group of its own, stopped and then ended with
// the clone made, as an exit racing the group's SIGSTOP is.
TEST(HandOffTeardown, TheJobsStopDoesNotHoldTheCloneAfterTheExit) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    setpgid(0, 0);
    HandOffTeardown();
    (void)!write(ready[1], "r", 1);
    for (;;) pause();
  }
  close(ready[1]);
  char byte;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
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
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

}  // namespace
}  // namespace nvsentry::sentry
