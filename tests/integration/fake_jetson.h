// A simulated Jetson for a test: `nvsentry fake-l4t DIR` on a fresh directory, started before
// the test and stopped (and checked to stop cleanly, DIR unmounted) after it. Needs root.
#pragma once

#include <string>

#include "gtest/gtest.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {

class FakeJetsonTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  std::string Node(const char* name) const { return dir_ + "/" + name; }
  // Asks the fake for its status (SIGUSR1) until `text` shows in its output: closes reach it
  // after they return (the kernel sends FUSE releases asynchronously).
  bool StatusShows(const std::string& text, int timeout_ms = 20000);

  std::string dir_;
  std::unique_ptr<Child> fake_;
};

// `nvsentry fake-l4t DIR -- PROGRAM...` on a fresh directory: `program` with every "{DIR}" in it
// replaced by DIR, `extra_env` in its environment. The fake's status line after PROGRAM (on its
// standard error) is in `err`; DIR is checked to be unmounted afterwards, and removed. Needs root
// (the caller skips otherwise).
RunResult RunUnderFake(const std::vector<std::string>& program, int timeout_ms = 120000,
                       const std::vector<std::string>& extra_env = {});

// The fake's status line once nothing is open and nothing is held (up to the pinned bytes' limit).
inline constexpr char kFakeHoldsNothing[] =
    "fake-l4t: sessions nvhost-ctrl=0 nvhost-ctrl-gpu=0 nvhost-as-gpu=0 nvhost-gpu=0 "
    "nvhost-tsg-gpu=0 nvmap=0 handle-fds=0; memory 0 regions 0 bytes; parked 0; gpu: 0 nvmap "
    "objects";

}  // namespace nvsentry::testing
