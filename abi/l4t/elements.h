// Element layouts shared by the host ABI's user pointers: raw bytes, characters and u32 words.
#pragma once

#include "abi/catalogue.h"

namespace nvsentry::abi::l4t {

inline constexpr Field kByteElemF[] = {{"byte", 0, FieldType::kU8, 1, Dir::kInOut}};
inline constexpr StructDesc kByteElem{"byte", 1, kByteElemF};
inline constexpr Field kCharElemF[] = {{"char", 0, FieldType::kChar, 1, Dir::kInOut}};
inline constexpr StructDesc kCharElem{"char", 1, kCharElemF};
inline constexpr Field kU32ElemF[] = {
    {"value", 0, FieldType::kU32, 1, Dir::kInOut, nullptr, false, Fmt::kHex}};
inline constexpr StructDesc kU32Elem{"u32", 4, kU32ElemF};

}  // namespace nvsentry::abi::l4t
