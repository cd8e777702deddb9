// The decoder: expected strings are written by hand from the layouts (nvhost-ctrl, /dev/nvdrv and
// synthetic ones defined here), never produced by the code under test.
#include "abi/decode.h"

#include <cstring>
#include <random>
#include <vector>

#include "abi/devices/nvdrv.h"
#include "abi/devices/nvhost_ctrl.h"
#include "abi/layout_check.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace nvsentry::abi {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, O = Dir::kOut, IO = Dir::kInOut, N = Dir::kNone;
constexpr Fmt H = Fmt::kHex, D = Fmt::kDec;

template <typename T>
void Put(std::vector<uint8_t>& b, size_t off, T v) {
  if (b.size() < off + sizeof v) b.resize(off + sizeof v);
  std::memcpy(b.data() + off, &v, sizeof v);
}

void PutStr(std::vector<uint8_t>& b, size_t off, std::string_view s) {
  if (b.size() < off + s.size()) b.resize(off + s.size());
  std::memcpy(b.data() + off, s.data(), s.size());
}

const IoctlDesc& Ctrl(uint32_t code) {
  const IoctlDesc* d = FindIoctl(Device(DeviceId::kNvhostCtrl), code);
  EXPECT_NE(d, nullptr);
  return *d;
}

const IoctlDesc& Nvdrv(uint32_t code) {
  const IoctlDesc* d = FindIoctl(Device(DeviceId::kNvdrv), code);
  EXPECT_NE(d, nullptr);
  return *d;
}

// Every scalar type and format override.
constexpr Field kScalarF[] = {{"a", 0, kU8, 1, I},
                              {"b", 1, kS8, 1, I},
                              {"c", 2, kU16, 1, I},
                              {"d", 4, kU32, 1, I},
                              {"e", 8, kU64, 1, I},
                              {"f", 16, kS32, 1, I},
                              {"g", 20, kU32, 1, I, nullptr, false, H},
                              {"h", 24, kU64, 1, I, nullptr, false, D},
                              {"i", 32, kS64, 1, I},
                              {"j", 40, kS16, 1, I, nullptr, false, H},
                              {"pad", 42, kU16, 1, N},
                              {"k", 44, kU32, 1, O}};

std::vector<uint8_t> ScalarBytes() {
  std::vector<uint8_t> b(48, 0);
  Put<uint8_t>(b, 0, 200);
  Put<int8_t>(b, 1, -1);
  Put<uint16_t>(b, 2, 65535);
  Put<uint32_t>(b, 4, 4000000000u);
  Put<uint64_t>(b, 8, 0xDEADBEEF00000001ull);
  Put<int32_t>(b, 16, -5);
  Put<uint32_t>(b, 20, 0x1F);
  Put<uint64_t>(b, 24, ~0ull);
  Put<int64_t>(b, 32, -9000000000ll);
  Put<int16_t>(b, 40, -2);
  Put<uint16_t>(b, 42, 0x5555);  // padding: never shown, even when not zero
  Put<uint32_t>(b, 44, 9);
  return b;
}

TEST(Decode, ScalarsText) {
  EXPECT_EQ(DecodeText(kScalarF, ScalarBytes(), Show::kIn),
            "{a=200, b=-1, c=65535, d=4000000000, e=0xdeadbeef00000001, f=-5, g=0x1f, "
            "h=18446744073709551615, i=-9000000000, j=0xfffe}");
  EXPECT_EQ(DecodeText(kScalarF, ScalarBytes(), Show::kOut), "{k=9}");
}

TEST(Decode, ScalarsJsonAreNumbers) {
  EXPECT_EQ(DecodeJson(kScalarF, ScalarBytes(), Show::kAll),
            R"({"a":200,"b":-1,"c":65535,"d":4000000000,"e":16045690981097406465,"f":-5,"g":31,)"
            R"("h":18446744073709551615,"i":-9000000000,"j":-2,"k":9})");
}

TEST(Decode, ShowSelectsByDirection) {
  const IoctlDesc& read = Ctrl(nvhost_ctrl::kSyncptRead);  // {in u32 id; out u32 value}
  std::vector<uint8_t> b;
  Put<uint32_t>(b, 0, 7);
  Put<uint32_t>(b, 4, 12);
  EXPECT_EQ(DecodeText(read.fields, b, Show::kIn), "{id=7}");
  EXPECT_EQ(DecodeText(read.fields, b, Show::kOut), "{value=12}");
  EXPECT_EQ(DecodeText(read.fields, b, Show::kAll), "{id=7, value=12}");
  // inout is on both sides: WAIT_EVENT_EX's value.
  const IoctlDesc& wait = Ctrl(nvhost_ctrl::kSyncptWaitEventEx);
  std::vector<uint8_t> w;
  Put<uint32_t>(w, 0, 1);
  Put<uint32_t>(w, 4, 2);
  Put<int32_t>(w, 8, -1);
  Put<uint32_t>(w, 12, 3);
  EXPECT_EQ(DecodeText(wait.fields, w, Show::kIn), "{id=1, thresh=2, timeout=-1, value=3}");
  EXPECT_EQ(DecodeText(wait.fields, w, Show::kOut), "{value=3}");
}

TEST(Decode, ReservedWordsAreNeverShown) {
  // NVDRV_SET_ARUID: {in u64 aruid; out u32 error (hex); none u32 reserved}
  std::vector<uint8_t> b;
  Put<uint64_t>(b, 0, 0x1122334455667788ull);
  Put<uint32_t>(b, 8, 4);
  Put<uint32_t>(b, 12, 0xFFFFFFFF);
  const IoctlDesc& d = Nvdrv(nvdrv::kSetAruid);
  EXPECT_EQ(DecodeText(d.fields, b, Show::kAll), "{aruid=0x1122334455667788, error=0x4}");
  EXPECT_EQ(DecodeJson(d.fields, b, Show::kAll), R"({"aruid":1234605616436508552,"error":4})");
}

TEST(Decode, CharArraysAreQuotedStrings) {
  // GET_CONFIG: {in char name[0x41]; in char key[0x41]; out char value[0x101]}
  const IoctlDesc& d = Ctrl(nvhost_ctrl::kGetConfig);
  std::vector<uint8_t> b(0x183, 0);
  PutStr(b, 0, "gpu");
  PutStr(b, 0x41, "a\"b\\c\n\x01z");
  PutStr(b, 0x82, "yes");
  EXPECT_EQ(DecodeText(d.fields, b, Show::kIn), R"({name="gpu", key="a\"b\\c\n\001z"})");
  EXPECT_EQ(DecodeText(d.fields, b, Show::kOut), R"({value="yes"})");
  EXPECT_EQ(DecodeJson(d.fields, b, Show::kIn), R"({"name":"gpu","key":"a\"b\\c\n\u0001z"})");
  // Bytes after the NUL are not part of the string.
  PutStr(b, 0x82, std::string("ab\0cd", 5));
  EXPECT_EQ(DecodeText(d.fields, b, Show::kOut), R"({value="ab"})");
}

TEST(Decode, LongStringsAreCut) {
  const IoctlDesc& d = Ctrl(nvhost_ctrl::kGetConfig);
  std::vector<uint8_t> b(0x183, 'x');  // no NUL anywhere: value is 0x101 = 257 x's
  std::string text = DecodeText(d.fields, b, Show::kOut);
  EXPECT_EQ(text, "{value=\"" + std::string(256, 'x') + "\"...}");
  // name (0x41 = 65 x's, unterminated) is shown whole: it is below the cut.
  EXPECT_EQ(DecodeText(std::span<const Field>(d.fields).first(1), b, Show::kIn),
            "{name=\"" + std::string(65, 'x') + "\"}");
}

constexpr Field kArraysF[] = {{"small", 0, kU8, 3, I},
                              {"words", 4, kU32, 20, I},
                              {"hexes", 84, kU16, 2, I, nullptr, false, H}};

TEST(Decode, FixedArraysAreListsCutAfterSixteen) {
  std::vector<uint8_t> b(88, 0);
  Put<uint8_t>(b, 0, 1);
  Put<uint8_t>(b, 1, 2);
  Put<uint8_t>(b, 2, 3);
  for (uint32_t i = 0; i < 20; ++i) Put<uint32_t>(b, 4 + 4 * i, i * 10);
  Put<uint16_t>(b, 84, 0xAB);
  Put<uint16_t>(b, 86, 0x10);
  EXPECT_EQ(DecodeText(kArraysF, b, Show::kIn),
            "{small=[1, 2, 3], words=[0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, "
            "140, 150, ... 4 more], hexes=[0xab, 0x10]}");
  EXPECT_EQ(DecodeJson(kArraysF, b, Show::kIn),
            R"({"small":[1,2,3],"words":[0,10,20,30,40,50,60,70,80,90,100,110,120,130,140,150,)"
            R"("... 4 more"],"hexes":[171,16]})");
}

TEST(Decode, NestedStructsAreBraces) {
  // NVDRV_GET_STATUS: {out NvDrvStatus status {4 hex u32, none u8 reserved[16]}; out u32 error}
  const IoctlDesc& d = Nvdrv(nvdrv::kGetStatus);
  std::vector<uint8_t> b(0x28, 0xEE);
  Put<uint32_t>(b, 0, 0x1000);
  Put<uint32_t>(b, 4, 0x800);
  Put<uint32_t>(b, 8, 0x400);
  Put<uint32_t>(b, 12, 0x200);
  Put<uint32_t>(b, 0x20, 0);
  EXPECT_EQ(DecodeText(d.fields, b, Show::kOut),
            "{status={free_size=0x1000, allocatable_size=0x800, minimum_free_size=0x400, "
            "minimum_allocatable_size=0x200}, error=0x0}");
  EXPECT_EQ(DecodeJson(d.fields, b, Show::kOut),
            R"({"status":{"free_size":4096,"allocatable_size":2048,"minimum_free_size":1024,)"
            R"("minimum_allocatable_size":512},"error":0})");
  EXPECT_EQ(DecodeText(d.fields, b, Show::kIn), "{}");
}

// A struct member's direction is what it shares with its container.
constexpr Field kPairF[] = {{"x", 0, kU32, 1, IO}, {"y", 4, kU32, 1, O}};
constexpr StructDesc kPair{"pair", 8, kPairF};
constexpr Field kOuterF[] = {{"p", 0, kStruct, 1, I, &kPair},
                             {"q", 8, kStruct, 2, IO, &kPair},
                             {"nothing", 24, kStruct, 1, I, nullptr}};

TEST(Decode, NestedDirectionsAreIntersected) {
  std::vector<uint8_t> b(24, 0);
  for (uint32_t i = 0; i < 6; ++i) Put<uint32_t>(b, 4 * i, i + 1);
  EXPECT_EQ(DecodeText(kOuterF, b, Show::kIn), "{p={x=1}, q=[{x=3}, {x=5}], nothing={}}");
  EXPECT_EQ(DecodeText(kOuterF, b, Show::kOut), "{q=[{x=3, y=4}, {x=5, y=6}]}");
}

// A union: detailed_error (out) and flags (in) share bytes 4..8.
constexpr Field kUnionF[] = {{"count", 0, kU32, 1, I},
                             {"detailed_error", 4, kU32, 1, O},
                             {"flags", 4, kU32, 1, I, nullptr, true}};

TEST(Decode, UnionMembersAreEachShown) {
  std::vector<uint8_t> b;
  Put<uint32_t>(b, 0, 2);
  Put<uint32_t>(b, 4, 5);
  EXPECT_EQ(DecodeText(kUnionF, b, Show::kIn), "{count=2, flags=5}");
  EXPECT_EQ(DecodeText(kUnionF, b, Show::kOut), "{detailed_error=5}");
  EXPECT_EQ(DecodeText(kUnionF, b, Show::kAll), "{count=2, detailed_error=5, flags=5}");
}

TEST(Decode, ShortBytesAreNeverReadPast) {
  const IoctlDesc& read = Ctrl(nvhost_ctrl::kSyncptRead);
  // A heap copy of exactly the short length, so a sanitizer would catch a read past it.
  auto bytes = std::make_unique<uint8_t[]>(6);
  uint32_t id = 7;
  std::memcpy(bytes.get(), &id, 4);
  bytes[4] = bytes[5] = 0xFF;
  std::span<const uint8_t> six(bytes.get(), 6);
  EXPECT_EQ(DecodeText(read.fields, six, Show::kAll), "{id=7, <short>}");
  EXPECT_EQ(DecodeText(read.fields, six, Show::kIn), "{id=7}");  // nothing shown is missing
  EXPECT_EQ(DecodeJson(read.fields, six, Show::kAll), R"({"id":7,"_short":true})");
  EXPECT_EQ(DecodeText(read.fields, {}, Show::kAll), "{<short>}");
  // A char array that does not fit is left out whole.
  const IoctlDesc& cfg = Ctrl(nvhost_ctrl::kGetConfig);
  std::vector<uint8_t> half(0x50, 'a');
  EXPECT_EQ(DecodeText(cfg.fields, half, Show::kIn),
            "{name=\"" + std::string(0x41, 'a') + "\", <short>}");
}

// Variable-length calls: the synthetic device of array_layout_test, written again here.
constexpr Field kEntryF[] = {{"lo", 0, kU32, 1, I}, {"hi", 4, kU32, 1, I}};
constexpr StructDesc kEntry{"entry", 8, kEntryF};
constexpr Field kSubmitF[] = {{"ignored", 0, kU64, 1, N},
                              {"count", 8, kU32, 1, I},
                              {"detailed_error", 12, kU32, 1, O},
                              {"flags", 12, kU32, 1, I, nullptr, true}};
constexpr ArrayDesc kSubmitA[] = {
    {"entries", &kEntry, I, Buffer::kMain, CountFrom::kField, 8, 100}};
constexpr Field kHdr2F[] = {{"count", 0, kU32, 1, I}, {"result", 4, kU32, 1, O}};
constexpr ArrayDesc kIn2A[] = {{"entries", &kEntry, I, Buffer::kIn2, CountFrom::kField, 0, 8}};
constexpr Field kRegionF[] = {{"offset", 0, kU64, 1, O}, {"pages", 8, kU64, 1, O}};
constexpr StructDesc kRegion{"region", 16, kRegionF};
constexpr Field kHdr3F[] = {{"size", 0, kU32, 1, IO}, {"pad", 4, kU32, 1, N}};
constexpr ArrayDesc kOut2A[] = {{"regions", &kRegion, O, Buffer::kOut2, CountFrom::kFixed, 2, 2}};
constexpr IoctlDesc kSynth[] = {
    {0xC000F001, "TEST_SUBMIT", kSubmitF, kVariable, kSubmitA, 16},
    {IocCode(Dir::kInOut, 0xF0, 4, 8), "TEST_IOCTL2", kHdr2F, kUsesIoctl2, kIn2A},
    {IocCode(Dir::kInOut, 0xF0, 5, 8), "TEST_IOCTL3", kHdr3F, kUsesIoctl3, kOut2A},
};
static_assert(TableIsSound(kSynth));

std::vector<uint8_t> Submit(uint32_t count, uint32_t entries) {
  std::vector<uint8_t> b(16 + 8 * entries, 0);
  Put<uint32_t>(b, 8, count);
  for (uint32_t i = 0; i < entries; ++i) {
    Put<uint32_t>(b, 16 + 8 * i, 2 * i + 1);
    Put<uint32_t>(b, 20 + 8 * i, 2 * i + 2);
  }
  return b;
}

TEST(DecodeCall, InlineArrayElements) {
  std::vector<uint8_t> b = Submit(3, 3);
  EXPECT_EQ(DecodeCall(kSynth[0], Via::kDirect, b, {}, {}, Show::kIn, DecodeFormat::kText),
            "{count=3, flags=0, entries=[{lo=1, hi=2}, {lo=3, hi=4}, {lo=5, hi=6}]}");
  EXPECT_EQ(DecodeCall(kSynth[0], Via::kDirect, b, {}, {}, Show::kIn, DecodeFormat::kJson),
            R"({"count":3,"flags":0,"entries":[{"lo":1,"hi":2},{"lo":3,"hi":4},{"lo":5,"hi":6}]})");
  // The output side has no input array.
  EXPECT_EQ(DecodeCall(kSynth[0], Via::kDirect, b, {}, {}, Show::kOut, DecodeFormat::kText),
            "{detailed_error=0}");
  EXPECT_EQ(
      DecodeCall(kSynth[0], Via::kDirect, Submit(0, 0), {}, {}, Show::kIn, DecodeFormat::kText),
      "{count=0, flags=0, entries=[]}");
}

TEST(DecodeCall, AtMostEightElements) {
  std::vector<uint8_t> b = Submit(30, 30);
  EXPECT_EQ(DecodeCall(kSynth[0], Via::kDirect, b, {}, {}, Show::kIn, DecodeFormat::kText),
            "{count=30, flags=0, entries=[{lo=1, hi=2}, {lo=3, hi=4}, {lo=5, hi=6}, {lo=7, hi=8}, "
            "{lo=9, hi=10}, {lo=11, hi=12}, {lo=13, hi=14}, {lo=15, hi=16}, ... 22 more]}");
  std::string json = DecodeCall(kSynth[0], Via::kDirect, b, {}, {}, Show::kIn, DecodeFormat::kJson);
  EXPECT_NE(json.find(R"({"lo":15,"hi":16},"... 22 more"]})"), std::string::npos) << json;
  EXPECT_TRUE(nlohmann::json::accept(json)) << json;
}

TEST(DecodeCall, CountsThatDoNotFitAreReported) {
  // count says 3, the buffer holds 2 entries.
  std::vector<uint8_t> b = Submit(3, 2);
  EXPECT_EQ(DecodeCall(kSynth[0], Via::kDirect, b, {}, {}, Show::kIn, DecodeFormat::kText),
            "{count=3, flags=0, <arrays: the counts need more bytes than the buffer has>}");
  std::string json = DecodeCall(kSynth[0], Via::kDirect, b, {}, {}, Show::kIn, DecodeFormat::kJson);
  EXPECT_EQ(
      json,
      R"({"count":3,"flags":0,"_arrays_error":"the counts need more bytes than the buffer has"})");
  // A main buffer shorter than the header: the fields it holds, no arrays.
  std::vector<uint8_t> four(4, 0);
  EXPECT_EQ(DecodeCall(kSynth[0], Via::kDirect, four, {}, {}, Show::kIn, DecodeFormat::kText),
            "{<short>}");
}

TEST(DecodeCall, SizesOverrideTheSpans) {
  // The layout says 3 entries (a size of 40), but only 2 entries' bytes are at hand: the third
  // is missing, and says so.
  std::vector<uint8_t> b = Submit(3, 2);
  const BufferSizes sizes{40, 0, 0};
  EXPECT_EQ(DecodeCall(kSynth[0], Via::kDirect, b, {}, {}, Show::kIn, DecodeFormat::kText, &sizes),
            "{count=3, flags=0, entries=[{lo=1, hi=2}, {lo=3, hi=4}, <short>]}");
}

TEST(DecodeCall, Ioctl2ArraysComeFromTheSecondBuffer) {
  std::vector<uint8_t> hdr;
  Put<uint32_t>(hdr, 0, 2);
  Put<uint32_t>(hdr, 4, 77);
  std::vector<uint8_t> in2;
  Put<uint32_t>(in2, 0, 10);
  Put<uint32_t>(in2, 4, 11);
  Put<uint32_t>(in2, 8, 12);
  Put<uint32_t>(in2, 12, 13);
  EXPECT_EQ(DecodeCall(kSynth[1], Via::kIoctl2, hdr, in2, {}, Show::kIn, DecodeFormat::kText),
            "{count=2, entries=[{lo=10, hi=11}, {lo=12, hi=13}]}");
  EXPECT_EQ(DecodeCall(kSynth[1], Via::kIoctl2, hdr, in2, {}, Show::kOut, DecodeFormat::kText),
            "{result=77}");
  // As a plain ioctl there is no second buffer: a count that is not 0 is a mismatch.
  EXPECT_EQ(DecodeCall(kSynth[1], Via::kDirect, hdr, {}, {}, Show::kIn, DecodeFormat::kText),
            "{count=2, <arrays: count is not zero but the call carries no buffer for the array>}");
}

TEST(DecodeCall, Ioctl3ArraysComeFromTheSecondOutput) {
  std::vector<uint8_t> hdr;
  Put<uint32_t>(hdr, 0, 8);
  Put<uint32_t>(hdr, 4, 0xDDDD);
  std::vector<uint8_t> out2;
  Put<uint64_t>(out2, 0, 0x1000);
  Put<uint64_t>(out2, 8, 0x10);
  Put<uint64_t>(out2, 16, 0x2000);
  Put<uint64_t>(out2, 24, 0x20);
  EXPECT_EQ(DecodeCall(kSynth[2], Via::kIoctl3, hdr, {}, out2, Show::kOut, DecodeFormat::kText),
            "{size=8, regions=[{offset=0x1000, pages=0x10}, {offset=0x2000, pages=0x20}]}");
  EXPECT_EQ(DecodeCall(kSynth[2], Via::kIoctl3, hdr, {}, out2, Show::kOut, DecodeFormat::kJson),
            R"({"size":8,"regions":[{"offset":4096,"pages":16},{"offset":8192,"pages":32}]})");
  EXPECT_EQ(DecodeCall(kSynth[2], Via::kIoctl3, hdr, {}, out2, Show::kIn, DecodeFormat::kText),
            "{size=8}");
}

TEST(DecodeCall, FixedIoctlIsItsFields) {
  std::vector<uint8_t> b;
  Put<uint32_t>(b, 0, 7);
  Put<uint32_t>(b, 4, 12);
  EXPECT_EQ(DecodeCall(Ctrl(nvhost_ctrl::kSyncptRead), Via::kIoctl, b, {}, {}, Show::kOut,
                       DecodeFormat::kText),
            "{value=12}");
  EXPECT_EQ(DecodeCall(Nvdrv(nvdrv::kDumpStatus), Via::kDirect, {}, {}, {}, Show::kAll,
                       DecodeFormat::kJson),
            "{}");
}

TEST(Quote, CAndJson) {
  EXPECT_EQ(CQuote("/dev/nvhost-ctrl"), R"("/dev/nvhost-ctrl")");
  EXPECT_EQ(CQuote(std::string_view("\t\r\x7f\xff"
                                    "1",
                                    5)),
            R"("\t\r\177\3771")");
  EXPECT_EQ(JsonQuote(std::string_view("\b\f\x1f\xc3\xa9/", 6)), R"("\b\f\u001f\u00c3\u00a9/")");
}

// Every ioctl of the catalogue, every length up to past its fixed part, random and extreme
// bytes, every Show, both formats, every way in: never a crash, always valid JSON, always one
// line of text.
TEST(Decode, AnyBytesThroughAnyLayout) {
  std::mt19937 rng(1234);
  auto random_bytes = [&](size_t n, int mode) {
    std::vector<uint8_t> b(n);
    for (auto& x : b) x = mode == 0 ? 0 : mode == 1 ? 0xFF : static_cast<uint8_t>(rng());
    return b;
  };
  std::vector<const IoctlDesc*> all;
  for (const NamedIoctl& n : AllIoctls()) all.push_back(n.ioctl);
  for (const IoctlDesc& d : kSynth) all.push_back(&d);
  for (const IoctlDesc* d : all) {
    const size_t fixed = d->fixed_size();
    for (size_t len : {size_t{0}, size_t{1}, fixed / 2, fixed > 0 ? fixed - 1 : 0, fixed, fixed + 8,
                       fixed + 64}) {
      for (int mode = 0; mode < 3; ++mode) {
        auto main = random_bytes(len, mode);
        auto in2 = random_bytes(mode * 24, mode);
        auto out2 = random_bytes(mode * 40, mode);
        for (Via via : {Via::kDirect, Via::kIoctl, Via::kIoctl2, Via::kIoctl3}) {
          for (Show show : {Show::kIn, Show::kOut, Show::kAll}) {
            std::string text = DecodeCall(*d, via, main, in2, out2, show, DecodeFormat::kText);
            EXPECT_EQ(text.find('\n'), std::string::npos) << d->name;
            std::string json = DecodeCall(*d, via, main, in2, out2, show, DecodeFormat::kJson);
            ASSERT_TRUE(nlohmann::json::accept(json)) << d->name << ": " << json;
            // A roomier layout than the spans hold must not be read past either.
            const BufferSizes big{1u << 20, 1u << 20, 1u << 20};
            DecodeCall(*d, via, main, in2, out2, show, DecodeFormat::kText, &big);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace nvsentry::abi
