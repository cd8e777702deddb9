// The catalogue for people: names of types, flags and counts, layouts flattened to rows, and the
// Markdown of docs/ioctls.md. Shared by `nvsentry abi` and the docs test, so the command and the
// committed reference cannot drift apart.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "abi/catalogue.h"

namespace nvsentry::abi {

// "u32", "s64", "char[65]", "u8[16]", "struct NvDrvStatus", "struct entry[2]".
std::string TypeName(const Field& f);

// "pure, may block": the IoctlFlags that matter to a reader; "" when none.
std::string IoctlFlagsString(const IoctlDesc& d);

// "0xC0080014"; a variable ioctl's code has its size bits 0 and reads "0xC000F001 (size varies)".
std::string CodeString(const IoctlDesc& d);

// "8", or "16+" for a variable ioctl (header, then its arrays).
std::string SizeString(const IoctlDesc& d);

// "all" or a firmware range such as "[3.0.0+]".
std::string FirmwareRangeString(const FwRange& r);

// "8 (Display)" or "-".
std::string PermissionString(int bit);

// Where an array's count comes from: "the u32 `num_entries` at 0x8", "always 2", "the rest of
// the buffer".
std::string ArrayCountString(const ArrayDesc& a, std::span<const Field> header);
// "inline after the header", "the Ioctl2 second input buffer", "the Ioctl3 second output buffer".
std::string ArrayBufferString(Buffer b);

// One line of a flattened layout: members of a nested struct follow it, named `outer.inner`
// (`outer[].inner` for an array of structs, offsets of its first element).
struct LayoutRow {
  uint32_t offset;
  uint32_t size;  // bytes of the whole field (all its elements)
  std::string type;
  Dir dir;
  std::string name;
  bool alt;  // a union member over the previous field's bytes
  int depth;
};
std::vector<LayoutRow> LayoutRows(std::span<const Field> fields);

// The whole of docs/ioctls.md.
std::string IoctlReferenceMarkdown();

}  // namespace nvsentry::abi
