// Errors reach the engine as runc's do: a line in --log (standard error without it), in
// --log-format's format. json: {"level":"error","msg":"...","time":"RFC 3339"} (containerd's shim
// and podman report the msg of the last such line); text: time="..." level=error msg="...".
#pragma once

#include <string_view>

#include "sentry/oci/oci_args.h"

namespace nvsentry::oci {

class OciLog {
 public:
  explicit OciLog(const OciCommand& command) : command_(command) {}
  void Error(std::string_view msg) const { Write("error", msg); }
  void Info(std::string_view msg) const { Write("info", msg); }
  void Debug(std::string_view msg) const {
    if (command_.debug) Write("debug", msg);
  }

 private:
  void Write(std::string_view level, std::string_view msg) const;
  const OciCommand& command_;
};

// One line of the log, without its newline (for the tests and Write).
std::string FormatLogLine(bool json, std::string_view level, std::string_view msg,
                          std::string_view time);

}  // namespace nvsentry::oci
