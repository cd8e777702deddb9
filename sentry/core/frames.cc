#include "sentry/core/frames.h"

#include <dirent.h>
#include <fcntl.h>
#include <png.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hostshim/rate_limited_log.h"
#include "spdlog/spdlog.h"

namespace nvsentry::sentry {
namespace {

bool ReadAll(int fd, void* buf, size_t n) {
  auto* p = static_cast<uint8_t*>(buf);
  while (n > 0) {
    const ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r, n -= static_cast<size_t>(r);
  }
  return true;
}

bool WriteAll(int fd, const void* buf, size_t n) {
  const auto* p = static_cast<const uint8_t*>(buf);
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w, n -= static_cast<size_t>(w);
  }
  return true;
}

// What a message may hold: a name of our own making and one PNG of the largest frame.
constexpr uint32_t kMaxName = 64;
constexpr uint64_t kMaxFile = uint64_t{16384} * 16384 * 4 + (1 << 20);

// The writer process: [u32 name length][name][u64 size][bytes], until end of file. Each file is
// made new in `dir` (O_EXCL, no symlink followed); one that cannot be made or written whole is
// said on stderr (and a partial one removed), and the writer's exit status is then 1.
[[noreturn]] void WriterLoop(int sock, int dir) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  std::vector<uint8_t> data;
  bool failed = false;
  for (;;) {
    uint32_t name_len = 0;
    uint64_t size = 0;
    char name[kMaxName + 1] = {};
    if (!ReadAll(sock, &name_len, sizeof name_len) || name_len == 0 || name_len > kMaxName ||
        !ReadAll(sock, name, name_len) || !ReadAll(sock, &size, sizeof size) || size > kMaxFile)
      _exit(failed ? 1 : 0);
    data.resize(size);
    if (!ReadAll(sock, data.data(), size)) _exit(1);
    if (strchr(name, '/') != nullptr) _exit(1);  // never sent: the names are the sentry's
    const int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
      fprintf(stderr, "nvsentry: --frames: cannot create %s: %s\n", name, strerror(errno));
      failed = true;
      continue;
    }
    const bool written = WriteAll(fd, data.data(), data.size());
    const int err = errno;
    if (close(fd) != 0 || !written) {
      fprintf(stderr, "nvsentry: --frames: cannot write %s: %s\n", name,
              strerror(written ? errno : err));
      unlinkat(dir, name, 0);  // not half a frame
      failed = true;
    }
  }
}

// The highest frame number among the names in `dir_fd` (0: none).
uint64_t HighestFrameNumber(int dir_fd) {
  const int fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  DIR* d = fd >= 0 ? fdopendir(fd) : nullptr;
  if (d == nullptr) {
    if (fd >= 0) close(fd);
    return 0;
  }
  uint64_t highest = 0;
  while (const dirent* e = readdir(d)) highest = std::max(highest, FrameNumberOf(e->d_name));
  closedir(d);
  return highest;
}

}  // namespace

uint64_t FrameNumberOf(std::string_view name) {
  if (!name.starts_with("disp") || !name.ends_with(".png")) return 0;
  name.remove_suffix(4);
  const size_t dash = name.rfind('-');
  if (dash == std::string_view::npos || dash + 1 == name.size() || name.size() - dash > 19)
    return 0;
  uint64_t n = 0;
  for (char c : name.substr(dash + 1)) {
    if (c < '0' || c > '9') return 0;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

namespace {

// DIR is wrong: the command line's error, with errno's reason.
absl::Status DirError(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", strerror(errno)));
}

}  // namespace

absl::StatusOr<FrameFileWriter> FrameFileWriter::Start(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return DirError("--frames: cannot make " + dir);
  hostshim::UniqueFd dir_fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd) return DirError("--frames: cannot open " + dir);
  if (faccessat(dir_fd.get(), ".", W_OK, AT_EACCESS) != 0)
    return DirError("--frames: cannot write in " + dir);
  const uint64_t numbered_after = HighestFrameNumber(dir_fd.get());
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return absl::ErrnoToStatus(errno, "--frames: socketpair");
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(sv[0]);
    close(sv[1]);
    return absl::ErrnoToStatus(err, "--frames: fork");
  }
  if (pid == 0) {
    // Nothing of the sentry's but the socket and the directory (not its FUSE connection, its
    // listener or the guest's mounts), and standard error for what cannot be written.
    // (Through numbers above both, so that neither dup2 closes the other's source.)
    const int sock = fcntl(sv[1], F_DUPFD, 100), dir = fcntl(dir_fd.get(), F_DUPFD, 100);
    if (sock < 0 || dir < 0 || dup2(sock, 3) < 0 || dup2(dir, 4) < 0) _exit(1);
    close_range(5, ~0U, 0);
    WriterLoop(3, 4);
  }
  close(sv[1]);
  return FrameFileWriter(hostshim::UniqueFd(sv[0]), pid, numbered_after);
}

FrameFileWriter::~FrameFileWriter() { Close(); }

bool FrameFileWriter::Close() {
  if (pid_ <= 0) return ok_;
  socket_.Reset();  // the writer ends at end of file, after the files it has
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  ok_ = ok_ && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  pid_ = -1;
  return ok_;
}

bool FrameFileWriter::Write(const std::string& name, const std::vector<uint8_t>& bytes) {
  const uint32_t name_len = static_cast<uint32_t>(name.size());
  const uint64_t size = bytes.size();
  const bool sent = socket_ && name_len > 0 && name_len <= kMaxName && size <= kMaxFile &&
                    WriteAll(socket_.get(), &name_len, sizeof name_len) &&
                    WriteAll(socket_.get(), name.data(), name_len) &&
                    WriteAll(socket_.get(), &size, sizeof size) &&
                    WriteAll(socket_.get(), bytes.data(), bytes.size());
  ok_ = ok_ && sent;
  return sent;
}

absl::StatusOr<std::vector<uint8_t>> EncodePng(const std::vector<uint8_t>& rgba, uint32_t width,
                                               uint32_t height) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = width;
  image.height = height;
  image.format = PNG_FORMAT_RGBA;
  png_alloc_size_t size = 0;
  // libpng's simplified API: one call for the size, one to write.
  if (!png_image_write_to_memory(&image, nullptr, &size, 0, rgba.data(), 0, nullptr))
    return absl::InternalError(absl::StrCat("PNG: ", image.message));
  std::vector<uint8_t> out(size);
  if (!png_image_write_to_memory(&image, out.data(), &size, 0, rgba.data(), 0, nullptr))
    return absl::InternalError(absl::StrCat("PNG: ", image.message));
  out.resize(size);
  return out;
}

FrameRecorder::FrameRecorder(FrameFileWriter writer, uint64_t max_files, uint64_t max_bytes)
    : writer_(std::move(writer)), max_files_(max_files), max_bytes_(max_bytes) {}

bool FrameRecorder::Wanted() {
  absl::MutexLock lock(&mu_);
  const bool full =
      counts_.written + counts_.failed + queue_.size() + (busy_ ? 1 : 0) >= max_files_ ||
      counts_.bytes >= max_bytes_;
  if (!stop_ && queue_.size() < kQueued && !full) return true;
  ++counts_.presented;
  ++counts_.dropped;
  if (full)
    NVS_LOG_LIMITED(spdlog::level::warn,
                    "--frames: the limit is reached ({} files, {} bytes): no more frames are "
                    "written",
                    max_files_, max_bytes_);
  return false;
}

void FrameRecorder::Start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
}

FrameRecorder::~FrameRecorder() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void FrameRecorder::Presented(hostshim::sim::Frame frame) {
  absl::MutexLock lock(&mu_);
  if (stop_) return;
  ++counts_.presented;
  if (queue_.size() >= kQueued) {
    ++counts_.dropped;
    NVS_LOG_LIMITED(spdlog::level::warn,
                    "--frames: frame {} of display {} dropped (the writer "
                    "is behind)",
                    frame.sequence, frame.display);
    return;
  }
  queue_.push_back(std::move(frame));
}

void FrameRecorder::Flush() {
  if (!thread_.joinable()) return;
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return queue_.empty() && !busy_; };
  mu_.Await(absl::Condition(&idle));
}

bool FrameRecorder::Finish() {
  Flush();
  absl::MutexLock lock(&mu_);
  stop_ = true;  // Presented and Loop leave the writer alone from now on
  queue_.clear();
  const bool written = writer_.Close();
  return written && counts_.failed == 0;
}

FrameRecorder::Counts FrameRecorder::counts() const {
  absl::MutexLock lock(&mu_);
  return counts_;
}

void FrameRecorder::Loop() {
  for (;;) {
    hostshim::sim::Frame frame;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty() || stop_; };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;
      frame = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    bool ok = false;
    absl::StatusOr<std::vector<uint8_t>> rgba = hostshim::sim::ToRgba(frame);
    absl::StatusOr<std::vector<uint8_t>> png =
        rgba.ok() ? EncodePng(*rgba, frame.width, frame.height) : rgba.status();
    if (png.ok()) {
      // Numbered on after what DIR held: nothing there is replaced, nothing refused.
      const uint64_t number = writer_.numbered_after() + frame.sequence;
      const std::string name =
          frame.window == 0
              ? absl::StrFormat("disp%d-%06d.png", frame.display, number)
              : absl::StrFormat("disp%d-w%d-%06d.png", frame.display, frame.window, number);
      ok = writer_.Write(name, *png);
      absl::MutexLock lock(&mu_);
      counts_.bytes += png->size();
    } else {
      NVS_LOG_LIMITED(spdlog::level::warn, "--frames: frame {}: {}", frame.sequence,
                      std::string(png.status().message()));
    }
    absl::MutexLock lock(&mu_);
    busy_ = false;
    ++(ok ? counts_.written : counts_.failed);
  }
}

}  // namespace nvsentry::sentry
