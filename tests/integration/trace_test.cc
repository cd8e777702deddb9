// `nvsentry run --trace`: a small guest's GPU traffic, decoded, as the user reads it (text) and as
// tools read it (JSON lines). The guest (nvdrv_guest trace) makes a fixed set of calls; what each
// line must say is typed here from those calls and Switchbrew's layouts.
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string l;
  while (std::getline(ss, l))
    if (!l.empty()) out.push_back(l);
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The index of the first line containing every one of `parts`, or -1.
int Find(const std::vector<std::string>& lines, std::initializer_list<std::string> parts) {
  for (size_t i = 0; i < lines.size(); ++i) {
    bool all = true;
    for (const std::string& p : parts) all = all && lines[i].find(p) != std::string::npos;
    if (all) return static_cast<int>(i);
  }
  return -1;
}

std::string TempPath(const char* tag) {
  return ::testing::TempDir() + "nvsentry_trace_" + tag + "_" + std::to_string(getpid());
}

TEST(Trace, TextIsDecodedFieldByField) {
  const std::string file = TempPath("text");
  RunResult r = RunSandboxed({"--trace=" + file}, {NVDRV_GUEST_BIN, "trace"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  ASSERT_EQ(kv["value"], "1");
  const std::string text = ReadFile(file);
  unlink(file.c_str());
  const auto lines = Lines(text);
  for (const std::string& l : lines) EXPECT_TRUE(l.starts_with("[pid ")) << l;

  const int open_ctrl = Find(lines, {"open(\"/dev/nvhost-ctrl\") = "});
  const int incr = Find(lines, {"NVHOST_IOCTL_CTRL_SYNCPT_INCR", "{id=7}", ") = 0"});
  const int read =
      Find(lines, {"NVHOST_IOCTL_CTRL_SYNCPT_READ", "{id=7}", ") = 0", "-> {value=1}"});
  const int bad =
      Find(lines, {"NVHOST_IOCTL_CTRL_SYNCPT_READ", "{id=999}", "= -1 EINVAL", "BadParameter"});
  ASSERT_GE(open_ctrl, 0) << text;
  ASSERT_GT(incr, open_ctrl);
  ASSERT_GT(read, incr);
  ASSERT_GT(bad, read);
  EXPECT_EQ(lines[bad].find("->"), std::string::npos) << "a failed call writes nothing back";
  // Every ioctl line carries its time, strace's <seconds>.
  EXPECT_NE(lines[read].rfind(" <0."), std::string::npos) << lines[read];
  EXPECT_TRUE(lines[read].ends_with(">"));
  // The fd is shown with the device behind it.
  EXPECT_NE(lines[read].find("</dev/nvhost-ctrl>"), std::string::npos);

  // A variable-length ioctl: the header and each inline entry. It passes validation and reaches
  // the channel, which has no GPFIFO yet: InvalidState (EINVAL), an answer only the channel gives.
  const int submit =
      Find(lines, {"NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO", "num_entries=2",
                   "{entry0=0x1000, entry1=0x80000400}", "{entry0=0x2000, entry1=0x80000800}",
                   "= -1 EINVAL", "[NvError InvalidState]"});
  EXPECT_GT(submit, Find(lines, {"open(\"/dev/nvhost-gpu\") = "}));
  ASSERT_GE(submit, 0) << text;
  EXPECT_EQ(lines[submit].find("->"), std::string::npos) << "a failed call writes nothing back";

  // Through /dev/nvdrv: the service command itself and the device ioctl it carries.
  EXPECT_GE(Find(lines, {"NVDRV_INITIALIZE", "size=0x10000", ") = 0"}), 0);
  EXPECT_GE(Find(lines, {"nvdrv Open(\"/dev/nvmap\") = " + kv["nvmap_fd"]}), 0);
  // The carried ioctl's answer and output: the handle the guest received.
  EXPECT_EQ(kv["create"], "0x0");
  EXPECT_GE(Find(lines, {"nvdrv Ioctl(fd " + kv["nvmap_fd"], "NVMAP_IOC_CREATE", "{size=0x1000}",
                         ") = 0 -> {handle=" + kv["handle"] + "}"}),
            0)
      << text;
  EXPECT_GE(Find(lines, {"nvdrv Close(fd " + kv["nvmap_fd"]}), 0);
  // The sessions end: each device's close is recorded (when the sentry sees the last reference go).
  EXPECT_GE(Find(lines, {"close(", "</dev/nvhost-ctrl>"}), 0);
  EXPECT_GE(Find(lines, {"close(", "</dev/nvhost-gpu>"}), 0);
}

TEST(Trace, JsonLinesCarryTheSameFacts) {
  const std::string file = TempPath("json");
  RunResult r =
      RunSandboxed({"--trace=" + file, "--trace-format=json"}, {NVDRV_GUEST_BIN, "trace"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto lines = Lines(ReadFile(file));
  unlink(file.c_str());
  ASSERT_FALSE(lines.empty());
  std::vector<nlohmann::json> recs;
  for (const std::string& l : lines) {
    ASSERT_TRUE(nlohmann::json::accept(l)) << l;
    recs.push_back(nlohmann::json::parse(l));
  }
  auto find = [&](auto pred) -> const nlohmann::json* {
    for (const auto& j : recs)
      if (pred(j)) return &j;
    return nullptr;
  };
  const auto* read = find([](const nlohmann::json& j) {
    return j.value("name", "") == "NVHOST_IOCTL_CTRL_SYNCPT_READ" && j["in"]["id"] == 7;
  });
  ASSERT_NE(read, nullptr);
  EXPECT_EQ((*read)["op"], "ioctl");
  EXPECT_EQ((*read)["code"], "0xC0080014");
  EXPECT_EQ((*read)["device"], "/dev/nvhost-ctrl");
  EXPECT_EQ((*read)["errno"], 0);
  EXPECT_EQ((*read)["out"]["value"], 1);
  EXPECT_TRUE((*read)["seconds"].is_number());

  const auto* bad = find([](const nlohmann::json& j) {
    return j.value("name", "") == "NVHOST_IOCTL_CTRL_SYNCPT_READ" && j["in"]["id"] == 999;
  });
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ((*bad)["errno"], EINVAL);
  EXPECT_EQ((*bad)["nverror"], "BadParameter");
  EXPECT_TRUE((*bad)["out"].is_null());

  const auto* submit = find([](const nlohmann::json& j) {
    return j.value("name", "") == "NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO";
  });
  ASSERT_NE(submit, nullptr);
  EXPECT_EQ((*submit)["code"], "0xC0284808") << "the guest's code, with its size";
  EXPECT_EQ((*submit)["in"]["num_entries"], 2);
  ASSERT_EQ((*submit)["in"]["entries"].size(), 2u);
  EXPECT_EQ((*submit)["in"]["entries"][1]["entry0"], 0x2000);
  EXPECT_EQ((*submit)["in"]["entries"][1]["entry1"], 0x80000800u);
  EXPECT_EQ((*submit)["errno"], EINVAL);
  EXPECT_EQ((*submit)["nverror"], "InvalidState") << "the channel has no GPFIFO yet";
  EXPECT_TRUE((*submit)["out"].is_null());

  const auto* create =
      find([](const nlohmann::json& j) { return j.value("name", "") == "NVMAP_IOC_CREATE"; });
  ASSERT_NE(create, nullptr);
  EXPECT_NE((*create)["via"], "direct");
  EXPECT_EQ((*create)["in"]["size"], 0x1000);
  EXPECT_EQ((*create)["errno"], 0);
  EXPECT_EQ((*create)["out"]["handle"], std::stoul(ParseKeyValues(r.out)["handle"], nullptr, 16));
  EXPECT_NE(find([](const nlohmann::json& j) {
              return j["op"] == "open" && j.value("path", "") == "/dev/nvhost-gpu";
            }),
            nullptr);
  // Each direct session's end, as in the text trace.
  for (const char* dev : {"/dev/nvhost-ctrl", "/dev/nvhost-gpu", "/dev/nvdrv"}) {
    EXPECT_NE(find([dev](const nlohmann::json& j) {
                return j["op"] == "close" && j["via"] == "direct" && j.value("path", "") == dev;
              }),
              nullptr)
        << dev;
  }
}

// The guest opens a device, closes it as its very last action and exits at once; the trace must
// still record the session's end. `hook` holds one sentry thread where a preempted thread would
// be (sentry/process/test_hooks.h), so the interleaving that lost the record happens on every run.
// With trapped opens the sentry placed the fd and knows its number; a device file's fd is known
// only to its calls, and this guest makes none.
void ExpectLastCloseRecorded(const std::string& hook, bool json, const std::string& devices) {
  const std::string file = TempPath(json ? "lastclose_json" : "lastclose_text");
  std::vector<std::string> options = {"--trace=" + file, "--devices=" + devices};
  if (json) options.push_back("--trace-format=json");
  RunResult r =
      RunWithTestHooks(hook, options, {NVDRV_GUEST_BIN, "lastclose", "/dev/nvhost-gpu"}, 30000);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const bool fd_known = devices == "trap";
  const std::string fd = fd_known ? ParseKeyValues(r.out)["fd"] : "?";
  ASSERT_FALSE(fd.empty()) << r.out;
  const std::string text = ReadFile(file);
  unlink(file.c_str());
  const auto lines = Lines(text);
  if (!json) {
    EXPECT_GE(Find(lines, {"open(\"/dev/nvhost-gpu\") = " + fd}), 0) << text;
    EXPECT_GE(Find(lines, {"close(" + fd + "</dev/nvhost-gpu>)"}), 0) << text;
    return;
  }
  int opens = 0, closes = 0;
  for (const std::string& l : lines) {
    ASSERT_TRUE(nlohmann::json::accept(l)) << l;
    const nlohmann::json j = nlohmann::json::parse(l);
    const int want_fd = fd_known ? std::stoi(fd) : -1;
    if (j["op"] == "open" && j["path"] == "/dev/nvhost-gpu" && j["fd"] == want_fd &&
        j.value("fd_unseen", false) == !fd_known)
      ++opens;
    if (j["op"] == "close" && j["path"] == "/dev/nvhost-gpu" && j["fd"] == want_fd) ++closes;
  }
  EXPECT_EQ(opens, 1) << text;
  EXPECT_EQ(closes, 1) << text;
}

// A worker placed the fd and was preempted before it finished the open; meanwhile the guest
// closed the fd and the lifetime thread ended the session (trapped opens only: a device file's
// open has nothing to place).
TEST(Trace, CloseIsRecordedWhenTheGuestClosesBeforeTheOpenIsFinished) {
  ExpectLastCloseRecorded("hold-open-after-placing", false, "trap");
  ExpectLastCloseRecorded("hold-open-after-placing", true, "trap");
}

// The thread that ends sessions the guest closed noticed the close late and was still ending the
// session when the guest's exit path ended every session and nvsentry exited.
TEST(Trace, CloseIsRecordedWhenTheSessionEndsAsTheGuestExits) {
  for (const char* devices : {"files", "trap"}) {
    ExpectLastCloseRecorded("hold-session-end", false, devices);
    ExpectLastCloseRecorded("hold-session-end", true, devices);
  }
}

TEST(Trace, DefaultsToStderrAndLeavesTheGuestsOutputAlone) {
  RunResult r = RunSandboxed({"--trace"}, {NVDRV_GUEST_BIN, "trace"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("NVHOST_IOCTL_CTRL_SYNCPT_READ"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("NVHOST_IOCTL"), std::string::npos) << r.out;
  EXPECT_EQ(ParseKeyValues(r.out)["value"], "1");
}

TEST(Trace, RefusedCallsShowTheHeaderThatWasRefused) {
  RunResult r = RunSandboxed({"--trace"}, {NVDRV_GUEST_BIN, "variable"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto lines = Lines(r.err);
  // num_entries=5 in a code sized for 4 entries.
  EXPECT_GE(Find(lines, {"NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO", "num_entries=5", "= -1 EINVAL",
                         "CountMismatch"}),
            0)
      << r.err;
  EXPECT_GE(Find(lines, {"NVHOST_IOCTL_CHANNEL_FREE_OBJ_CTX", "EOPNOTSUPP"}), 0);
}

TEST(Trace, NoTraceWithoutTheOption) {
  RunResult r = RunSandboxed({}, {NVDRV_GUEST_BIN, "trace"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err.find("NVHOST_IOCTL_CTRL_SYNCPT_READ"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nvsentry::testing
