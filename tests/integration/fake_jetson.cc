#include "tests/integration/fake_jetson.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

namespace nvsentry::testing {

void FakeJetsonTest::SetUp() {
  if (geteuid() != 0) GTEST_SKIP() << "fake-l4t needs root (/dev/fuse, mounting)";
  char tmpl[] = "/tmp/nvsentry-fake-l4t-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  dir_ = tmpl;
  fake_ = std::make_unique<Child>(RunSpec{{NvsentryPath(), "fake-l4t", dir_}, {}, 120000});
  ASSERT_TRUE(fake_->WaitForOutput("fake-l4t: ready " + dir_, 20000)) << fake_->Finish(1000).err;
}

void FakeJetsonTest::TearDown() {
  if (fake_ == nullptr) return;
  kill(fake_->pid(), SIGTERM);
  RunResult r = fake_->Finish(20000);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("fake-l4t: stopped"), std::string::npos) << r.out;
  struct stat st {
  }, parent{};
  ASSERT_EQ(stat(dir_.c_str(), &st), 0);
  ASSERT_EQ(stat("/tmp", &parent), 0);
  EXPECT_EQ(st.st_dev, parent.st_dev) << "DIR is still mounted";
  rmdir(dir_.c_str());
}

RunResult RunUnderFake(const std::vector<std::string>& program, int timeout_ms,
                       const std::vector<std::string>& extra_env) {
  char tmpl[] = "/tmp/nvsentry-fake-l4t-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return {};
  const std::string dir = tmpl;
  std::vector<std::string> argv = {NvsentryPath(), "fake-l4t", dir, "--"};
  for (std::string a : program) {
    for (size_t at; (at = a.find("{DIR}")) != std::string::npos;) a.replace(at, 5, dir);
    argv.push_back(std::move(a));
  }
  RunResult r = RunProgram({argv, extra_env, timeout_ms});
  struct stat st {
  }, parent{};
  EXPECT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(stat("/tmp", &parent), 0);
  EXPECT_EQ(st.st_dev, parent.st_dev) << "DIR is still mounted";
  rmdir(dir.c_str());
  return r;
}

bool FakeJetsonTest::StatusShows(const std::string& text, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int wait_ms = 20;
  while (std::chrono::steady_clock::now() < deadline) {
    kill(fake_->pid(), SIGUSR1);
    if (fake_->WaitForOutput(text, wait_ms)) return true;
    wait_ms = std::min(wait_ms * 2, 1000);
  }
  return false;
}

}  // namespace nvsentry::testing
