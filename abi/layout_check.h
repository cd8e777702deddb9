// Compile-time checks of an ioctl table against the sizes its codes encode: every field lies
// inside the struct, fields do not overlap, and the last field ends exactly at the encoded size.
#pragma once

#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi {

constexpr bool FieldsFit(const IoctlDesc& d) {
  uint32_t end = 0;
  for (const Field& f : d.fields) {
    if (f.count == 0 || f.offset < end) return false;  // empty or overlapping / out of order
    end = f.extent();
  }
  return end == d.size();
}

constexpr bool TableIsSound(std::span<const IoctlDesc> table) {
  for (size_t i = 0; i < table.size(); ++i) {
    if (!FieldsFit(table[i])) return false;
    for (size_t j = i + 1; j < table.size(); ++j)
      if (table[i].code == table[j].code) return false;
  }
  return true;
}

}  // namespace nvsentry::abi
