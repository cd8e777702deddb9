#include "sentry/oci/oci_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <ctime>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace nvsentry::oci {

std::string FormatLogLine(bool json, std::string_view level, std::string_view msg,
                          std::string_view time) {
  if (json) {
    // nlohmann's objects keep their keys sorted: level, msg, time, as logrus writes them.
    const nlohmann::json line{{"level", level}, {"msg", msg}, {"time", time}};
    return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return absl::StrCat("time=\"", std::string(time), "\" level=", std::string(level), " msg=\"",
                      absl::Utf8SafeCEscape(std::string(msg)), "\"");
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

}  // namespace nvsentry::oci
