// The tracer's records, text and JSON, for opens, ioctls (with inputs, outputs, errors, the nvdrv
// service path, unknown codes, parked calls), closes and notes. Expected lines are written by hand
// from the nvhost-ctrl layouts and a synthetic device defined here.
#include "proxy/trace.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>
#include <vector>

#include "abi/devices/nvhost_ctrl.h"
#include "abi/layout_check.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace nvsentry::proxy {
namespace {

using abi::NvError;
using namespace std::chrono_literals;
namespace ctrl = abi::nvhost_ctrl;

// Runs `fn` against a tracer writing into memory; returns everything it wrote.
std::string Capture(Tracer::Format format, const std::function<void(Tracer&)>& fn) {
  char* buf = nullptr;
  size_t len = 0;
  FILE* mem = open_memstream(&buf, &len);
  {
    Tracer t(mem, format);  // closes `mem`
    fn(t);
  }
  std::string out(buf, len);
  free(buf);
  return out;
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> lines;
  std::stringstream ss(s);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  return lines;
}

std::vector<uint8_t> Words(std::initializer_list<uint32_t> words) {
  std::vector<uint8_t> b(words.size() * 4);
  size_t i = 0;
  for (uint32_t w : words) std::memcpy(b.data() + 4 * i++, &w, 4);
  return b;
}

const abi::DeviceDesc& CtrlDev() { return abi::Device(abi::DeviceId::kNvhostCtrl); }
const abi::IoctlDesc* CtrlIoctl(uint32_t code) { return abi::FindIoctl(CtrlDev(), code); }

// A SYNCPT_READ of syncpoint `in` that the driver refused (BadParameter): a direct ioctl on fd 3
// fails with EINVAL; carried by an nvdrv Ioctl on nvdrv fd 1, the syscall succeeds and the
// NvError goes into the command's error word.
TraceIoctl BadSyncptRead(std::span<const uint8_t> in, Via via = Via::kDirect) {
  const bool direct = via == Via::kDirect;
  return {1,
          direct ? 3 : 1,
          &CtrlDev(),
          CtrlIoctl(ctrl::kSyncptRead),
          ctrl::kSyncptRead,
          via,
          in,
          {},
          {},
          {},
          NvError::kBadParameter,
          direct ? EINVAL : 0};
}

// SYNCPT_READ {in id; out value}: in {id=0, value=0xAAAA (ignored)}, out {id=0, value=12}.
struct ReadCall {
  std::vector<uint8_t> in = Words({0, 0xAAAA});
  std::vector<uint8_t> out = Words({0, 12});
  TraceIoctl Ok() {
    return {1234,
            3,
            &CtrlDev(),
            CtrlIoctl(ctrl::kSyncptRead),
            ctrl::kSyncptRead,
            Via::kDirect,
            in,
            {},
            out,
            {},
            NvError::kSuccess,
            0,
            false,
            4us};
  }
};

// A synthetic device with an Ioctl2 call: {in u32 count; out u32 result} + entries in in2.
constexpr abi::Field kEntryF[] = {{"lo", 0, abi::FieldType::kU32, 1, abi::Dir::kIn},
                                  {"hi", 4, abi::FieldType::kU32, 1, abi::Dir::kIn}};
constexpr abi::StructDesc kEntry{"entry", 8, kEntryF};
constexpr abi::Field kHdrF[] = {{"count", 0, abi::FieldType::kU32, 1, abi::Dir::kIn},
                                {"result", 4, abi::FieldType::kU32, 1, abi::Dir::kOut}};
constexpr abi::ArrayDesc kIn2A[] = {
    {"entries", &kEntry, abi::Dir::kIn, abi::Buffer::kIn2, abi::CountFrom::kField, 0, 8}};
constexpr uint32_t kTestCode = abi::IocCode(abi::Dir::kInOut, 0xF0, 4, 8);
constexpr abi::IoctlDesc kTestIoctls[] = {
    {kTestCode, "TEST_IOCTL2", kHdrF, abi::kUsesIoctl2, kIn2A}};
static_assert(abi::TableIsSound(kTestIoctls));
constexpr uint8_t kTestMagic[] = {0xF0};
const abi::DeviceDesc kTestDev{abi::DeviceId::kNvhostCtrl, "/dev/test", abi::kNoPermissionBit,
                               kTestMagic, kTestIoctls};

// ---- text ----

TEST(TraceText, Open) {
  std::string s = Capture(Tracer::Format::kText, [](Tracer& t) {
    t.Open({1234, "/dev/nvhost-ctrl", 3, 0, NvError::kSuccess, false, 21us});
    t.Open({7, "/dev/nvhost-gpu", -1, EACCES, NvError::kAccessDenied});
    t.Open({7, "/dev/nvhost-ctrl", 1, 0, NvError::kSuccess, true});
    t.Open({7, "/dev/nvhost-gpu", -1, 0, NvError::kAccessDenied, true});
  });
  EXPECT_EQ(
      s,
      "[pid 1234] open(\"/dev/nvhost-ctrl\") = 3 <0.000021>\n"
      "[pid 7] open(\"/dev/nvhost-gpu\") = -1 EACCES (Permission denied) [NvError AccessDenied]\n"
      "[pid 7] nvdrv Open(\"/dev/nvhost-ctrl\") = 1\n"
      "[pid 7] nvdrv Open(\"/dev/nvhost-gpu\") = NvError AccessDenied (0x30010)\n");
}

TEST(TraceText, IoctlWithInputAndOutput) {
  ReadCall c;
  std::string s = Capture(Tracer::Format::kText, [&](Tracer& t) { t.Ioctl(c.Ok()); });
  EXPECT_EQ(s,
            "[pid 1234] ioctl(3</dev/nvhost-ctrl>, NVHOST_IOCTL_CTRL_SYNCPT_READ, {id=0}) = 0 -> "
            "{value=12} <0.000004>\n");
}

TEST(TraceText, IoctlError) {
  std::vector<uint8_t> in = Words({999, 0});
  std::string s = Capture(Tracer::Format::kText, [&](Tracer& t) { t.Ioctl(BadSyncptRead(in)); });
  EXPECT_EQ(
      s,
      "[pid 1] ioctl(3</dev/nvhost-ctrl>, NVHOST_IOCTL_CTRL_SYNCPT_READ, {id=999}) = -1 EINVAL "
      "(Invalid argument) [NvError BadParameter]\n");
}

TEST(TraceText, ThroughNvdrv) {
  std::vector<uint8_t> in = Words({999, 0});
  ReadCall c;
  std::string s = Capture(Tracer::Format::kText, [&](Tracer& t) {
    t.Ioctl(BadSyncptRead(in, Via::kIoctl));
    TraceIoctl ok = c.Ok();
    ok.via = Via::kIoctl;
    ok.fd = 1;
    ok.took = 0ns;
    t.Ioctl(ok);
  });
  EXPECT_EQ(
      s,
      "[pid 1] nvdrv Ioctl(fd 1</dev/nvhost-ctrl>, NVHOST_IOCTL_CTRL_SYNCPT_READ, {id=999}) = "
      "NvError BadParameter (0x4)\n"
      "[pid 1234] nvdrv Ioctl(fd 1</dev/nvhost-ctrl>, NVHOST_IOCTL_CTRL_SYNCPT_READ, {id=0}) = "
      "0 -> {value=12}\n");
}

TEST(TraceText, Ioctl2ArraysFromTheSecondBuffer) {
  std::vector<uint8_t> in = Words({2, 0}), in2 = Words({10, 11, 12, 13}), out = Words({2, 77});
  std::string s = Capture(Tracer::Format::kText, [&](Tracer& t) {
    t.Ioctl({5,
             2,
             &kTestDev,
             &kTestIoctls[0],
             kTestCode,
             Via::kIoctl2,
             in,
             in2,
             out,
             {},
             NvError::kSuccess,
             0});
  });
  EXPECT_EQ(s,
            "[pid 5] nvdrv Ioctl2(fd 2</dev/test>, TEST_IOCTL2, {count=2, entries=[{lo=10, hi=11}, "
            "{lo=12, hi=13}]}) = 0 -> {result=77}\n");
}

TEST(TraceText, UnknownCodeParkedCloseNote) {
  std::vector<uint8_t> wait = Words({1, 5, 0xFFFFFFFF});
  std::string s = Capture(Tracer::Format::kText, [&](Tracer& t) {
    t.Ioctl({1,
             3,
             &CtrlDev(),
             nullptr,
             0xC0080099,
             Via::kDirect,
             {},
             {},
             {},
             {},
             NvError::kNotImplemented,
             ENOTTY});
    t.Ioctl({1,
             3,
             &CtrlDev(),
             CtrlIoctl(ctrl::kSyncptWait),
             ctrl::kSyncptWait,
             Via::kDirect,
             wait,
             {},
             wait,
             {},
             NvError::kSuccess,
             0,
             true,
             1500ms});
    // Refused before the argument was copied: the input is not known.
    t.Ioctl({1,
             3,
             &CtrlDev(),
             CtrlIoctl(ctrl::kSyncptWait),
             ctrl::kSyncptWait,
             Via::kDirect,
             {},
             {},
             {},
             {},
             NvError::kInvalidSize,
             EINVAL});
    t.Close({0, "/dev/nvhost-ctrl", 3, false});
    t.Close({7, "/dev/nvhost-ctrl", 1, true});
    t.Note(7, "nvdrv status: one\ntwo");
  });
  EXPECT_EQ(
      s,
      "[pid 1] ioctl(3</dev/nvhost-ctrl>, 0xC0080099, ?) = -1 ENOTTY (Inappropriate ioctl for "
      "device) [NvError NotImplemented]\n"
      "[pid 1] ioctl(3</dev/nvhost-ctrl>, NVHOST_IOCTL_CTRL_SYNCPT_WAIT, {id=1, thresh=5, "
      "timeout=-1}) = 0 [parked] <1.500000>\n"
      "[pid 1] ioctl(3</dev/nvhost-ctrl>, NVHOST_IOCTL_CTRL_SYNCPT_WAIT, ...) = -1 EINVAL "
      "(Invalid argument) [NvError InvalidSize]\n"
      "[pid -] close(3</dev/nvhost-ctrl>) /* session end */\n"
      "[pid 7] nvdrv Close(fd 1</dev/nvhost-ctrl>) = 0\n"
      "[pid 7] nvdrv status: one two\n");
}

// ---- JSON ----

TEST(TraceJson, Open) {
  std::string s = Capture(Tracer::Format::kJson, [](Tracer& t) {
    t.Open({1234, "/dev/nvhost-ctrl", 3, 0, NvError::kSuccess, false, 21us});
    t.Open({7, "/dev/nvhost-gpu", -1, EACCES, NvError::kAccessDenied});
    t.Open({7, "/dev/nv\"x", -1, 0, NvError::kAccessDenied, true});
  });
  auto lines = Lines(s);
  ASSERT_EQ(lines.size(), 3u) << s;
  for (const auto& l : lines) EXPECT_TRUE(nlohmann::json::accept(l)) << l;
  EXPECT_EQ(lines[0],
            R"({"tid":1234,"op":"open","via":"direct","path":"/dev/nvhost-ctrl","fd":3,"errno":0,)"
            R"("nverror":"Success","seconds":0.000021})");
  EXPECT_EQ(lines[1],
            R"({"tid":7,"op":"open","via":"direct","path":"/dev/nvhost-gpu","fd":-1,"errno":13,)"
            R"("errno_name":"EACCES","nverror":"AccessDenied","seconds":0.000000})");
  EXPECT_EQ(lines[2], R"({"tid":7,"op":"open","via":"nvdrv","path":"/dev/nv\"x","fd":-1,"errno":0,)"
                      R"("nverror":"AccessDenied","seconds":0.000000})");
}

TEST(TraceJson, IoctlWithInputAndOutput) {
  ReadCall c;
  std::string s = Capture(Tracer::Format::kJson, [&](Tracer& t) { t.Ioctl(c.Ok()); });
  EXPECT_EQ(s,
            R"({"tid":1234,"op":"ioctl","via":"direct","fd":3,"device":"/dev/nvhost-ctrl",)"
            R"("code":"0xC0080014","name":"NVHOST_IOCTL_CTRL_SYNCPT_READ","in":{"id":0},)"
            R"("out":{"value":12},"errno":0,"nverror":"Success","parked":false,"seconds":0.000004})"
            "\n");
}

TEST(TraceJson, ErrorsNvdrvUnknownCloseNote) {
  std::vector<uint8_t> in = Words({999, 0});
  std::vector<uint8_t> hdr = Words({2, 0}), in2 = Words({10, 11, 12, 13}), out = Words({2, 77});
  std::string s = Capture(Tracer::Format::kJson, [&](Tracer& t) {
    t.Ioctl(BadSyncptRead(in));
    t.Ioctl(BadSyncptRead(in, Via::kIoctl));
    t.Ioctl({1,
             3,
             &CtrlDev(),
             nullptr,
             0xC0080099,
             Via::kDirect,
             {},
             {},
             {},
             {},
             NvError::kNotImplemented,
             ENOTTY});
    t.Ioctl({5,
             2,
             &kTestDev,
             &kTestIoctls[0],
             kTestCode,
             Via::kIoctl2,
             hdr,
             in2,
             out,
             {},
             NvError::kSuccess,
             0,
             true});
    t.Close({0, "/dev/nvhost-ctrl", 3, false});
    t.Note(7, "a \"quoted\"\nnote");
  });
  auto lines = Lines(s);
  ASSERT_EQ(lines.size(), 6u) << s;
  for (const auto& l : lines) EXPECT_TRUE(nlohmann::json::accept(l)) << l;
  EXPECT_EQ(
      lines[0],
      R"({"tid":1,"op":"ioctl","via":"direct","fd":3,"device":"/dev/nvhost-ctrl",)"
      R"("code":"0xC0080014","name":"NVHOST_IOCTL_CTRL_SYNCPT_READ","in":{"id":999},)"
      R"("out":null,"errno":22,"errno_name":"EINVAL","nverror":"BadParameter","parked":false,)"
      R"("seconds":0.000000})");
  EXPECT_NE(lines[1].find(R"("via":"Ioctl","fd":1,)"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find(R"("errno":0,"nverror":"BadParameter")"), std::string::npos) << lines[1];
  EXPECT_EQ(
      lines[2],
      R"({"tid":1,"op":"ioctl","via":"direct","fd":3,"device":"/dev/nvhost-ctrl",)"
      R"("code":"0xC0080099","name":null,"in":null,"out":null,"errno":25,)"
      R"("errno_name":"ENOTTY","nverror":"NotImplemented","parked":false,"seconds":0.000000})");
  EXPECT_NE(lines[3].find(R"("via":"Ioctl2")"), std::string::npos) << lines[3];
  EXPECT_NE(lines[3].find(R"("in":{"count":2,"entries":[{"lo":10,"hi":11},{"lo":12,"hi":13}]},)"
                          R"("out":{"result":77})"),
            std::string::npos)
      << lines[3];
  EXPECT_NE(lines[3].find(R"("parked":true)"), std::string::npos) << lines[3];
  EXPECT_EQ(lines[4], R"({"tid":0,"op":"close","via":"direct","path":"/dev/nvhost-ctrl","fd":3})");
  EXPECT_EQ(lines[5], R"({"tid":7,"op":"note","text":"a \"quoted\"\nnote"})");
}

// ---- the write path ----

// A trace file written from several threads at once holds whole lines only.
TEST(Trace, ConcurrentRecordsStayWholeLines) {
  char path[] = "/tmp/nvsentry_trace_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  FILE* f = fdopen(fd, "w");
  ASSERT_NE(f, nullptr);
  constexpr int kThreads = 4, kEach = 200;
  {
    Tracer t(f, Tracer::Format::kText);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&t, i] {
        ReadCall c;
        for (int j = 0; j < kEach; ++j) {
          TraceIoctl r = c.Ok();
          r.tid = 100 + i;
          t.Ioctl(r);
          t.Note(100 + i, std::string(3000, 'n'));  // longer than stdio's buffer
        }
      });
    }
    for (auto& th : threads) th.join();
  }
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  unlink(path);
  auto lines = Lines(ss.str());
  ASSERT_EQ(lines.size(), size_t{2 * kThreads * kEach});
  for (const auto& l : lines) {
    ASSERT_TRUE(l.starts_with("[pid 10")) << l.substr(0, 80);
    ASSERT_TRUE(l.ends_with("<0.000004>") || l.ends_with(std::string(3000, 'n')))
        << l.substr(0, 80);
  }
}

}  // namespace
}  // namespace nvsentry::proxy
