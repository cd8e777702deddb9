// The simulated GPU under the real sentry: the demo's full sequence (through /dev/nvdrv and
// through the Linux nodes), nvmap answers, two processes sharing an object through GET_ID/FROM_ID,
// faults (unmapped pushbuffer, munmapped pinned memory, unbound subchannel) that stop one channel
// and not the others, several channels and address spaces in one guest, address-space answers,
// and a guest looping on CREATE against its nvmap_objects budget while the sentry's memory stays
// flat. Expected values are typed by hand from Switchbrew (NvError codes) and the guest's own data.
#include <png.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

constexpr int kBadValue = 0xB, kBadParameter = 0x4, kInsufficientMemory = 0x6,
              kAccessDenied = 0x30010;

std::string N(int v) { return std::to_string(v); }

std::string PolicyOption(const std::string& name, const std::string& toml) {
  std::string path =
      ::testing::TempDir() + "nvsentry_gpu_" + std::to_string(getpid()) + "_" + name + ".toml";
  std::ofstream(path) << toml;
  return "--policy=" + path;
}

RunResult Guest(const std::vector<std::string>& args, const std::vector<std::string>& options = {},
                bool direct = false) {
  std::vector<std::string> argv = {GPU_GUEST_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunSandboxed(
      options, argv,
      direct ? std::vector<std::string>{"NVC_DIRECT=1"} : std::vector<std::string>{});
}

void ExpectDemoPassed(const RunResult& r) {
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["demo"], "ok") << r.out;
  EXPECT_EQ(kv["copy_mismatch"], "0");
  EXPECT_EQ(kv["fill_mismatch"], "0");
  EXPECT_NE(r.out.find("gpu: gm20b"), std::string::npos) << r.out;
}

// The second demo: colour bars by the DMA engine and a checker strip by inline-to-memory into a
// 1280x720 block-linear surface; the demo reads every pixel back with the TRM's GOB formula.
// Then it flips the surface onto the panel behind the drawing's fence; --frames writes what the
// panel showed as a PNG, read back here: the bars (left to right: white, yellow, cyan, green,
// magenta, red, blue, black) and the checker strip at (608, 356).
TEST(DisplayDemo, DrawsIntoABlockLinearSurfaceAndShowsIt) {
  char tmpl[] = "/tmp/nvs-frames-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = std::string(tmpl) + "/frames";
  RunResult r = RunSandboxed({"--service=nvdrv:t", "--frames=" + dir}, {DISPLAY_DEMO_BIN});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("display_demo=ok mismatch=0"), std::string::npos) << r.out << r.err;
  std::vector<std::string> pngs;
  for (const auto& e : std::filesystem::directory_iterator(dir)) pngs.push_back(e.path());
  ASSERT_EQ(pngs.size(), 1u) << "one flip, one frame";
  EXPECT_NE(pngs[0].find("/disp0-"), std::string::npos) << pngs[0];
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  ASSERT_TRUE(png_image_begin_read_from_file(&image, pngs[0].c_str())) << image.message;
  image.format = PNG_FORMAT_RGBA;
  std::vector<uint8_t> px(PNG_IMAGE_SIZE(image));
  ASSERT_TRUE(png_image_finish_read(&image, nullptr, px.data(), 0, nullptr)) << image.message;
  ASSERT_EQ(image.width, 1280u);
  ASSERT_EQ(image.height, 720u);
  auto at = [&](uint32_t x, uint32_t y) {
    const uint8_t* p = &px[(y * 1280 + x) * 4];
    return std::array<int, 4>{p[0], p[1], p[2], p[3]};
  };
  using C = std::array<int, 4>;
  EXPECT_EQ(at(10, 10), (C{255, 255, 255, 255})) << "white";
  EXPECT_EQ(at(170, 700), (C{255, 255, 0, 255})) << "yellow";
  EXPECT_EQ(at(330, 5), (C{0, 255, 255, 255})) << "cyan";
  EXPECT_EQ(at(1270, 719), (C{0, 0, 0, 255})) << "black";
  EXPECT_EQ(at(608, 356), (C{32, 32, 32, 255})) << "the checker strip's first square";
  EXPECT_EQ(at(616, 356), (C{255, 255, 255, 255})) << "its second";
  std::filesystem::remove_all(tmpl);
}

// Five flips, one per vblank: about four periods of 1/60 s after the first; --frames-every=2
// keeps the 1st, 3rd and 5th.
TEST(DisplayDemo, FlipsArePacedByTheVblankAndEveryNthFrameIsKept) {
  char tmpl[] = "/tmp/nvs-frames-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = std::string(tmpl) + "/frames";
  RunResult r = RunSandboxed({"--service=nvdrv:t", "--frames=" + dir, "--frames-every=2"},
                             {DISPLAY_DEMO_BIN, "--flips", "5"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["flips"], "5") << r.out;
  // Four vblanks, less one for the wake-up latencies at either end (unpaced: about 1 ms).
  EXPECT_GE(std::stod(kv["after_first_ms"]), 3 * 1000.0 / 60) << r.out;
  int pngs = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) (void)e, ++pngs;
  EXPECT_EQ(pngs, 3);
  std::filesystem::remove_all(tmpl);
}

TEST(GpuDemo, FullSequenceThroughNvdrv) { ExpectDemoPassed(RunSandboxed({}, {GPU_DEMO_BIN})); }

TEST(GpuDemo, FullSequenceThroughLinuxNodes) {
  ExpectDemoPassed(RunSandboxed({}, {GPU_DEMO_BIN, "--direct"}));
}

TEST(GpuDemo, TraceShowsTheWholeConversation) {
  RunResult r = RunSandboxed({"--trace"}, {GPU_DEMO_BIN, "--size", "65536"});
  ExpectDemoPassed(r);
  for (const char* name :
       {"NVMAP_IOC_CREATE", "NVMAP_IOC_ALLOC", "NVGPU_AS_IOCTL_ALLOC_AS_EX",
        "NVGPU_AS_IOCTL_MAP_BUFFER_EX", "NVGPU_AS_IOCTL_BIND_CHANNEL",
        "NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO_EX2", "NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO",
        "NVHOST_IOCTL_CTRL_SYNCPT_WAIT_EVENT_EX", "NVGPU_GPU_IOCTL_GET_CHARACTERISTICS"})
    EXPECT_NE(r.err.find(name), std::string::npos) << name;
}

TEST(GpuNvmap, AnswersAsClientsExpect) {
  RunResult r = Guest({"nvmap"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["create_zero"], N(kBadValue));
  EXPECT_EQ(kv["create"], "0");
  EXPECT_EQ(kv["handle_nonzero"], "1");
  EXPECT_EQ(kv["param_size"], "8192");  // 5000 rounded up to 4 KiB pages
  EXPECT_EQ(kv["alloc_bad_align"], N(kBadValue));
  EXPECT_EQ(kv["alloc_unknown"], N(kBadValue));
  EXPECT_EQ(kv["alloc"], "0");
  EXPECT_EQ(kv["align_out"], "0x1000");  // below 4 KiB becomes 4 KiB
  EXPECT_EQ(kv["param_heap"], "0x40000000");
  EXPECT_EQ(kv["get_id"], "0");
  EXPECT_EQ(kv["id_matches_handle"], "1");
  EXPECT_NE(kv["free_unknown"], "0");
  EXPECT_EQ(kv["free"], "0");
  EXPECT_EQ(kv["free_address_is_mem"], "1");
  EXPECT_EQ(kv["free_size"], "8192");
  EXPECT_NE(kv["free_again"], "0");
  EXPECT_EQ(kv["done"], "1");
}

TEST(GpuNvmap, SecondProcessImportsWithBit9AndWritesThroughItsOwnChannel) {
  // nvdrv's mask plus bit 9 (ImportMemory).
  std::string policy =
      PolicyOption("bit9", "[guest]\nservice = \"nvdrv\"\npermission_mask = 0xAA3B\n");
  RunResult r = Guest({"share"}, {policy});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_NE(kv["child_map_before_from_id"], "0");  // a handle is the parent's until imported
  EXPECT_EQ(kv["child_from_id"], "0");
  EXPECT_EQ(kv["child_wait"], "0");
  EXPECT_EQ(kv["parent_sees_child_write"], "1");
}

TEST(GpuNvmap, SecondProcessCannotImportWithoutTheBits) {
  RunResult r = Guest({"share"});  // nvdrv 0xA83B: neither bit 9 nor bit 12
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["child_from_id"], N(kAccessDenied));
  EXPECT_EQ(kv["parent_sees_child_write"], "0");
}

void ExpectFaultStopsOnlyThatChannel(const RunResult& r) {
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["submit"], "0");  // the fault happens later, on the GPU
  EXPECT_NE(kv["notification_status"], "0") << r.out;
  EXPECT_EQ(kv["notifier_memory_status"], kv["notification_status"]);
  EXPECT_EQ(kv["notifier_memory_info32"], kv["info32"]);
  EXPECT_EQ(kv["error_event"], "1");
  EXPECT_NE(kv["submit_after_fault"], "0");
  EXPECT_EQ(kv["other_submit"], "0");
  EXPECT_EQ(kv["other_wait"], "0");
  EXPECT_EQ(kv["reset"], "0");
  EXPECT_EQ(kv["submit_after_reset"], "0");
  EXPECT_EQ(kv["wait_after_reset"], "0");
}

TEST(GpuFaults, UnmappedPushbuffer) { ExpectFaultStopsOnlyThatChannel(Guest({"fault-unmapped"})); }

TEST(GpuFaults, GuestMunmapsPinnedMemory) {
  ExpectFaultStopsOnlyThatChannel(Guest({"fault-munmap"}));
}

TEST(GpuFaults, UnboundSubchannel) { ExpectFaultStopsOnlyThatChannel(Guest({"bad-subchannel"})); }

TEST(GpuFaults, MmuFaultsAreReportedAsMmuErrors) {
  RunResult a = Guest({"fault-unmapped"}), b = Guest({"bad-subchannel"});
  auto ka = ParseKeyValues(a.out), kb = ParseKeyValues(b.out);
  EXPECT_NE(ka["info32"], kb["info32"]) << "an MMU fault and a bad method report different errors";
}

TEST(GpuChannels, SeveralChannelsAndAddressSpacesInOneGuest) {
  for (bool direct : {false, true}) {
    RunResult r = Guest({"multi"}, {}, direct);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    auto kv = ParseKeyValues(r.out);
    EXPECT_EQ(kv["distinct_syncpoints"], "1");
    EXPECT_EQ(kv["wait1"], "0");
    EXPECT_EQ(kv["wait2"], "0");
    EXPECT_EQ(kv["wait3"], "0");
    EXPECT_EQ(kv["as_a_copied"], "1");
    EXPECT_EQ(kv["as_b_copied"], "1");
  }
}

// The channel's own WAIT: NvErrors typed from Switchbrew (Timeout 5, BadParameter 4).
TEST(GpuChannels, WaitOnASemaphoreTheGpuReleases) {
  RunResult r = Guest({"chan-wait"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["wait_unmet_zero"], "5") << "timeout 0 only checks";
  EXPECT_EQ(kv["wait_bad_type"], N(kBadParameter));
  EXPECT_EQ(kv["wait_misaligned"], N(kBadParameter));
  EXPECT_EQ(kv["submit"], "0");
  EXPECT_EQ(kv["wait_met"], "0");
  EXPECT_EQ(kv["sees_release"], "1");
  EXPECT_EQ(kv["wait_never"], "5");
  EXPECT_EQ(kv["done"], "1");
}

TEST(GpuAddressSpace, ReservationsMapsAndTheirErrors) {
  RunResult r = Guest({"as"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["alloc_space_fixed"], "0");
  EXPECT_EQ(kv["offset"], "0x480000000");
  EXPECT_NE(kv["alloc_space_overlap"], "0");
  EXPECT_EQ(kv["alloc_space_sparse"], "0");
  EXPECT_EQ(kv["aligned"], "1");
  EXPECT_EQ(kv["map_fixed_in_space"], "0");
  EXPECT_NE(kv["map_fixed_clash"], "0");
  EXPECT_EQ(kv["map_bad_handle"], N(kBadParameter));
  EXPECT_EQ(kv["unmap"], "0");
  EXPECT_NE(kv["unmap_again"], "0");
  EXPECT_NE(kv["free_space_unknown"], "0");
  EXPECT_EQ(kv["free_space"], "0");
  EXPECT_EQ(kv["bind_not_channel"], N(kBadParameter));
}

TEST(GpuBudgets, ChannelsAddressSpacesPinnedAndSentryMemory) {
  std::string policy =
      PolicyOption("devices",
                   "[budgets]\nchannels = 1\naddress_spaces = 1\npinned_bytes = \"64KiB\"\n"
                   "transfer_memory = \"8256KiB\"\n");
  RunResult r = Guest({"budgets"}, {policy, "--trace"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["second_as"], N(kInsufficientMemory));
  EXPECT_EQ(kv["second_channel"], N(kInsufficientMemory));  // the open itself is refused
  EXPECT_EQ(kv["pin_16k"], "0");
  EXPECT_EQ(kv["pin_past_budget"], N(kInsufficientMemory));  // 16 KiB + 64 KiB > 64 KiB
  EXPECT_EQ(kv["sentry_64k"], "0");
  EXPECT_EQ(kv["sentry_past_budget"], N(0x1000));  // InsufficientTransferMemory
  EXPECT_EQ(kv["dump_status"], "0");
  // DumpStatus shows the pin: the guest's process (as the trace numbers it: the sentry's view)
  // and range.
  const size_t at = r.err.find("[pid ");
  ASSERT_NE(at, std::string::npos) << r.err;
  const std::string traced_pid = r.err.substr(at + 5, r.err.find(']', at) - at - 5);
  std::stringstream pin;
  pin << "pid " << traced_pid << " " << kv["pin_addr"] << "+0x4000";
  EXPECT_NE(r.err.find(pin.str()), std::string::npos) << pin.str() << "\n" << r.err;
  EXPECT_NE(r.err.find("pinned_bytes 16384/65536"), std::string::npos) << r.err;
}

TEST(GpuLearn, TheDemoRunsAgainUnderItsLearnedPolicyAndNotWithMore) {
  const std::string file =
      ::testing::TempDir() + "nvsentry_gpu_learned_" + std::to_string(getpid()) + ".toml";
  unlink(file.c_str());
  RunResult learn = RunSandboxed({"--learn=" + file}, {GPU_DEMO_BIN, "--size", "65536"});
  ExpectDemoPassed(learn);
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  // The GPU's budgets and argument limits are learned from what the demo did: one channel, one
  // address space, six objects, a 3D context, 64 KiB objects at most (each with 2x headroom).
  for (const char* line : {"channels = 2", "address_spaces = 2", "nvmap_objects = 12",
                           "fields.class_num = { one_of = [0xB197] }"})
    EXPECT_NE(text.str().find(line), std::string::npos) << line << "\n" << text.str();
  ExpectDemoPassed(RunSandboxed({"--policy=" + file}, {GPU_DEMO_BIN, "--size", "65536"}));
  // A bigger copy needs bigger objects than the learned CREATE size: refused (AccessDenied).
  RunResult more = RunSandboxed({"--policy=" + file}, {GPU_DEMO_BIN, "--size", "1048576"});
  EXPECT_NE(more.exit_code, 0);
  EXPECT_NE(more.err.find("NVMAP_IOC_CREATE failed: AccessDenied"), std::string::npos) << more.err;
}

// VmRSS of a process in KiB, or -1.
long RssKiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

TEST(GpuBudgets, CreateLoopGetsTheErrorAndTheSentryStaysFlat) {
  std::string policy = PolicyOption("objects", "[budgets]\nnvmap_objects = 2000\n");
  RunSpec spec;
  spec.argv = {NvsentryPath(), "run", policy, "--", GPU_GUEST_BIN, "budget-loop", "12"};
  Child child(spec);
  ASSERT_TRUE(child.WaitForOutput("round=1 ", 30000));
  long first = RssKiB(child.pid());
  ASSERT_TRUE(child.WaitForOutput("round=12 ", 60000));
  long last = RssKiB(child.pid());
  RunResult r = child.Finish(30000);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (int round : {1, 6, 12}) {
    std::string line = "round=" + N(round) + " created=2000 error=" + N(kInsufficientMemory);
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
  ASSERT_GT(first, 0);
  // Twelve rounds of 2000 objects made and freed: the sentry holds no more than after the first.
  EXPECT_LT(last - first, 2048) << "RSS " << first << " KiB -> " << last << " KiB";
}

}  // namespace
}  // namespace nvsentry::testing
