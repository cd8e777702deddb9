// Compile-time checks of an ioctl table: every field lies inside its struct, fields do not overlap
// (except union members marked `alt`), the fixed part ends exactly at the size the code encodes
// (or at the header size of a variable ioctl), arrays name a real u32 count field, aliases differ
// from their code in the direction bits only, and no two entries (aliases included) answer the
// same code on the same firmware. Use in a static_assert next to each table.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "abi/catalogue.h"

namespace nvsentry::abi {

constexpr bool FieldsFit(std::span<const Field> fields, uint32_t size) {
  uint32_t end = 0;
  const Field* prev = nullptr;
  for (const Field& f : fields) {
    if (f.count == 0 || f.elem_size() == 0) return false;
    if (f.alt) {
      if (prev == nullptr || f.offset != prev->offset || f.extent() != prev->extent()) return false;
    } else if (f.offset < end) {
      return false;  // overlapping or out of order
    }
    if (f.type == FieldType::kStruct && !FieldsFit(f.sub->fields, f.sub->size)) return false;
    end = f.extent();
    prev = &f;
  }
  return end <= size && (fields.empty() ? size == 0 : end == size);
}

constexpr bool HasU32At(std::span<const Field> fields, uint32_t offset) {
  for (const Field& f : fields)
    if (f.offset == offset && f.type == FieldType::kU32 && f.count == 1 && DirHasIn(f.dir))
      return true;
  return false;
}

constexpr bool ArraysSound(const IoctlDesc& d) {
  bool in2 = false, out2 = false;
  for (const ArrayDesc& a : d.arrays) {
    if (a.elem == nullptr || a.elem->size == 0 || !FieldsFit(a.elem->fields, a.elem->size))
      return false;
    if (a.max_count == 0) return false;
    if (a.count_from == CountFrom::kField && !HasU32At(d.fields, a.count)) return false;
    if (a.buffer == Buffer::kMain && !d.variable()) return false;
    in2 |= a.buffer == Buffer::kIn2;
    out2 |= a.buffer == Buffer::kOut2;
  }
  if (in2 != ((d.flags & kUsesIoctl2) != 0) || out2 != ((d.flags & kUsesIoctl3) != 0)) return false;
  return true;
}

constexpr const Field* FieldAtOffset(std::span<const Field> fields, uint32_t offset) {
  for (const Field& f : fields)
    if (f.offset == offset && !f.alt) return &f;
  return nullptr;
}

// Each user pointer is a u64 field the caller writes; its count (when it has one) is a u32 or
// u64 field; strided ones name u32 size and stride fields; its element layout is sound.
constexpr bool UserPtrsSound(const IoctlDesc& d) {
  for (const UserPtrDesc& p : d.user_ptrs) {
    if (p.elem == nullptr || p.elem->size == 0 || !FieldsFit(p.elem->fields, p.elem->size))
      return false;
    if (p.max_count == 0) return false;
    const Field* ptr = FieldAtOffset(d.fields, p.ptr);
    if (ptr == nullptr || ptr->type != FieldType::kU64 || ptr->count != 1 || !DirHasIn(ptr->dir))
      return false;
    if (p.count_from == PtrCount::kImplied) continue;
    const Field* n = FieldAtOffset(d.fields, p.count);
    if (n == nullptr || n->count != 1 || !DirHasIn(n->dir) ||
        (n->type != FieldType::kU32 && n->type != FieldType::kU64))
      return false;
    if (p.count_from == PtrCount::kStrided &&
        (!HasU32At(d.fields, p.elem_size_at) || !HasU32At(d.fields, p.stride_at)))
      return false;
  }
  return true;
}

// An alias differs from its entry's code in the direction bits only (a fixed-size ioctl).
constexpr bool AliasesSound(const IoctlDesc& d) {
  for (const CodeAlias& a : d.aliases)
    if (d.variable() || a.code == d.code || (a.code & ~kIocDirMask) != (d.code & ~kIocDirMask))
      return false;
  return true;
}

constexpr bool IoctlIsSound(const IoctlDesc& d) {
  if (!AliasesSound(d)) return false;
  if (d.variable() && (d.code & kIocSizeMask) != 0) return false;
  if (!d.variable() && d.header_size != 0) return false;
  if (!FieldsFit(d.fields, d.fixed_size())) return false;
  if ((d.flags & kFixedAnswer) != 0 && d.answer == NvError::kSuccess && !d.fields.empty() &&
      DirHasOut(d.dir()))
    return false;  // a fixed success answer would return whatever the guest passed in
  if ((d.flags & kArgIsValue) != 0 && (!d.fields.empty() || d.size() != 0)) return false;
  return ArraysSound(d) && UserPtrsSound(d);
}

constexpr bool TableIsSound(std::span<const IoctlDesc> table) {
  for (size_t i = 0; i < table.size(); ++i) {
    if (!IoctlIsSound(table[i])) return false;
    for (size_t j = i + 1; j < table.size(); ++j) {
      const IoctlDesc& a = table[i];
      const IoctlDesc& b = table[j];
      bool same_code = a.variable() || b.variable()
                           ? (a.code & ~kIocSizeMask) == (b.code & ~kIocSizeMask)
                           : a.code == b.code;
      if (same_code && a.fw.Overlaps(b.fw)) return false;
      for (const CodeAlias& x : a.aliases)
        if (b.Matches(x.code) && a.fw.Overlaps(b.fw)) return false;
      for (const CodeAlias& x : b.aliases)
        if (a.Matches(x.code) && a.fw.Overlaps(b.fw)) return false;
    }
  }
  return true;
}

// The field table `fields` has a field `name` at `offset`: ties a C++ argument struct, member by
// member, to the layout the catalogue copies and checks (NVS_CHECK_MEMBER below).
constexpr bool FieldAt(std::span<const Field> fields, std::string_view name, size_t offset) {
  for (const Field& f : fields)
    if (f.name == name) return f.offset == offset;
  return false;
}

}  // namespace nvsentry::abi

// Beside a table: the C++ struct's `member` lies where the field table `fields` puts the field of
// that name.
#define NVS_CHECK_MEMBER(fields, Struct, member)                                     \
  static_assert(::nvsentry::abi::FieldAt(fields, #member, offsetof(Struct, member)), \
                #Struct "::" #member " is not where the catalogue's field table puts it")
