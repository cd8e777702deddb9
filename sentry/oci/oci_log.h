// Errors reach the engine as runc's do: a line in --log (standard error without it), in
// --log-format's format. json: {"level":"error","msg":"...","time":"RFC 3339"} (containerd's shim
// and podman report the msg of the last such line); text: time="..." level=error msg="...".
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "sentry/oci/oci_args.h"
#include "spdlog/sinks/base_sink.h"

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

// The container's sentry's log lines into the engine's log (the --log of the create that started
// it, in its --log-format), as runc's own lines go there: {"level":"info","msg":"sentry: ..."}.
// The file is opened for appending (the engine keeps it: containerd's shim reads the last error
// line from it, podman its oci-log); a line that cannot be written is dropped.
class EngineLogSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  // nullptr when `file` cannot be opened.
  static std::shared_ptr<EngineLogSink> Open(const std::string& file, bool json);
  ~EngineLogSink() override;

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override {}

 private:
  EngineLogSink(int fd, bool json) : fd_(fd), json_(json) {}
  const int fd_;
  const bool json_;
};

}  // namespace nvsentry::oci
