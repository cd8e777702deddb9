// `nvsentry abi`: list, show, docs, bad arguments and names it does not know. Rows are compared
// as whitespace-separated tokens written by hand from the nvhost-ctrl and /dev/nvdrv layouts.
#include "sentry/cmd/abi_cmd.h"

#include <cstdlib>
#include <sstream>

#include "abi/catalogue.h"
#include "abi/reference.h"
#include "gtest/gtest.h"

namespace nvsentry::sentry {
namespace {

struct AbiRun {
  int rc;
  std::string out, err;
};

AbiRun Abi(std::vector<std::string> args) {
  char *obuf = nullptr, *ebuf = nullptr;
  size_t olen = 0, elen = 0;
  FILE* out = open_memstream(&obuf, &olen);
  FILE* err = open_memstream(&ebuf, &elen);
  AbiRun r;
  r.rc = RunAbiCommand(args, out, err);
  fclose(out);
  fclose(err);
  r.out.assign(obuf, olen);
  r.err.assign(ebuf, elen);
  free(obuf);
  free(ebuf);
  return r;
}

using Tokens = std::vector<std::string>;

std::vector<Tokens> Rows(const std::string& text) {
  std::vector<Tokens> rows;
  std::stringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::stringstream words(line);
    Tokens t;
    for (std::string w; words >> w;) t.push_back(w);
    rows.push_back(t);
  }
  return rows;
}

bool HasRow(const std::string& text, const Tokens& want) {
  for (const Tokens& t : Rows(text))
    if (t == want) return true;
  return false;
}

TEST(AbiCmd, ListDevices) {
  AbiRun r = Abi({"list"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(r.err.empty());
  for (const abi::DeviceDesc& d : abi::Devices())
    EXPECT_NE(r.out.find(std::string(d.path)), std::string::npos) << d.path;
  EXPECT_TRUE(HasRow(r.out, {"/dev/nvhost-ctrl", "-", "15", "all"})) << r.out;
  EXPECT_TRUE(HasRow(r.out, {"/dev/nvdrv", "-", "14", "all"})) << r.out;
  // Permission bits, firmware ranges and notes come from the device entries.
  bool dbg = false, erpt = false;
  for (const Tokens& t : Rows(r.out)) {
    if (!t.empty() && t[0] == "/dev/nvhost-dbg-gpu") {
      dbg = true;
      ASSERT_GE(t.size(), 7u);
      EXPECT_EQ(t[1], "1");
      EXPECT_EQ(t[2], "(GpuDebug)");
      EXPECT_EQ(t[4], "all");
      EXPECT_EQ(t[5], "needs");
      EXPECT_EQ(t[6], "--debug-mode");
    }
    if (!t.empty() && t[0] == "/dev/nverpt-ctrl") {
      erpt = true;
      ASSERT_GE(t.size(), 4u);
      EXPECT_EQ(t[3], "[3.0.0+]");
    }
  }
  EXPECT_TRUE(dbg && erpt) << r.out;
}

TEST(AbiCmd, ListOneDevice) {
  AbiRun r = Abi({"list", "/dev/nvhost-ctrl"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("/dev/nvhost-ctrl: 15 ioctls\n")) << r.out;
  EXPECT_TRUE(
      HasRow(r.out, {"0xC0080014", "NVHOST_IOCTL_CTRL_SYNCPT_READ", "inout", "8", "all", "pure"}))
      << r.out;
  EXPECT_TRUE(HasRow(
      r.out, {"0xC00C0016", "NVHOST_IOCTL_CTRL_SYNCPT_WAIT", "inout", "12", "all", "may", "block"}))
      << r.out;
  EXPECT_TRUE(HasRow(r.out, {"0x40040015", "NVHOST_IOCTL_CTRL_SYNCPT_INCR", "in", "4", "all"}))
      << r.out;
  // The /dev/ prefix may be left out.
  EXPECT_EQ(Abi({"list", "nvhost-ctrl"}).out, r.out);
  AbiRun nvdrv = Abi({"list", "/dev/nvdrv"});
  EXPECT_TRUE(HasRow(nvdrv.out, {"0xC0406E0B", "NVDRV_IOCTL2", "inout", "64", "[3.0.0+]", "pure"}))
      << nvdrv.out;
  EXPECT_TRUE(HasRow(nvdrv.out, {"0x00006E09", "NVDRV_DUMP_STATUS", "none", "0", "all"}))
      << nvdrv.out;
}

TEST(AbiCmd, ShowByNameSuffixAndCode) {
  AbiRun r = Abi({"show", "NVHOST_IOCTL_CTRL_SYNCPT_WAITEX"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("NVHOST_IOCTL_CTRL_SYNCPT_WAITEX on /dev/nvhost-ctrl\n")) << r.out;
  EXPECT_TRUE(HasRow(r.out, {"code", "0xC0100019:", "dir", "inout,", "magic", "0x00,", "nr",
                             "0x19,", "size", "16"}))
      << r.out;
  EXPECT_TRUE(HasRow(r.out, {"firmware", "all"})) << r.out;
  EXPECT_TRUE(HasRow(r.out, {"flags", "may", "block"})) << r.out;
  EXPECT_TRUE(HasRow(r.out, {"layout", "16", "bytes"})) << r.out;
  EXPECT_TRUE(HasRow(r.out, {"0x0000", "4", "in", "u32", "id"})) << r.out;
  EXPECT_TRUE(HasRow(r.out, {"0x0004", "4", "in", "u32", "thresh"})) << r.out;
  EXPECT_TRUE(HasRow(r.out, {"0x0008", "4", "in", "s32", "timeout"})) << r.out;
  EXPECT_TRUE(HasRow(r.out, {"0x000C", "4", "out", "u32", "value"})) << r.out;
  // A suffix after '_' names it too, case does not matter, and so does its code.
  EXPECT_EQ(Abi({"show", "ctrl_syncpt_waitex"}).out, r.out);
  EXPECT_EQ(Abi({"show", "0xC0100019"}).out, r.out);
  EXPECT_EQ(Abi({"show", "0xc0100019"}).out, r.out);
}

TEST(AbiCmd, ShowNestedStructsCharArraysAndSummary) {
  AbiRun r = Abi({"show", "NVDRV_GET_STATUS"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(HasRow(r.out, {"0x0000", "32", "out", "struct", "NvDrvStatus", "status"})) << r.out;
  EXPECT_TRUE(HasRow(r.out, {"0x0000", "4", "out", "u32", "status.free_size"})) << r.out;
  EXPECT_TRUE(HasRow(r.out, {"0x000C", "4", "out", "u32", "status.minimum_allocatable_size"}))
      << r.out;
  EXPECT_TRUE(HasRow(r.out, {"0x0010", "16", "none", "u8[16]", "status.reserved"})) << r.out;
  EXPECT_TRUE(HasRow(r.out, {"0x0020", "4", "out", "u32", "error"})) << r.out;
  EXPECT_TRUE(HasRow(r.out, {"flags", "pure"})) << r.out;
  EXPECT_NE(r.out.find("  summary   Reports the Initialize budget as NvDrvStatus"),
            std::string::npos)
      << r.out;
  AbiRun open = Abi({"show", "NVDRV_OPEN"});
  EXPECT_TRUE(HasRow(open.out, {"0x0000", "256", "in", "char[256]", "path"})) << open.out;
  AbiRun ioctl3 = Abi({"show", "NVDRV_IOCTL3"});
  EXPECT_TRUE(HasRow(ioctl3.out, {"firmware", "[3.0.0+]"})) << ioctl3.out;
  AbiRun dump = Abi({"show", "NVDRV_DUMP_STATUS"});
  EXPECT_TRUE(HasRow(dump.out, {"layout", "no", "argument"})) << dump.out;
}

TEST(AbiCmd, NotFound) {
  AbiRun r = Abi({"show", "NO_SUCH_IOCTL_ANYWHERE"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("no ioctl named or coded 'NO_SUCH_IOCTL_ANYWHERE'"), std::string::npos)
      << r.err;
  AbiRun code = Abi({"show", "0xDEAD0000"});
  EXPECT_EQ(code.rc, 1);
  AbiRun dev = Abi({"list", "/dev/nvnothing"});
  EXPECT_EQ(dev.rc, 1);
  EXPECT_NE(dev.err.find("no device '/dev/nvnothing'"), std::string::npos) << dev.err;
}

// Each prints what is wrong and the usage of the (sub)command it was given to.
TEST(AbiCmd, BadArguments) {
  const std::string abi = "usage: nvsentry abi list [DEVICE]\n       nvsentry abi show";
  const std::string show = "usage: nvsentry abi show NAME|0xCODE\n";
  for (const auto& [args, usage] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{}, abi},
           {{"frob"}, abi},
           {{"show"}, show},
           {{"show", "a", "b"}, show},
           {{"show", ""}, show},
           {{"show", "0x"}, show},
           {{"show", "0xZZ"}, show},
           {{"show", "0x123456789"}, show},
           {{"list", "a", "b"}, "usage: nvsentry abi list [DEVICE]\n"},
           {{"docs", "x"}, "usage: nvsentry abi docs\n"}}) {
    AbiRun r = Abi(args);
    EXPECT_EQ(r.rc, 2) << ::testing::PrintToString(args);
    EXPECT_TRUE(r.out.empty()) << ::testing::PrintToString(args);
    EXPECT_NE(r.err.find(usage), std::string::npos) << ::testing::PrintToString(args) << r.err;
  }
}

TEST(AbiCmd, DocsIsTheReference) {
  AbiRun r = Abi({"docs"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, abi::IoctlReferenceMarkdown());
  EXPECT_TRUE(r.out.starts_with("# Ioctl reference\n\n_Generated by `nvsentry abi docs`")) << r.out;
  EXPECT_NE(r.out.find("do not edit by hand"), std::string::npos);
  EXPECT_NE(
      r.out.find("### NVHOST_IOCTL_CTRL_SYNCPT_READ\n\n`0xC0080014` · inout · 8 bytes · pure\n\n"
                 "| Offset | Size | Type | Dir | Field |\n|---|---|---|---|---|\n"
                 "| 0x0 | 4 | `u32` | in | `id` |\n| 0x4 | 4 | `u32` | out | `value` |\n"),
      std::string::npos);
  EXPECT_NE(
      r.out.find("| `0xC0080014` | NVHOST_IOCTL_CTRL_SYNCPT_READ | inout | 8 | all | pure |\n"),
      std::string::npos);
  EXPECT_NE(r.out.find("| `/dev/nvhost-ctrl` | - | 15 | all |  |\n"), std::string::npos);
  // Every ioctl of the catalogue has its section.
  for (const abi::NamedIoctl& n : abi::AllIoctls())
    EXPECT_NE(r.out.find("### " + std::string(n.ioctl->name) + "\n"), std::string::npos)
        << n.ioctl->name;
}

// The reference helpers on a synthetic layout: unions, arrays of structs, variable ioctls.
using enum abi::FieldType;
constexpr abi::Dir I = abi::Dir::kIn, O = abi::Dir::kOut;
constexpr abi::Field kElemF[] = {{"lo", 0, kU32, 1, I}, {"hi", 4, kU32, 1, O}};
constexpr abi::StructDesc kElem{"elem", 8, kElemF};
constexpr abi::Field kHdrF[] = {{"count", 0, kU32, 1, I},
                                {"detailed_error", 4, kU32, 1, O},
                                {"flags", 4, kU32, 1, I, nullptr, true},
                                {"pair", 8, kStruct, 2, I, &kElem},
                                {"name", 24, kChar, 8, I}};
constexpr abi::ArrayDesc kArr[] = {
    {"entries", &kElem, I, abi::Buffer::kMain, abi::CountFrom::kField, 0, 64}};
constexpr abi::IoctlDesc kVar{0xC000F001, "TEST_VAR", kHdrF, abi::kVariable | abi::kMayBlock,
                              kArr,       32};

TEST(AbiReference, Helpers) {
  std::vector<abi::LayoutRow> rows = abi::LayoutRows(kHdrF);
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[1].name, "detailed_error");
  EXPECT_FALSE(rows[1].alt);
  EXPECT_EQ(rows[2].name, "flags");
  EXPECT_TRUE(rows[2].alt);
  EXPECT_EQ(rows[3].type, "struct elem[2]");
  EXPECT_EQ(rows[3].size, 16u);
  EXPECT_EQ(rows[4].name, "pair[].lo");
  EXPECT_EQ(rows[4].offset, 8u);
  EXPECT_EQ(rows[5].name, "pair[].hi");
  EXPECT_EQ(rows[5].offset, 12u);
  EXPECT_EQ(rows[6].type, "char[8]");
  EXPECT_EQ(abi::CodeString(kVar), "0xC000F001 (size varies)");
  EXPECT_EQ(abi::SizeString(kVar), "32+");
  EXPECT_EQ(abi::IoctlFlagsString(kVar), "may block, variable");
  EXPECT_EQ(abi::ArrayCountString(kArr[0], kHdrF), "the u32 `count` at 0x0");
  EXPECT_EQ(abi::PermissionString(8), "8 (Display)");
  EXPECT_EQ(abi::PermissionString(abi::kNoPermissionBit), "-");
  EXPECT_EQ(abi::FirmwareRangeString({abi::Fw(3, 0, 0), abi::Fw(6, 1, 0)}), "[3.0.0-6.1.0)");
  EXPECT_EQ(abi::FirmwareRangeString({}), "all");
}

}  // namespace
}  // namespace nvsentry::sentry
