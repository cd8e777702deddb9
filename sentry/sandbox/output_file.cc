#include "sentry/sandbox/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace nvsentry::sentry {

absl::StatusOr<OutputFile> OpenOutputFile(absl::string_view option, const std::string& path) {
  constexpr int kFlags = O_WRONLY | O_CLOEXEC | O_NOCTTY;  // the guest never inherits it
  OutputFile out{nullptr, path, true};
  int fd = open(path.c_str(), kFlags | O_CREAT | O_EXCL, 0666);
  if (fd < 0 && errno == EEXIST) {
    // O_CREAT still: a dangling link's target is made, as fopen did. Not ours to remove then.
    out.made = false;
    fd = open(path.c_str(), kFlags | O_CREAT, 0666);
  }
  if (fd < 0)
    return absl::InvalidArgumentError(
        absl::StrCat(option, ": cannot open ", path, ": ", strerror(errno)));
  out.file = fdopen(fd, "w");  // "w" here truncates nothing
  if (out.file == nullptr) {
    const int err = errno;
    close(fd);
    AbandonOutputFile(out);
    return absl::InvalidArgumentError(
        absl::StrCat(option, ": cannot open ", path, ": ", strerror(err)));
  }
  return out;
}

void EmptyOutputFile(const OutputFile& out) {
  struct stat st;
  if (fstat(fileno(out.file), &st) != 0 || !S_ISREG(st.st_mode)) return;
  if (ftruncate(fileno(out.file), 0) != 0)
    spdlog::warn("cannot empty {}: {}; what was in it stays after what is written", out.path,
                 strerror(errno));
}

void AbandonOutputFile(const OutputFile& out) {
  if (out.made) unlink(out.path.c_str());
}

}  // namespace nvsentry::sentry
