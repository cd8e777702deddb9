// Nothing lost silently: every file nvsentry writes for the user (--frames, --trace, --learn) is
// written, or nvsentry says it was not and exits non-zero; a second --frames run into the same
// folder numbers its frames on after the first's.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string Scratch(const std::string& tag) {
  const std::string dir =
      ::testing::TempDir() + "nvsentry_outputs_" + tag + "_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  return dir;
}

std::set<std::string> Names(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    out.insert(e.path().filename().string());
  return out;
}

// Before: the second run said "cannot create disp0-000001.png: File exists", exited 0 and left
// no new frame.
TEST(Outputs, ASecondFramesRunIntoTheSameFolderNumbersOn) {
  const std::string dir = Scratch("frames");
  const std::vector<std::string> options = {"--service=nvdrv:t", "--frames=" + dir};
  RunResult r = RunSandboxed(options, {DISPLAY_DEMO_BIN, "--flips", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::set<std::string> first = Names(dir);
  ASSERT_FALSE(first.empty());
  r = RunSandboxed(options, {DISPLAY_DEMO_BIN, "--flips", "3"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(Has(r.err, "--frames")) << r.err;
  const std::set<std::string> both = Names(dir);
  EXPECT_EQ(both.size(), 2 * first.size());
  // Every frame of the second run comes after the first run's last (names sort by number).
  for (const std::string& name : both)
    if (!first.contains(name)) EXPECT_GT(name, *first.rbegin()) << name;
  std::filesystem::remove_all(dir);
}

// A frame that cannot be written (a full filesystem: a 4 KiB tmpfs in a mount namespace of the
// test's own, smaller than one frame) is an error, said with the file and the reason (before: a
// log line, exit 0).
TEST(Outputs, AFrameThatCannotBeWrittenIsAnError) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to mount the small filesystem";
  const std::string dir = Scratch("full");
  std::filesystem::create_directory(dir);
  RunSpec spec;
  spec.argv = {"unshare", "-m", "sh", "-c",
               "mount -t tmpfs -o size=4k tmpfs " + dir + " && exec " + NvsentryPath() +
                   " run --service=nvdrv:t --frames=" + dir + " -- " + DISPLAY_DEMO_BIN};
  RunResult r = RunProgram(spec);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(Has(r.err, "--frames: cannot write disp0-000001.png: No space left on device"))
      << r.err;
  EXPECT_TRUE(Has(r.err, "--frames: not every frame kept could be written to " + dir)) << r.err;
  std::filesystem::remove_all(dir);
}

// Before: the records were dropped and nvsentry exited 0.
TEST(Outputs, ATraceThatCannotBeWrittenIsAnError) {
  RunResult r = RunSandboxed({"--trace=/dev/full"}, {GPU_DEMO_BIN});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(Has(r.out, "demo=ok")) << "the guest itself ran well: " << r.out;
  EXPECT_TRUE(Has(r.err, "--trace: cannot write /dev/full: No space left on device (")) << r.err;
  // The guest's own failure keeps its status.
  r = RunSandboxed({"--trace=/dev/full"},
                   {"sh", "-c", CtrlGuestPath() + std::string(" basic; exit 3")});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(Has(r.err, "--trace: cannot write /dev/full")) << r.err;
}

TEST(Outputs, ALearnFileThatCannotBeWrittenIsAnError) {
  RunResult r = RunSandboxed({"--learn=/dev/full"}, {GPU_DEMO_BIN});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(Has(r.err, "--learn: cannot write /dev/full: No space left on device")) << r.err;
}

// A learn file that is not a regular file is written through, never replaced: with --host-root the
// sentry keeps root's rights, and renamed a new file over a device node (before: the node was
// gone, a file in its place, exit 0).
TEST(Outputs, ALearnFileThatIsADeviceIsWrittenThroughNotReplaced) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to make a device node and for --host-root";
  const std::string dir = Scratch("learn");
  std::filesystem::create_directory(dir);
  const std::string full = dir + "/full";
  ASSERT_EQ(mknod(full.c_str(), S_IFCHR | 0644, makedev(1, 7)), 0);  // /dev/full's
  RunResult r = RunSandboxed({"--host-root", "--learn=" + full}, {GPU_DEMO_BIN});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(Has(r.err, "--learn: cannot write " + full + ": No space left on device")) << r.err;
  struct stat st;
  ASSERT_EQ(stat(full.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the node was replaced";
  EXPECT_EQ(Names(dir).size(), 1u) << "nothing else made beside it";
  std::filesystem::remove_all(dir);
}

std::string Contents(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A run whose guest never ran leaves --trace's and --learn's files as they were, and makes none
// that were not there for a command-line error (before: the trace file was emptied and the learn
// file held the learned policy of a program that never ran, both for a command-line error, exit 2,
// and for a sandbox that could not start, exit 125).
TEST(Outputs, TraceAndLearnFilesAreKeptWhenTheGuestNeverRan) {
  const std::string dir = Scratch("kept");
  std::filesystem::create_directory(dir);
  const std::string trace = dir + "/trace", learn = dir + "/learn", fresh = dir + "/fresh";
  std::ofstream(trace) << "precious\n";
  std::ofstream(learn) << "precious\n";
  const std::vector<std::string> outputs = {"--trace=" + trace, "--learn=" + learn};
  struct Case {
    std::vector<std::string> options;
    int exit_code;
  };
  for (const Case& c :
       {Case{{"--frames=/proc/nope"}, 2}, Case{{"--bind", dir + "/nonexistent", "/mnt"}, 125}}) {
    std::vector<std::string> options = outputs;
    options.insert(options.end(), c.options.begin(), c.options.end());
    RunResult r = RunSandboxed(options, {"/bin/true"});
    EXPECT_EQ(r.exit_code, c.exit_code) << c.options[0] << ": " << r.err;
    EXPECT_EQ(Contents(trace), "precious\n") << c.options[0];
    EXPECT_EQ(Contents(learn), "precious\n") << c.options[0];
    options = {"--trace=" + fresh + ".trace", "--learn=" + fresh + ".toml"};
    options.insert(options.end(), c.options.begin(), c.options.end());
    r = RunSandboxed(options, {"/bin/true"});
    EXPECT_EQ(r.exit_code, c.exit_code) << c.options[0] << ": " << r.err;
    if (c.exit_code == 2) {
      EXPECT_EQ(Names(dir), (std::set<std::string>{"learn", "trace"})) << c.options[0];
    } else {
      // Init's own failure comes after a root-started sentry dropped root's rights: a file made
      // for them may stay, but empty.
      for (const std::string& made : {fresh + ".trace", fresh + ".toml"})
        EXPECT_EQ(Contents(made), "") << made;
    }
    std::filesystem::remove(fresh + ".trace");
    std::filesystem::remove(fresh + ".toml");
  }
  // A guest that ran replaces both.
  RunResult r = RunSandboxed(outputs, {CtrlGuestPath(), "basic"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(Has(Contents(trace), "precious"));
  EXPECT_TRUE(Has(Contents(learn), "# Learned by nvsentry run --learn")) << Contents(learn);
  EXPECT_FALSE(Has(Contents(learn), "precious"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nvsentry::testing
