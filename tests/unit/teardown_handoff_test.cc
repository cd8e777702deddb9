// HandOffTeardown: the process's parent sees it end, and a clone that shares its memory and files
// ends by itself just after, releasing them.
#include "sentry/teardown_handoff.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

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

}  // namespace
}  // namespace nvsentry::sentry
