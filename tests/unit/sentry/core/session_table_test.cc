// The session table's lifetime thread: it ends a pipe's session when the guest closes its last
// copy of the pipe, and starts with the first pipe it has to watch.
#include "sentry/core/session_table.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "abi/catalogue.h"
#include "absl/synchronization/barrier.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "hostshim/unique_fd.h"
#include "proxy/guest_config.h"
#include "proxy/session.h"
#include "tests/unit/tasks.h"

namespace nvsentry::sentry {
namespace {

using nvsentry::testing::Tasks;
using nvsentry::testing::TasksAdded;
using nvsentry::testing::TasksAddedBecome;
using nvsentry::testing::TasksAddedByRace;

class NoBackend : public hostshim::DeviceBackend {
 public:
  hostshim::Result Ioctl(hostshim::Call&) override {
    return hostshim::Result::Done(abi::NvError::kNotSupported);
  }
};

pid_t Tid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

class SessionTableTest : public ::testing::Test {
 protected:
  std::shared_ptr<proxy::Session> NewSession() {
    return std::make_shared<proxy::Session>(abi::Device(abi::DeviceId::kNvhostCtrl),
                                            std::make_unique<NoBackend>(), config_);
  }
  proxy::GuestConfig config_;
};

// A pipe's session is watched from Placed on: the thread starts there, and ends the session when
// the guest's copy closes. Device files' sessions end at their RELEASE and need no thread.
TEST_F(SessionTableTest, TheLifetimeThreadStartsWithTheFirstPlacedPipe) {
  const std::set<pid_t> before = Tasks();
  {
    SessionTable table;
    EXPECT_TRUE(TasksAdded(before).empty()) << "made: no thread";
    absl::StatusOr<uint64_t> file = table.AddFile(NewSession(), nullptr);
    ASSERT_TRUE(file.ok());
    table.EndFile(*file);
    EXPECT_TRUE(TasksAdded(before).empty()) << "a device file's session";

    absl::StatusOr<SessionTable::Pending> p = table.Create(NewSession());
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_TRUE(TasksAdded(before).empty()) << "not watched before it is placed";
    // What the guest would hold once placed.
    hostshim::UniqueFd guest_copy(dup(p->guest_end.get()));
    const uint64_t slot = p->slot;
    table.Placed(*p);
    EXPECT_EQ(TasksAdded(before).size(), 1u) << "placed: the lifetime thread";
    EXPECT_NE(table.Lookup(Tid(), guest_copy.get()), nullptr);

    // The guest closes its last copy: the lifetime thread ends the session.
    guest_copy.Reset();
    table.WaitUntilEnded(slot, absl::Seconds(10));
    EXPECT_EQ(table.size(), 0u);
  }
  EXPECT_EQ(TasksAddedBecome(before, 0), 0u) << "destroyed: joined";
}

// A guest that opens device paths on many threads at once places its first sessions at once:
// one lifetime thread all the same.
TEST_F(SessionTableTest, PipesPlacedAtOnceStartOneLifetimeThread) {
  constexpr int kPlacers = 8;
  const std::set<pid_t> before = Tasks();
  SessionTable table;
  std::vector<SessionTable::Pending> pending;
  std::vector<hostshim::UniqueFd> copies;
  for (int i = 0; i < kPlacers; ++i) {
    absl::StatusOr<SessionTable::Pending> p = table.Create(NewSession());
    ASSERT_TRUE(p.ok()) << p.status();
    copies.emplace_back(dup(p->guest_end.get()));
    pending.push_back(*std::move(p));
  }
  const std::set<pid_t> added =
      TasksAddedByRace(before, kPlacers, [&](int i) { table.Placed(pending[i]); });
  EXPECT_EQ(added.size(), 1u);
  copies.clear();  // every session's pipe closes
  for (const auto& p : pending) table.WaitUntilEnded(p.slot, absl::Seconds(10));
  EXPECT_EQ(table.size(), 0u);
}

}  // namespace
}  // namespace nvsentry::sentry
