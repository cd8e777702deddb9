// Fuzz target for the catalogue decoder (abi/decode.h): any catalogue ioctl, any bytes, any buffer
// sizes (including ones that disagree with the spans). Checks that decoding never reads past its
// spans (ASan), that output stays bounded, and that JSON output is well-formed JSON.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "abi/catalogue.h"
#include "abi/decode.h"
#include "nlohmann/json.hpp"
#include "tests/fuzz/fuzz_input.h"

#ifndef FUZZ_ENTRY
#define FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

namespace nvsentry::fuzz {
namespace {

[[noreturn]] void Violation(const char* what, const std::string& text) {
  std::fprintf(stderr, "decode_fuzz: invariant violated: %s\noutput (%zu bytes): %.2000s\n", what,
               text.size(), text.c_str());
  std::abort();
}

constexpr size_t kMaxOutput = 1 << 20;

void Check(const std::string& text, abi::DecodeFormat format) {
  if (text.size() > kMaxOutput) Violation("output not bounded", text);
  if (format == abi::DecodeFormat::kJson && !nlohmann::json::accept(text))
    Violation("invalid JSON", text);
}

}  // namespace

int RunDecodeInput(const uint8_t* data, size_t size) {
  Reader r({data, size});
  const auto devices = abi::Devices();
  const abi::DeviceDesc& dev = devices[r.U8() % devices.size()];
  const uint16_t index = r.U16();
  if (dev.ioctls.empty()) return 0;
  const abi::IoctlDesc& desc = dev.ioctls[index % dev.ioctls.size()];
  const auto via = static_cast<abi::Via>(r.U8() % 4);
  const auto show = static_cast<abi::Show>(r.U8() % 3);
  const auto format = static_cast<abi::DecodeFormat>(r.U8() % 2);
  const uint8_t flags = r.U8();
  const uint16_t main_len = r.U16(), in2_len = r.U16(), out2_len = r.U16();
  abi::BufferSizes sizes{r.U32(), r.U32(), r.U32()};
  // Exact-size heap copies so that ASan sees any read past a span.
  std::vector<uint8_t> main(main_len), in2(in2_len), out2(out2_len);
  r.Bytes(main);
  r.Bytes(in2);
  r.Bytes(out2);
  if (flags & 2) {
    std::string t = format == abi::DecodeFormat::kJson ? abi::DecodeJson(desc.fields, main, show)
                                                       : abi::DecodeText(desc.fields, main, show);
    Check(t, format);
  } else {
    std::string t =
        abi::DecodeCall(desc, via, main, in2, out2, show, format, (flags & 1) ? &sizes : nullptr);
    Check(t, format);
  }
  return 0;
}

}  // namespace nvsentry::fuzz

extern "C" int FUZZ_ENTRY(const uint8_t* data, size_t size) {
  return nvsentry::fuzz::RunDecodeInput(data, size);
}
