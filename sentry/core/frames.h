// `nvsentry run --frames=DIR [--frames-every=N]`: the frames the simulated display presents (every
// Nth of each display: hostshim/sim/display/frame_capture.h), as PNGs in DIR
// (disp<display>[-w<window>]-<number>.png, the number the frame's vblank after the highest number
// DIR already holds: a second run into the same DIR numbers on, and replaces nothing).
//
// The sentry holds no right to write DIR once the guest runs (it drops its capabilities and takes
// the guest's filesystem ids), so the files are written by a small process forked before that,
// with nvsentry's own identity, which does nothing but create new files in DIR (never following
// or replacing anything already there) from what the sentry sends it. A file it cannot make or
// write is an error: nvsentry's exit status says so (Finish). Frames are converted and
// compressed on a thread of the recorder; a frame that comes while too many wait is dropped and
// counted, never waited for, so the display's pace is the guest's, not the disk's.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/sim/display/frame.h"
#include "hostshim/unique_fd.h"

namespace nvsentry::sentry {

// The writing process. Start it before the sentry drops its privileges.
class FrameFileWriter {
 public:
  // Opens DIR (made if missing, one level), finds the highest frame number it holds and forks
  // the writer. An error names DIR; InvalidArgument when DIR is wrong (the command line's).
  static absl::StatusOr<FrameFileWriter> Start(const std::string& dir);
  FrameFileWriter(FrameFileWriter&& o) noexcept
      : socket_(std::move(o.socket_)),
        pid_(std::exchange(o.pid_, -1)),
        numbered_after_(o.numbered_after_),
        ok_(o.ok_) {}
  FrameFileWriter& operator=(FrameFileWriter&&) = delete;
  ~FrameFileWriter();
  // The highest frame number of DIR's files when it started (0: none): this run's numbers come
  // after it.
  uint64_t numbered_after() const { return numbered_after_; }
  // Sends one file; false once the writer is gone.
  bool Write(const std::string& name, const std::vector<uint8_t>& bytes);
  // Ends the writer after the files sent so far, and waits for it. True when every file sent
  // was made and written whole (the writer said why not on stderr).
  bool Close();

 private:
  FrameFileWriter(hostshim::UniqueFd socket, pid_t pid, uint64_t numbered_after)
      : socket_(std::move(socket)), pid_(pid), numbered_after_(numbered_after) {}
  hostshim::UniqueFd socket_;
  pid_t pid_ = -1;
  uint64_t numbered_after_ = 0;
  bool ok_ = true;  // every file sent so far reached the writer; then, the writer's exit status
};

// The frame number of a file name this recorder makes ("disp0-000012.png", "disp1-w2-000003.png":
// 12, 3), or 0 for any other name.
uint64_t FrameNumberOf(std::string_view name);

// The PNG encoding of width x height RGBA pixels; an error if libpng refuses.
absl::StatusOr<std::vector<uint8_t>> EncodePng(const std::vector<uint8_t>& rgba, uint32_t width,
                                               uint32_t height);

class FrameRecorder {
 public:
  // At most `max_files` files and `max_bytes` bytes of PNG are written (then a log line, and no
  // more): a guest flipping large noisy surfaces must not fill the disk DIR is on.
  FrameRecorder(FrameFileWriter writer, uint64_t max_files, uint64_t max_bytes);
  ~FrameRecorder();
  // Starts its thread: only once the sentry has dropped its privileges (a thread keeps the
  // credentials it was made with).
  void Start();
  // Whether a frame presented now would be kept (room in the queue, the limits not reached);
  // asked before the frame's memory is read, which it spares when not. Counts a refusal as
  // dropped.
  bool Wanted();
  // A presented frame, from any thread (which frames come is the GPU's choice: --frames-every
  // is applied before a frame's memory is read, hostshim/sim/display/frame_capture.h).
  void Presented(hostshim::sim::Frame frame);
  // Waits until every kept frame is handed to the writer (or dropped); for tests.
  void Flush();
  // At exit: Flush, then waits for the writer process to have written every file (it would die
  // with nvsentry otherwise). No frame is recorded afterwards. False when a frame kept could not
  // be made into a file (encoding, or the writer could not make or write it).
  bool Finish();
  struct Counts {
    uint64_t presented = 0, written = 0, dropped = 0, failed = 0;
    uint64_t bytes = 0;  // of PNG handed to the writer
  };
  Counts counts() const;

 private:
  void Loop();
  static constexpr size_t kQueued = 4;
  FrameFileWriter writer_;
  const uint64_t max_files_, max_bytes_;
  mutable absl::Mutex mu_;
  std::deque<hostshim::sim::Frame> queue_ ABSL_GUARDED_BY(mu_);
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  Counts counts_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace nvsentry::sentry
