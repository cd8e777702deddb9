#include "abi/l4t/nvmap.h"

#include <cstddef>

#include "abi/l4t/elements.h"
#include "abi/layout_check.h"

namespace nvsentry::abi::l4t::nvmap {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, O = Dir::kOut, IO = Dir::kInOut, N = Dir::kNone;
constexpr Fmt H = Fmt::kHex;

constexpr Field kCreateF[] = {{"size", 0, kU32, 1, I, nullptr, false, H},
                              {"handle", 4, kU32, 1, O, nullptr, false, H}};
// The u64 size64 as two words: the handle comes back over its low one.
constexpr Field kCreate64F[] = {{"size64_lo", 0, kU32, 1, I, nullptr, false, H},
                                {"handle64", 0, kU32, 1, O, nullptr, true, H},
                                {"size64_hi", 4, kU32, 1, I, nullptr, false, H}};
constexpr Field kFromFdF[] = {{"fd", 0, kS32, 1, I}, {"handle", 4, kU32, 1, O, nullptr, false, H}};
constexpr Field kGetFdF[] = {{"fd", 0, kS32, 1, O}, {"handle", 4, kU32, 1, I, nullptr, false, H}};
constexpr Field kFromIdF[] = {{"id", 0, kU32, 1, I, nullptr, false, H},
                              {"handle", 4, kU32, 1, O, nullptr, false, H}};
constexpr Field kGetIdF[] = {{"id", 0, kU32, 1, O, nullptr, false, H},
                             {"handle", 4, kU32, 1, I, nullptr, false, H}};
constexpr Field kAllocF[] = {{"handle", 0, kU32, 1, I, nullptr, false, H},
                             {"heap_mask", 4, kU32, 1, I, nullptr, false, H},
                             {"flags", 8, kU32, 1, I, nullptr, false, H},
                             {"align", 12, kU32, 1, I, nullptr, false, H}};
constexpr Field kRwF[] = {{"addr", 0, kU64, 1, I, nullptr, false, H},
                          {"handle", 8, kU32, 1, I, nullptr, false, H},
                          {"offset", 12, kU32, 1, I, nullptr, false, H},
                          {"elem_size", 16, kU32, 1, I},
                          {"hmem_stride", 20, kU32, 1, I},
                          {"user_stride", 24, kU32, 1, I},
                          {"count", 28, kU32, 1, I}};
constexpr UserPtrDesc kWriteP[] = {
    {"data", 0, &kByteElem, I, PtrCount::kStrided, 28, 1u << 24, false, 16, 24}};
constexpr UserPtrDesc kReadP[] = {
    {"data", 0, &kByteElem, O, PtrCount::kStrided, 28, 1u << 24, false, 16, 24}};
constexpr Field kParamF[] = {{"handle", 0, kU32, 1, I, nullptr, false, H},
                             {"param", 4, kU32, 1, I},
                             {"result", 8, kU64, 1, O, nullptr, false, H}};
constexpr Field kCacheF[] = {{"addr", 0, kU64, 1, I, nullptr, false, H},
                             {"handle", 8, kU32, 1, I, nullptr, false, H},
                             {"len", 12, kU32, 1, I, nullptr, false, H},
                             {"op", 16, kS32, 1, I},
                             {"padding", 20, kU32, 1, N}};
constexpr Field kTagF[] = {{"tag", 0, kU32, 1, I, nullptr, false, H},
                           {"len", 4, kU32, 1, I},
                           {"addr", 8, kU64, 1, I, nullptr, false, H}};
constexpr UserPtrDesc kTagP[] = {{"label", 8, &kCharElem, I, PtrCount::kBytes, 4, 4096, true}};
constexpr Field kParametersF[] = {{"contig", 0, kU8, 1, O},
                                  {"pad0", 1, kU8, 3, N},
                                  {"import_id", 4, kU32, 1, O, nullptr, false, H},
                                  {"handle", 8, kU32, 1, I, nullptr, false, H},
                                  {"heap_number", 12, kU32, 1, O},
                                  {"access_flags", 16, kU32, 1, O, nullptr, false, H},
                                  {"pad1", 20, kU32, 1, N},
                                  {"heap", 24, kU64, 1, O, nullptr, false, H},
                                  {"align", 32, kU64, 1, O, nullptr, false, H},
                                  {"coherency", 40, kU64, 1, O, nullptr, false, H},
                                  {"size", 48, kU64, 1, O, nullptr, false, H}};

constexpr IoctlDesc Row(uint32_t code, std::string_view name, std::span<const Field> fields,
                        uint32_t flags, std::string_view summary,
                        std::span<const UserPtrDesc> ptrs = {}) {
  return {code, name, fields, flags, {}, 0, {}, NvError::kSuccess, summary, {}, ptrs};
}

constexpr IoctlDesc kIoctls[] = {
    Row(kCreate, "NVMAP_IOC_CREATE", kCreateF, 0,
        "Creates a handle of `size` bytes (no memory yet); r32.7: the handle is a dma-buf fd."),
    Row(kCreate64, "NVMAP_IOC_CREATE_64", kCreate64F, 0,
        "CREATE with a 64-bit `size64`; the handle (an fd) comes back in the first 4 bytes."),
    Row(kFromId, "NVMAP_IOC_FROM_ID", kFromIdF, 0,
        "A handle for a global id; r32.7.4 answers ENOTTY (use GET_FD/FROM_FD)."),
    Row(kAlloc, "NVMAP_IOC_ALLOC", kAllocF, 0,
        "Allocates the handle's memory from `heap_mask` with cache `flags` and `align`."),
    Row(kFree, "NVMAP_IOC_FREE", {}, kArgIsValue,
        "Drops a handle: the ioctl's argument is the handle itself (r32.7: closes that fd)."),
    Row(kWrite, "NVMAP_IOC_WRITE", kRwF, 0,
        "Copies strided atoms from the caller's memory at `addr` into the object.", kWriteP),
    Row(kRead, "NVMAP_IOC_READ", kRwF, 0,
        "Copies strided atoms from the object to the caller's memory at `addr`.", kReadP),
    Row(kParam, "NVMAP_IOC_PARAM", kParamF, kPure,
        "One property of a handle; r32.7.4 does not dispatch it (ENOTTY): see PARAMETERS."),
    Row(kCache, "NVMAP_IOC_CACHE", kCacheF, 0,
        "Cache maintenance on the caller's CPU mapping of the object at `addr`."),
    Row(kGetId, "NVMAP_IOC_GET_ID", kGetIdF, kPure,
        "The global id of a handle; r32.7.4 answers ENOTTY (use GET_FD)."),
    Row(kGetFd, "NVMAP_IOC_GET_FD", kGetFdF, 0,
        "A new dma-buf fd for a handle, to pass to another process."),
    Row(kFromFd, "NVMAP_IOC_FROM_FD", kFromFdF, 0, "A handle for a dma-buf fd."),
    Row(kSetTagLabel, "NVMAP_IOC_SET_TAG_LABEL", kTagF, 0,
        "Names an allocation tag with the `len` bytes at `addr` (null removes it).", kTagP),
    Row(kParameters, "NVMAP_IOC_PARAMETERS", kParametersF, kPure,
        "Heap, size, alignment, coherency and contiguity of `handle`, all at once."),
};
static_assert(TableIsSound(kIoctls), "L4T nvmap layouts disagree with their codes");
static_assert(sizeof(CreateHandle) == 8 && sizeof(CreateHandle) == IocSize(kCreate));
static_assert(sizeof(AllocHandle) == IocSize(kAlloc));
static_assert(sizeof(RwHandle) == IocSize(kRead) && sizeof(RwHandle) == IocSize(kWrite));
static_assert(sizeof(HandleParam) == IocSize(kParam));
static_assert(sizeof(CacheOp) == IocSize(kCache));
static_assert(sizeof(SetTagLabel) == IocSize(kSetTagLabel));
static_assert(sizeof(HandleParameters) == IocSize(kParameters));

NVS_CHECK_MEMBER(kCreateF, CreateHandle, size);
NVS_CHECK_MEMBER(kCreateF, CreateHandle, handle);
NVS_CHECK_MEMBER(kFromFdF, CreateHandle, fd);
NVS_CHECK_MEMBER(kFromIdF, CreateHandle, id);
NVS_CHECK_MEMBER(kAllocF, AllocHandle, handle);
NVS_CHECK_MEMBER(kAllocF, AllocHandle, heap_mask);
NVS_CHECK_MEMBER(kAllocF, AllocHandle, flags);
NVS_CHECK_MEMBER(kAllocF, AllocHandle, align);
NVS_CHECK_MEMBER(kRwF, RwHandle, addr);
NVS_CHECK_MEMBER(kRwF, RwHandle, handle);
NVS_CHECK_MEMBER(kRwF, RwHandle, offset);
NVS_CHECK_MEMBER(kRwF, RwHandle, elem_size);
NVS_CHECK_MEMBER(kRwF, RwHandle, hmem_stride);
NVS_CHECK_MEMBER(kRwF, RwHandle, user_stride);
NVS_CHECK_MEMBER(kRwF, RwHandle, count);
NVS_CHECK_MEMBER(kParamF, HandleParam, handle);
NVS_CHECK_MEMBER(kParamF, HandleParam, param);
NVS_CHECK_MEMBER(kParamF, HandleParam, result);
NVS_CHECK_MEMBER(kCacheF, CacheOp, addr);
NVS_CHECK_MEMBER(kCacheF, CacheOp, handle);
NVS_CHECK_MEMBER(kCacheF, CacheOp, len);
NVS_CHECK_MEMBER(kCacheF, CacheOp, op);
NVS_CHECK_MEMBER(kTagF, SetTagLabel, tag);
NVS_CHECK_MEMBER(kTagF, SetTagLabel, len);
NVS_CHECK_MEMBER(kTagF, SetTagLabel, addr);
NVS_CHECK_MEMBER(kParametersF, HandleParameters, contig);
NVS_CHECK_MEMBER(kParametersF, HandleParameters, import_id);
NVS_CHECK_MEMBER(kParametersF, HandleParameters, handle);
NVS_CHECK_MEMBER(kParametersF, HandleParameters, heap_number);
NVS_CHECK_MEMBER(kParametersF, HandleParameters, access_flags);
NVS_CHECK_MEMBER(kParametersF, HandleParameters, heap);
NVS_CHECK_MEMBER(kParametersF, HandleParameters, align);
NVS_CHECK_MEMBER(kParametersF, HandleParameters, coherency);
NVS_CHECK_MEMBER(kParametersF, HandleParameters, size);

}  // namespace

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::l4t::nvmap
