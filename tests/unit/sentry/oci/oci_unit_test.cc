// nvsentry-oci's pure parts: runc's command line, the GPU request, the seccomp merge, the bundle
// rewrite and the log lines.
#include <gtest/gtest.h>

#include <bitset>
#include <filesystem>
#include <vector>

#include "abi/catalogue.h"
#include "sentry/oci/bundle_rewrite.h"
#include "sentry/oci/container_state.h"
#include "sentry/oci/gpu_request.h"
#include "sentry/oci/oci_args.h"
#include "sentry/oci/oci_log.h"
#include "sentry/oci/seccomp_merge.h"

namespace nvsentry::oci {
namespace {

absl::StatusOr<OciCommand> Parse(std::vector<std::string> words) {
  std::vector<char*> argv{const_cast<char*>("nvsentry-oci")};
  for (std::string& w : words) argv.push_back(w.data());
  return ParseOciCommand(argv);
}

TEST(OciArgs, GlobalFlagsAsEnginesPassThem) {
  absl::StatusOr<OciCommand> c = Parse({"--root", "/r", "--log=/b/log.json", "--log-format", "json",
                                        "--systemd-cgroup", "create", "--bundle", "/b", "id"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->root, "/r");
  EXPECT_EQ(c->log_file, "/b/log.json");
  EXPECT_TRUE(c->log_json);
  EXPECT_EQ(c->verb, "create");
  EXPECT_EQ(c->args, (std::vector<std::string>{"--bundle", "/b", "id"}));
  // --root is not handed on as given: the runtime's state has a place of its own.
  EXPECT_EQ(c->runtime_flags, (std::vector<std::string>{"--log=/b/log.json", "--log-format=json",
                                                        "--systemd-cgroup"}));
}

TEST(OciArgs, VersionIsTheRuntimes) {
  absl::StatusOr<OciCommand> c = Parse({"--root", "/r", "--version"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->verb, "--version");
}

TEST(OciArgs, BadCommandLines) {
  EXPECT_FALSE(Parse({"--bogus", "create", "x"}).ok());
  EXPECT_FALSE(Parse({"--root"}).ok());
  EXPECT_FALSE(Parse({"--debug"}).ok());  // no verb
}

TEST(OciArgs, CreateArgsFindBundleAndId) {
  absl::StatusOr<CreateArgs> c = ParseCreateArgs(
      {"--bundle", "/b", "--pid-file", "/p", "--console-socket=/s", "--no-pivot", "id"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->bundle, "/b");
  EXPECT_EQ(c->id, "id");
  EXPECT_EQ(c->without_bundle, (std::vector<std::string>{"--pid-file", "/p", "--console-socket=/s",
                                                         "--no-pivot", "id"}));
  c = ParseCreateArgs({"-b=/x", "id2"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->bundle, "/x");
  EXPECT_EQ(c->without_bundle, (std::vector<std::string>{"id2"}));
  EXPECT_EQ(ParseCreateArgs({"id3"})->bundle, ".");
  EXPECT_FALSE(ParseCreateArgs({"--bundle", "/b"}).ok());
  EXPECT_EQ(ContainerIdOf({"--force", "id"}), "id");
  EXPECT_TRUE(HasFlag({"-f", "id"}, "force", 'f'));
  EXPECT_FALSE(HasFlag({"id"}, "force", 'f'));
}

nlohmann::json WithEnv(std::vector<std::string> env) {
  return {{"process", {{"env", env}}}, {"root", {{"path", "rootfs"}}}};
}

TEST(GpuRequest, FromEnvironmentAndAnnotations) {
  EXPECT_FALSE(GpuRequestOf(WithEnv({"PATH=/bin"}), {})->has_value());
  EXPECT_FALSE(GpuRequestOf(WithEnv({"NVSENTRY_GPU=none"}), {})->has_value());
  auto sim = GpuRequestOf(WithEnv({"NVSENTRY_GPU=sim"}), {});
  ASSERT_TRUE(sim.ok() && sim->has_value());
  EXPECT_FALSE((*sim)->run.backend_host);
  auto host = GpuRequestOf(WithEnv({"NVSENTRY_GPU=host"}), {});
  ASSERT_TRUE(host.ok() && host->has_value());
  EXPECT_TRUE((*host)->run.backend_host);
  EXPECT_FALSE(GpuRequestOf(WithEnv({"NVSENTRY_GPU=gtx"}), {}).ok());
  nlohmann::json c = WithEnv({});
  c["annotations"] = {{"nvsentry.service", "nvdrv:t"}, {"other.key", "x"}};
  auto ann = GpuRequestOf(c, {});
  ASSERT_TRUE(ann.ok() && ann->has_value());
  EXPECT_EQ((*ann)->run.service, "nvdrv:t");
  c["annotations"] = {{"nvsentry.polcy", "/p"}};
  EXPECT_FALSE(GpuRequestOf(c, {}).ok());
  c["annotations"] = {{"nvsentry.backend", "cloud"}};
  EXPECT_FALSE(GpuRequestOf(c, {}).ok());
}

// A config whose linux.devices lists `path` as c MAJOR:MINOR, and a disk beside it.
nlohmann::json WithDevice(const std::string& path, int major, int minor) {
  nlohmann::json c = WithEnv({"PATH=/bin"});
  c["linux"]["devices"] = {{{"path", "/dev/sda"}, {"type", "b"}, {"major", 8}, {"minor", 0}},
                           {{"path", path}, {"type", "c"}, {"major", major}, {"minor", minor}}};
  return c;
}

// A host_dev_dir whose nvhost-gpu is /dev/null (c 1:3), through a link: stat follows it.
std::string HostDevDir() {
  const std::string dir = testing::TempDir() + "/oci-hostdev";
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir + "/nvhost-gpu");
  std::filesystem::create_symlink("/dev/null", dir + "/nvhost-gpu");
  return dir;
}

TEST(GpuRequest, FromTheDeviceListAlone) {
  GpuDefaults d;
  d.host_dev_dir = HostDevDir();
  auto listed = GpuRequestOf(WithDevice("/dev/nvhost-gpu", 1, 3), d);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_TRUE(listed->has_value());
  EXPECT_EQ((*listed)->devices, std::vector<std::string>{"nvhost-gpu"});
  EXPECT_TRUE((*listed)->run.backend_host);
  EXPECT_EQ((*listed)->run.host_dev_dir, d.host_dev_dir);
  // Another device at that path on the host, or none: refused, saying which.
  auto other = GpuRequestOf(WithDevice("/dev/nvhost-gpu", 1, 5), d);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("c 1:3"), std::string::npos) << other.status();
  auto none = GpuRequestOf(WithDevice("/dev/nvmap", 10, 1), d);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("/dev/nvmap (c 10:1)"), std::string::npos);
  // No catalogue device listed: no GPU; NVSENTRY_GPU=sim wins over the list (every device).
  EXPECT_FALSE(GpuRequestOf(WithDevice("/dev/ttyS0", 4, 64), d)->has_value());
  nlohmann::json sim = WithDevice("/dev/nvhost-gpu", 1, 5);
  sim["process"]["env"].push_back("NVSENTRY_GPU=sim");
  auto chosen = GpuRequestOf(sim, d);
  ASSERT_TRUE(chosen.ok() && chosen->has_value());
  EXPECT_TRUE((*chosen)->devices.empty());
  EXPECT_FALSE((*chosen)->run.backend_host);
}

// Which magics a merged profile lets through natively (ALLOW rules on ioctl) and which it
// notifies: evaluated as libseccomp does, each rule's masked compare on the request.
struct Verdicts {
  std::bitset<256> allowed, notified;
};
Verdicts Evaluate(const nlohmann::json& profile) {
  Verdicts v;
  for (unsigned m = 0; m < 256; ++m) {
    for (const nlohmann::json& r : profile["syscalls"]) {
      bool ioctl = false;
      for (const auto& n : r["names"]) ioctl = ioctl || n == "ioctl";
      if (!ioctl) continue;
      const uint64_t request = uint64_t{m} << 8 | 0x12;
      bool match = true;
      for (const auto& a : r.value("args", nlohmann::json::array()))
        match = match && (request & a["value"].get<uint64_t>()) == a["valueTwo"].get<uint64_t>();
      if (!match) continue;
      if (r["action"] == "SCMP_ACT_ALLOW") v.allowed.set(m);
      if (r["action"] == "SCMP_ACT_NOTIFY") v.notified.set(m);
    }
  }
  return v;
}

TEST(SeccompMerge, SplitsTheEnginesIoctlRule) {
  const nlohmann::json engine = {{"defaultAction", "SCMP_ACT_ERRNO"},
                                 {"syscalls",
                                  {{{"names", {"read", "ioctl"}}, {"action", "SCMP_ACT_ALLOW"}},
                                   {{"names", {"mount"}}, {"action", "SCMP_ACT_ERRNO"}}}}};
  absl::StatusOr<nlohmann::json> p = NotifyGpuIoctls(engine, abi::AllMagics(), "/s");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ((*p)["listenerPath"], "/s");
  EXPECT_EQ((*p)["defaultAction"], "SCMP_ACT_ERRNO");
  EXPECT_EQ((*p)["syscalls"][0]["names"], nlohmann::json({"read"}));
  EXPECT_EQ((*p)["syscalls"][1]["names"], nlohmann::json({"mount"}));
  std::bitset<256> gpu;
  for (uint8_t m : abi::AllMagics()) gpu.set(m);
  const Verdicts v = Evaluate(*p);
  // Every magic exactly once: the GPU's notified, every other allowed as before.
  EXPECT_EQ(v.notified, gpu);
  EXPECT_EQ(v.allowed, ~gpu);
  EXPECT_LT((*p)["syscalls"].size(), 2 + 8 * abi::AllMagics().size() + abi::AllMagics().size());
}

TEST(SeccompMerge, NeverWeakens) {
  const nlohmann::json no_ioctl = {{"defaultAction", "SCMP_ACT_ERRNO"}};
  EXPECT_FALSE(NotifyGpuIoctls(no_ioctl, abi::AllMagics(), "/s").ok());
  const nlohmann::json restricted = {
      {"defaultAction", "SCMP_ACT_ALLOW"},
      {"syscalls",
       {{{"names", {"ioctl"}},
         {"action", "SCMP_ACT_ERRNO"},
         {"args", {{{"index", 1}, {"value", 0x5412}, {"op", "SCMP_CMP_EQ"}}}}}}}};
  EXPECT_FALSE(NotifyGpuIoctls(restricted, abi::AllMagics(), "/s").ok());
  const nlohmann::json has_listener = {{"defaultAction", "SCMP_ACT_ALLOW"},
                                       {"listenerPath", "/other"}};
  EXPECT_FALSE(NotifyGpuIoctls(has_listener, abi::AllMagics(), "/s").ok());
}

TEST(SeccompMerge, NoProfileNotifiesOnlyTheGpu) {
  absl::StatusOr<nlohmann::json> p = NotifyGpuIoctls(nullptr, abi::AllMagics(), "/s");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)["defaultAction"], "SCMP_ACT_ALLOW");
  EXPECT_EQ((*p)["syscalls"].size(), abi::AllMagics().size());
}

TEST(BundleRewrite, DeviceFilesReplaceTheGpuNodes) {
  nlohmann::json c = WithEnv({"NVSENTRY_GPU=sim"});
  c["mounts"] = {{{"destination", "/dev/nvmap"}, {"type", "bind"}, {"source", "/dev/nvmap"}},
                 {{"destination", "/proc"}, {"type", "proc"}}};
  c["linux"] = {
      {"devices",
       {{{"path", "/dev/nvhost-ctrl"}, {"type", "c"}}, {{"path", "/dev/null2"}, {"type", "c"}}}}};
  ContainerPaths paths;
  paths.devices = "/state/dev";
  paths.socket = "/state/sock";
  absl::StatusOr<nlohmann::json> r =
      RewriteForSentry(c, "/no/such/bundle", paths, {"nvmap", "nvhost-ctrl"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)["root"]["path"], "/no/such/bundle/rootfs");
  ASSERT_EQ((*r)["mounts"].size(), 3u);
  EXPECT_EQ((*r)["mounts"][0]["destination"], "/proc");
  EXPECT_EQ((*r)["mounts"][1]["source"], "/state/dev/nvmap");
  EXPECT_EQ((*r)["mounts"][2]["destination"], "/dev/nvhost-ctrl");
  ASSERT_EQ((*r)["linux"]["devices"].size(), 1u);
  EXPECT_EQ((*r)["linux"]["devices"][0]["path"], "/dev/null2");
  EXPECT_EQ((*r)["linux"]["seccomp"]["listenerPath"], "/state/sock");
}

TEST(ContainerState, IdsAsRuncTakesThem) {
  EXPECT_TRUE(ValidContainerId("0123abc_d.e-f+g"));
  for (const char* bad : {"", ".", "..", "../x", "a/b", "a b"})
    EXPECT_FALSE(ValidContainerId(bad)) << bad;
}

TEST(OciLog, LinesAsRuncWritesThem) {
  EXPECT_EQ(FormatLogLine(true, "error", "bad \"x\"\n", "T"),
            R"({"level":"error","msg":"bad \"x\"\n","time":"T"})");
  EXPECT_EQ(FormatLogLine(false, "error", "bad", "T"), R"(time="T" level=error msg="bad")");
  // As logrus quotes a text line's value: ' as it is, " and \ and newlines escaped.
  EXPECT_EQ(FormatLogLine(false, "info", "it's \"x\"\\\n", "T"),
            R"(time="T" level=info msg="it's \"x\"\\\n")");
}

}  // namespace
}  // namespace nvsentry::oci
