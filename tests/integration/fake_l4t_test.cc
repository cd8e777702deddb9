// `nvsentry fake-l4t DIR` (sentry/fake_l4t/fake_l4t_fs.h): the simulated GM20B as the five L4T
// r32.7 nodes in DIR, driven over real ioctl(2) calls by an L4T client (tests/guests/l4t_client.c)
// and by this test itself. Needs root (FUSE, mounting).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "tests/integration/fake_jetson.h"

namespace nvsentry::testing {
namespace {

// The status line once nothing is open and nothing is held.
constexpr char kNothingHeld[] =
    "fake-l4t: sessions nvhost-ctrl=0 nvhost-ctrl-gpu=0 nvhost-as-gpu=0 nvhost-gpu=0 "
    "nvhost-tsg-gpu=0 nvmap=0 handle-fds=0; "
    "memory 0 regions 0 bytes; parked 0; gpu: 0 nvmap objects; budgets in use: open_fds 0/1024 "
    "nvmap_objects 0/65536 channels 0/64 address_spaces 0/16 pinned_bytes 0/";

using FakeL4t = FakeJetsonTest;

TEST_F(FakeL4t, AnL4tClientRunsAndItsObjectsAreFreedWhenItsFilesClose) {
  RunResult r = RunProgram({{L4T_CLIENT_BIN, dir_}, {}, 60000});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("semaphore 0x5EED0001"), std::string::npos) << r.out;
  // A channel in no TSG is refused as r32.7.4 refuses it (docs/host-abi.md L4T-TSG-2, -4).
  EXPECT_NE(r.out.find("ALLOC_GPFIFO_EX of a channel in no TSG: Invalid argument as expected"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("SUBMIT_GPFIFO of a channel in no TSG: Connection timed out as expected"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("l4t_client: ok"), std::string::npos) << r.out;
  EXPECT_TRUE(StatusShows(kNothingHeld)) << fake_->Finish(1000).out;
}

// nvmap CREATE/ALLOC and a channel through this test's own fds: counted while open, gone after.
TEST_F(FakeL4t, ClosingAnOpenFreesWhatItMade) {
  const int nvmap = open(Node("nvmap").c_str(), O_RDWR | O_CLOEXEC);
  const int ch = open(Node("nvhost-gpu").c_str(), O_RDWR | O_CLOEXEC);
  const int tsg = open(Node("nvhost-tsg-gpu").c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(nvmap, 0);
  ASSERT_GE(ch, 0);
  ASSERT_GE(tsg, 0);
  int channel_fd = ch;
  ASSERT_EQ(ioctl(tsg, 0x40045401u /* TSG BIND_CHANNEL */, &channel_fd), 0) << strerror(errno);
  uint32_t create[2] = {1 << 20, 0};  // nvmap_create_handle {size, handle}
  ASSERT_EQ(ioctl(nvmap, 0xC0084E00u, create), 0) << strerror(errno);
  uint32_t alloc[4] = {create[1], 1, 0, 4096};  // nvmap_alloc_handle
  ASSERT_EQ(ioctl(nvmap, 0x40104E03u, alloc), 0) << strerror(errno);
  EXPECT_TRUE(
      StatusShows("nvhost-gpu=1 nvhost-tsg-gpu=1 nvmap=1 handle-fds=0; memory 1 regions 1048576 "
                  "bytes; parked 0; gpu: 1 nvmap objects"));
  EXPECT_TRUE(StatusShows("channels 1/64"));
  close(tsg);  // the channel still holds its TSG, as r32.7.4's does
  close(ch);
  close(nvmap);
  EXPECT_TRUE(StatusShows(kNothingHeld)) << fake_->Finish(1000).out;
}

void NoOp(int) {}

// A wait without a timeout parks in the fake; a signal to the waiting thread interrupts it (FUSE
// INTERRUPT), and the fake answers EINTR.
TEST_F(FakeL4t, AParkedWaitIsInterruptedWithEintr) {
  struct sigaction sa {};
  sa.sa_handler = NoOp;  // no SA_RESTART: the ioctl returns EINTR
  struct sigaction old {};
  ASSERT_EQ(sigaction(SIGUSR2, &sa, &old), 0);
  const int ctrl = open(Node("nvhost-ctrl").c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(ctrl, 0);
  std::atomic<int> result{1}, err{0};
  std::atomic<pthread_t> waiter{};
  std::thread t([&] {
    waiter = pthread_self();
    uint32_t wait[3] = {1, 0x7FFFFFFF, static_cast<uint32_t>(-1)};  // id 1, far, forever
    result = ioctl(ctrl, 0x400C4803u, wait);                        // SYNCPT_WAIT
    err = errno;
  });
  ASSERT_TRUE(StatusShows("parked 1;"));  // the thread is inside the ioctl, parked
  pthread_kill(waiter.load(), SIGUSR2);
  t.join();
  EXPECT_EQ(result.load(), -1);
  EXPECT_EQ(err.load(), EINTR);
  close(ctrl);
  EXPECT_TRUE(StatusShows(kNothingHeld)) << fake_->Finish(1000).out;
  sigaction(SIGUSR2, &old, nullptr);
}

// The same client without the fd calls' program form: ALLOC_AS answers ENOTTY (FUSE cannot
// place an fd), everything else as before.
TEST_F(FakeL4t, OverFuseAloneAllocAsAnswersEnotty) {
  RunResult r = RunProgram({{L4T_CLIENT_BIN, dir_}, {}, 60000});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ALLOC_AS over FUSE alone: Inappropriate ioctl for device as expected"),
            std::string::npos)
      << r.out;
}

// `nvsentry fake-l4t DIR -- PROGRAM`: the calls that return fds return them (L4T-NODE-7):
// ALLOC_AS with 128 KiB, 64 KiB and the default (64 KiB: L4T-AS-1, CTRL-11) big pages, OPEN_TSG,
// OPEN_CHANNEL, and a channel set up on those fds alone; SUBMIT_GPFIFO with SYNC_FENCE's fence fd
// polls readable (L4T-CH-10); a TSG's EVENT_ID_CTRL fd polls readable once BLOCKING_SYNC is
// posted (L4T-TSG-14); all freed when the client ends.
TEST(FakeL4tProgram, TheCallsThatReturnFdsReturnThem) {
  if (geteuid() != 0) GTEST_SKIP() << "fake-l4t needs root (/dev/fuse, mounting)";
  RunResult r = RunUnderFake({L4T_CLIENT_BIN, "--fds", "{DIR}"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* line :
       {"ALLOC_AS(131072): fd with big pages of 131072",
        "ALLOC_AS(65536): fd with big pages of 65536", "ALLOC_AS(0): fd with big pages of 65536",
        "ALLOC_AS of 192 KiB pages: Invalid argument as expected",
        "fds: a channel of OPEN_CHANNEL in a TSG of OPEN_TSG",
        "SYNC_FENCE: fence fd polled readable",
        "EVENT_ID_CTRL of event 6: Invalid argument as expected",
        "EVENT_ID_CTRL twice: Invalid argument as expected",
        "EVENT_ID_CTRL: BLOCKING_SYNC's fd polled readable after a non-stall interrupt",
        "l4t_client: ok"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  EXPECT_NE(r.err.find(kFakeHoldsNothing), std::string::npos) << r.err;
}

// Under `-- PROGRAM` nvmap's handles are dma-buf fds as on r32.7.4 (L4T-MAP-1, -3, -7,
// L4T-NODE-8): close-on-exec fds that outlive their nvmap open, more of them from GET_FD and
// FROM_FD, FREE closing the fd (any fd), MAP_BUFFER_EX refusing a closed fd (EBADF) and an fd
// that is no dma-buf (EINVAL); every buffer freed once its fds are closed. The handle file and
// the event file are not listed.
TEST(FakeL4tProgram, NvmapHandlesAreFdsAndFreeClosesThem) {
  if (geteuid() != 0) GTEST_SKIP() << "fake-l4t needs root (/dev/fuse, mounting)";
  RunResult r = RunUnderFake({L4T_CLIENT_BIN, "--fds", "{DIR}"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* line :
       {"nvmap: the handle is an fd; GET_FD and FROM_FD name its buffer after FREE closed it",
        "MAP_BUFFER_EX of a closed fd: Bad file descriptor as expected",
        "MAP_BUFFER_EX of an nvmap open: Invalid argument as expected",
        "FROM_FD of an address space fd: Invalid argument as expected",
        "nvmap: dma-buf fds looked up in the fd table; FREE closes any fd", "l4t_client: ok"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  EXPECT_NE(r.err.find(kFakeHoldsNothing), std::string::npos) << r.err;
  RunResult ls = RunUnderFake({"ls", "-A", "{DIR}"});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_NE(ls.out.find("nvmap"), std::string::npos) << ls.out;
  EXPECT_EQ(ls.out.find("dmabuf"), std::string::npos) << ls.out;
  EXPECT_EQ(ls.out.find("event"), std::string::npos) << ls.out;
}

// PROGRAM's exit status is the fake's; one that cannot be found is 127.
TEST(FakeL4tProgram, ItExitsWithTheProgramsStatus) {
  if (geteuid() != 0) GTEST_SKIP() << "fake-l4t needs root (/dev/fuse, mounting)";
  EXPECT_EQ(RunUnderFake({"sh", "-c", "test -e {DIR}/nvhost-ctrl-gpu && exit 7"}).exit_code, 7);
  EXPECT_EQ(RunUnderFake({"/nonexistent/program"}).exit_code, 127);
}

TEST(FakeL4tRefusal, WithoutRootItSaysSoAndFails) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run the fake as another user";
  char tmpl[] = "/tmp/nvsentry-fake-l4t-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  RunResult r = RunProgram({{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                             NvsentryPath(), "fake-l4t", tmpl},
                            {},
                            20000});
  rmdir(tmpl);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("needs root"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nvsentry::testing
