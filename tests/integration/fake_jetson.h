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

}  // namespace nvsentry::testing
