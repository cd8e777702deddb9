// Decoding a call's bytes through its catalogue layout, for the trace and the fuzzer: strace-like
// text (`{id=3, name="gpu", entries=[{lo=1, hi=2}, ... 30 more]}`) or a JSON object. Nothing here
// trusts the bytes: a span shorter than its layout is never read past (the fields it does not hold
// are left out and a `<short>` mark says so), counts come from abi::LayOutArrays, and output is
// bounded (arrays are cut after a few elements, strings after 256 bytes).
//
// Rendering rules:
//  - Which fields: Show::kIn shows fields whose Dir has "in" (kIn, kInOut), kOut those with "out",
//    kAll both; kNone (padding, reserved words) is never shown. A member of a nested struct or an
//    array element is shown when the direction it shares with its container (the intersection of
//    the two Dirs) passes the filter.
//  - Scalars: u8/u16/u32 in decimal, u64 in hex, signed types as signed decimal; Fmt::kHex or
//    Fmt::kDec overrides (hex of a signed field prints its two's-complement bits). JSON gives every
//    scalar as a number (u64 too), whatever its Fmt.
//  - char arrays: a quoted C string up to the first NUL, with C escapes (JSON: a JSON string).
//  - Other fixed arrays: `[1, 2, 3]`, cut after 16 elements with `... N more`; struct members as
//    nested braces.
//  - Unions (`alt` members): every member that passes the filter is shown as its own entry over
//    the same bytes, e.g. `detailed_error=0, flags=0`.
//  - Variable arrays (DecodeCall): `name=[{...}, {...}, ... 30 more]`, at most 8 elements. When
//    the counts do not fit the buffers the arrays are replaced by `<arrays: reason>` (JSON:
//    "_arrays_error").
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "abi/array_layout.h"
#include "abi/catalogue.h"

namespace nvsentry::abi {

enum class Show : uint8_t { kIn, kOut, kAll };
enum class DecodeFormat : uint8_t { kText, kJson };

constexpr size_t kMaxShownScalars = 16;  // elements of a fixed array before `... N more`
constexpr size_t kMaxShownElements = 8;  // elements of a variable array before `... N more`
constexpr size_t kMaxShownChars = 256;   // bytes of a char array before `...`

// `{a=1, b=0x2}`: the fields of one struct.
std::string DecodeText(std::span<const Field> fields, std::span<const uint8_t> bytes, Show show);
// `{"a":1,"b":2}`.
std::string DecodeJson(std::span<const Field> fields, std::span<const uint8_t> bytes, Show show);

// One call: the fixed part of `main` through desc.fields, then each of desc.arrays that passes
// `show`, found with LayOutArrays from `main`'s header and the buffer sizes (`sizes`, or the spans'
// own sizes when null) and read from `main`, `in2` or `out2`. Where a span ends before an element
// the layout places in it, the list ends with `<short>`. `main` shorter than desc.fixed_size()
// decodes the fields it holds and shows no arrays.
std::string DecodeCall(const IoctlDesc& desc, Via via, std::span<const uint8_t> main,
                       std::span<const uint8_t> in2, std::span<const uint8_t> out2, Show show,
                       DecodeFormat format, const BufferSizes* sizes = nullptr);

// `"a\"b\n"`: a C string literal of `s` (printable ASCII kept, the rest escaped).
std::string CQuote(std::string_view s);
// `"a\"b\n"`: a JSON string of `s`; bytes outside printable ASCII become \u00XX.
std::string JsonQuote(std::string_view s);

}  // namespace nvsentry::abi
