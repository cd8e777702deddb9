#include "sentry/oci/oci_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <ctime>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace nvsentry::oci {
namespace {

// A text log's value as logrus quotes it (Go's strconv.Quote): a double quote, a backslash and
// control characters escaped; a single quote and UTF-8 as they are.
std::string QuoteAsLogrus(std::string_view msg) {
  std::string out = "\"";
  for (const char c : msg) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += absl::StrFormat("\\x%02x", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string FormatLogLine(bool json, std::string_view level, std::string_view msg,
                          std::string_view time) {
  if (json) {
    // nlohmann's objects keep their keys sorted: level, msg, time, as logrus writes them.
    const nlohmann::json line{{"level", level}, {"msg", msg}, {"time", time}};
    return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return absl::StrCat("time=\"", std::string(time), "\" level=", std::string(level),
                      " msg=", QuoteAsLogrus(msg));
}

void OciLog::Write(std::string_view level, std::string_view msg) const {
  const std::string time =
      absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", absl::Now(), absl::UTCTimeZone());
  const std::string line = FormatLogLine(command_.log_json, level, msg, time) + "\n";
  int fd = 2;
  if (!command_.log_file.empty())
    fd = open(command_.log_file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) fd = 2;
  if (write(fd, line.data(), line.size()) < 0) {
    // Nowhere else to say it.
  }
  if (fd != 2) close(fd);
}

std::shared_ptr<EngineLogSink> EngineLogSink::Open(const std::string& file, bool json) {
  const int fd = open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return nullptr;
  return std::shared_ptr<EngineLogSink>(new EngineLogSink(fd, json));
}

EngineLogSink::~EngineLogSink() { close(fd_); }

void EngineLogSink::sink_it_(const spdlog::details::log_msg& msg) {
  // logrus's level names (spdlog's, but "warning" and "fatal" for critical).
  const spdlog::string_view_t name = spdlog::level::to_string_view(msg.level);
  const std::string_view level = msg.level == spdlog::level::critical
                                     ? std::string_view("fatal")
                                     : std::string_view(name.data(), name.size());
  const std::string time =
      absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", absl::FromChrono(msg.time), absl::UTCTimeZone());
  const std::string line =
      FormatLogLine(json_, level, "sentry: " + std::string(msg.payload.data(), msg.payload.size()),
                    time) +
      "\n";
  if (write(fd_, line.data(), line.size()) < 0) {
    // Dropped: the sentry's own log (sentry.log) still has it.
  }
}

}  // namespace nvsentry::oci
