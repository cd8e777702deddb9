// Every test program's own temporary directory, so that the tests leave nothing in /tmp, also
// those that do not remove what they make. ctest runs each test in a process of its own: before
// main, that process makes a directory under $TMPDIR (else /tmp) and names it in TMPDIR and
// TEST_TMPDIR (gtest's ::testing::TempDir()) for itself and everything it starts, nvsentry and
// its guests included; when it exits, it removes the directory with whatever is in it. A program
// started with TEST_TMPDIR already set (a death test's re-run of the binary) uses that one and
// leaves it to the process that made it. Linked into every gtest binary (tests/CMakeLists.txt).
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace {

class OwnTmpDir {
 public:
  OwnTmpDir() {
    if (const char* given = getenv("TEST_TMPDIR"); given != nullptr && given[0] != '\0') return;
    const char* base = getenv("TMPDIR");
    std::string dir =
        std::string(base != nullptr && base[0] != '\0' ? base : "/tmp") + "/nvsentry-test-XXXXXX";
    if (mkdtemp(dir.data()) == nullptr) return;  // the tests then use the shared directory
    // As /tmp is: the guest of a root-started nvsentry runs as nobody, and so do the sentry's
    // file accesses (docs/security.md), and they write here too.
    if (chmod(dir.c_str(), 01777) != 0) {
      rmdir(dir.c_str());
      return;
    }
    dir_ = dir;
    owner_ = getpid();
    setenv("TMPDIR", dir_.c_str(), 1);
    setenv("TEST_TMPDIR", (dir_ + "/").c_str(), 1);
  }

  ~OwnTmpDir() {
    // Not in a forked child that exits through exit(): the directory is its parent's.
    if (dir_.empty() || getpid() != owner_) return;
    // Depth first, links not followed, never into another filesystem mounted below (a mount
    // point stays, and so does the directory).
    auto remove_one = [](const char* path, const struct stat*, int, FTW*) {
      remove(path);
      return 0;
    };
    nftw(dir_.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
  }

 private:
  std::string dir_;
  pid_t owner_ = -1;
};

const OwnTmpDir own_tmp_dir;

}  // namespace
