// The rate limit of guest-caused log lines (hostshim/rate_limited_log.h), on an explicit clock,
// and one NVS_LOG_LIMITED site end to end into a captured logger.
#include "hostshim/rate_limited_log.h"

#include <memory>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "spdlog/sinks/ostream_sink.h"

namespace nvsentry {
namespace {

constexpr int64_t kSec = 1'000'000'000;

TEST(LogRateLimit, BurstThenCountsWhatItDropsAndReportsItWithTheNextLine) {
  LogRateLimit limit(3, 10 * kSec);
  uint64_t suppressed = 99;
  for (int i = 0; i < 3; i++) {
    EXPECT_TRUE(limit.Admit(i, &suppressed)) << i;
    EXPECT_EQ(suppressed, 0u);
  }
  for (int i = 0; i < 1000; i++) EXPECT_FALSE(limit.Admit(5 * kSec, &suppressed));
  EXPECT_FALSE(limit.Admit(10 * kSec - 1, &suppressed)) << "still the first interval";
  // A new interval: the first line carries the count of the previous one.
  ASSERT_TRUE(limit.Admit(10 * kSec, &suppressed));
  EXPECT_EQ(suppressed, 1001u);
  ASSERT_TRUE(limit.Admit(10 * kSec + 1, &suppressed));
  EXPECT_EQ(suppressed, 0u) << "reported once";
  EXPECT_EQ(limit.TakeSuppressed(), 0u);
}

TEST(LogRateLimit, TakeSuppressedReportsWhatIsLeft) {
  LogRateLimit limit(1, kSec);
  uint64_t suppressed;
  ASSERT_TRUE(limit.Admit(0, &suppressed));
  EXPECT_FALSE(limit.Admit(1, &suppressed));
  EXPECT_FALSE(limit.Admit(2, &suppressed));
  EXPECT_EQ(limit.TakeSuppressed(), 2u);
  EXPECT_EQ(limit.TakeSuppressed(), 0u);
  ASSERT_TRUE(limit.Admit(kSec, &suppressed));
  EXPECT_EQ(suppressed, 0u) << "already taken";
}

TEST(LogRateLimit, OneSiteWritesItsBurstThenTheSuppressedCount) {
  std::ostringstream out;
  auto logger = std::make_shared<spdlog::logger>(
      "captured", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  logger->set_pattern("%v");
  logger->set_level(spdlog::level::info);
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(logger);
  for (int i = 0; i < 1000; i++) NVS_LOG_LIMITED(spdlog::level::warn, "line {}", i);
  NVS_LOG_LIMITED(spdlog::level::debug, "below the level: {}", 1);
  ReportSuppressedLogs();
  spdlog::set_default_logger(previous);
  const std::string text = out.str();
  EXPECT_NE(text.find("line 9\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("line 10\n"), std::string::npos) << text;
  EXPECT_NE(text.find("... suppressed 990 similar messages (base/rate_limited_log_test.cc:"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("below the level"), std::string::npos);
  // (Other sites of this binary may report their own counts here too.)
  size_t lines = 0;
  for (size_t at = text.find("line "); at != std::string::npos; at = text.find("line ", at + 1))
    ++lines;
  EXPECT_EQ(lines, LogRateLimit::kBurst);
}

// --log-burst: sites created after SetLogBurst use its burst; 0 lets every line through.
TEST(LogRateLimit, SetLogBurstAppliesToSitesCreatedAfterIt) {
  std::ostringstream out;
  auto logger = std::make_shared<spdlog::logger>(
      "captured", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  logger->set_pattern("%v");
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(logger);
  SetLogBurst(0);
  for (int i = 0; i < 50; i++) NVS_LOG_LIMITED(spdlog::level::warn, "unlimited {}", i);
  SetLogBurst(3);
  for (int i = 0; i < 50; i++) NVS_LOG_LIMITED(spdlog::level::warn, "three {}", i);
  SetLogBurst(LogRateLimit::kBurst);
  spdlog::set_default_logger(previous);
  const std::string text = out.str();
  EXPECT_NE(text.find("unlimited 49\n"), std::string::npos) << text;
  EXPECT_NE(text.find("three 2\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("three 3\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace nvsentry
