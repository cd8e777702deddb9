// Which trapped calls the receiving thread serves itself; codes typed in by hand (Switchbrew).
#include "sentry/core/fast_calls.h"

#include <gtest/gtest.h>
#include <seccomp.h>
#include <sys/syscall.h>

namespace nvsentry::sentry {
namespace {

seccomp_notif Call(int nr, uint64_t a1 = 0) {
  seccomp_notif req{};
  req.data.arch = seccomp_arch_native();
  req.data.nr = nr;
  req.data.args[1] = a1;
  return req;
}

TEST(FastCalls, PureCallsAndWaitsAreServedByTheReceiver) {
  SyscallTable syscalls;
  FastCalls fast(syscalls);
  EXPECT_TRUE(fast.IsFast(Call(SYS_ioctl, 0xC0080014)));  // SYNCPT_READ
  EXPECT_TRUE(fast.IsFast(Call(SYS_ioctl, 0xC008001A)));  // SYNCPT_READ_MAX
  EXPECT_TRUE(fast.IsFast(Call(SYS_ioctl, 0xC0100019)));  // SYNCPT_WAITEX: answered or parked
  EXPECT_TRUE(fast.IsFast(Call(SYS_ioctl, 0xC0B04705)));  // GET_CHARACTERISTICS
  // The high half of the register is not part of the code.
  EXPECT_TRUE(fast.IsFast(Call(SYS_ioctl, 0xFFFFFFFF00000000 | 0xC0080014)));
}

TEST(FastCalls, CallsThatChangeStateOrGrowWithTheirArgumentsGoToThePool) {
  SyscallTable syscalls;
  FastCalls fast(syscalls);
  EXPECT_FALSE(fast.IsFast(Call(SYS_ioctl, 0x40040015)));  // SYNCPT_INCR
  EXPECT_FALSE(fast.IsFast(Call(SYS_ioctl, 0xC0184808)));  // SUBMIT_GPFIFO, one entry
  EXPECT_FALSE(fast.IsFast(Call(SYS_ioctl, 0xC0304808)));  // SUBMIT_GPFIFO, four entries
  EXPECT_FALSE(fast.IsFast(Call(SYS_ioctl, 0xC0306E01)));  // nvdrv Ioctl: carries anything
  EXPECT_FALSE(fast.IsFast(Call(SYS_ioctl, 0xC0080099)));  // unknown code of magic 0
}

TEST(FastCalls, OpensAndUntouchedCallsAreServedByTheReceiver) {
  SyscallTable syscalls;
  FastCalls fast(syscalls);
  EXPECT_TRUE(fast.IsFast(Call(SYS_openat)));
  EXPECT_TRUE(fast.IsFast(Call(SYS_getpid)));
}

}  // namespace
}  // namespace nvsentry::sentry
