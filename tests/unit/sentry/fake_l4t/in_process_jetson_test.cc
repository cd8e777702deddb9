// The in-process Jetson as the host backend's port: its fds stand for opens of the fake, calls on
// them reach it as the kernel would pass them, and an open goes when its last fd is closed.
#include "sentry/fake_l4t/in_process_jetson.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "abi/l4t/nvgpu_ctrl.h"
#include "abi/l4t/nvhost_ctrl.h"
#include "gtest/gtest.h"

namespace nvsentry::sentry {
namespace {

// The release thread acts on the last close: wait for it (bounded).
bool Eventually(const std::function<bool()>& f) {
  for (int i = 0; i < 2000 && !f(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return f();
}

TEST(InProcessJetson, AnOpenIsAnFdAndGoesWithItsLastCopy) {
  InProcessJetson j;
  EXPECT_EQ(j.Open("nvhost-nothing"), -ENOENT);
  const int fd = j.Open("nvhost-ctrl");
  ASSERT_GE(fd, 0);
  EXPECT_NE(j.SessionOf(fd), 0u);
  abi::l4t::nvhost_ctrl::SyncptRead r{0, 123};
  std::optional<int> err =
      j.Ioctl(fd, abi::l4t::nvhost_ctrl::kSyncptRead, reinterpret_cast<unsigned long>(&r));
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(*err, 0);
  EXPECT_EQ(r.value, 0u) << "syncpoint 0 reads 0";
  // A copy keeps the open; the last close releases it.
  const int copy = dup(fd);
  close(fd);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(j.opens(), 1u);
  EXPECT_NE(j.SessionOf(copy), 0u);
  close(copy);
  EXPECT_TRUE(Eventually([&] { return j.opens() == 0 && j.fake().HoldsNothing(); }))
      << j.fake().Status();
}

TEST(InProcessJetson, AnFdOfAnythingElseIsNotItsCall) {
  InProcessJetson j;
  const int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  uint64_t arg = 0;
  EXPECT_FALSE(
      j.Ioctl(fd, abi::l4t::nvhost_ctrl::kSyncptRead, reinterpret_cast<unsigned long>(&arg))
          .has_value());
  close(fd);
}

// A call that returns an fd on r32.7.4 returns one of the port's: ALLOC_AS's address space.
TEST(InProcessJetson, AllocAsReturnsAnOpenOfItsOwn) {
  InProcessJetson j;
  const int ctrl = j.Open("nvhost-ctrl-gpu");
  ASSERT_GE(ctrl, 0);
  abi::l4t::nvgpu_ctrl::AllocAs a{};
  a.big_page_size = 0x20000;
  a.as_fd = -1;
  std::optional<int> err =
      j.Ioctl(ctrl, abi::l4t::nvgpu_ctrl::kAllocAs, reinterpret_cast<unsigned long>(&a));
  ASSERT_TRUE(err.has_value());
  ASSERT_EQ(*err, 0);
  ASSERT_GE(a.as_fd, 0);
  EXPECT_NE(j.SessionOf(a.as_fd), 0u);
  EXPECT_NE(j.SessionOf(a.as_fd), j.SessionOf(ctrl));
  EXPECT_EQ(j.opens(), 2u);
  close(a.as_fd);
  close(ctrl);
  EXPECT_TRUE(Eventually([&] { return j.opens() == 0 && j.fake().HoldsNothing(); }))
      << j.fake().Status();
}

}  // namespace
}  // namespace nvsentry::sentry
