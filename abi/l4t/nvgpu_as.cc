#include "abi/l4t/nvgpu_as.h"

#include <cstddef>

#include "abi/layout_check.h"

namespace nvsentry::abi::l4t::nvgpu_as {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, O = Dir::kOut, IO = Dir::kInOut, N = Dir::kNone;
constexpr Fmt H = Fmt::kHex;

constexpr Field kBindF[] = {{"channel_fd", 0, kU32, 1, I}};
constexpr Field kAllocSpaceF[] = {{"pages", 0, kU32, 1, I},
                                  {"page_size", 4, kU32, 1, I, nullptr, false, H},
                                  {"flags", 8, kU32, 1, I, nullptr, false, H},
                                  {"padding", 12, kU32, 1, N},
                                  {"offset", 16, kU64, 1, IO, nullptr, false, H},
                                  {"align", 16, kU64, 1, I, nullptr, true, H}};
constexpr Field kFreeSpaceF[] = {{"offset", 0, kU64, 1, I, nullptr, false, H},
                                 {"pages", 8, kU32, 1, I},
                                 {"page_size", 12, kU32, 1, I, nullptr, false, H}};
constexpr Field kUnmapF[] = {{"offset", 0, kU64, 1, I, nullptr, false, H}};
constexpr StructDesc kUnmap{"unmap_buffer", 8, kUnmapF};
constexpr Field kMapExF[] = {{"flags", 0, kU32, 1, IO, nullptr, false, H},
                             {"compr_kind", 4, kS16, 1, I},
                             {"incompr_kind", 6, kS16, 1, I},
                             {"dmabuf_fd", 8, kU32, 1, I},
                             {"page_size", 12, kU32, 1, IO, nullptr, false, H},
                             {"buffer_offset", 16, kU64, 1, I, nullptr, false, H},
                             {"mapping_size", 24, kU64, 1, I, nullptr, false, H},
                             {"offset", 32, kU64, 1, IO, nullptr, false, H}};
constexpr StructDesc kMapEx{"map_buffer_ex", 40, kMapExF};
constexpr Field kVaRegionF[] = {{"offset", 0, kU64, 1, O, nullptr, false, H},
                                {"page_size", 8, kU32, 1, O, nullptr, false, H},
                                {"reserved", 12, kU32, 1, N},
                                {"pages", 16, kU64, 1, O}};
constexpr StructDesc kVaRegion{"va_region", 24, kVaRegionF};
constexpr Field kGetVaRegionsF[] = {{"buf_addr", 0, kU64, 1, I, nullptr, false, H},
                                    {"buf_size", 8, kU32, 1, IO},
                                    {"reserved", 12, kU32, 1, N}};
// One region per GMMU page size the address space uses: at most small, big and kernel.
constexpr UserPtrDesc kGetVaRegionsP[] = {{"regions", 0, &kVaRegion, O, PtrCount::kBytes, 8, 3}};
constexpr Field kBatchF[] = {{"unmaps", 0, kU64, 1, I, nullptr, false, H},
                             {"maps", 8, kU64, 1, I, nullptr, false, H},
                             {"num_unmaps", 16, kU32, 1, IO},
                             {"num_maps", 20, kU32, 1, IO},
                             {"reserved", 24, kU64, 1, N}};
constexpr UserPtrDesc kBatchP[] = {{"unmaps", 0, &kUnmap, I, PtrCount::kElements, 16, 65536, true},
                                   {"maps", 8, &kMapEx, IO, PtrCount::kElements, 20, 65536, true}};

constexpr IoctlDesc Row(uint32_t code, std::string_view name, std::span<const Field> fields,
                        uint32_t flags, std::string_view summary,
                        std::span<const UserPtrDesc> ptrs = {}) {
  return {code, name, fields, flags, {}, 0, {}, NvError::kSuccess, summary, {}, ptrs};
}

constexpr IoctlDesc kIoctls[] = {
    Row(kBindChannel, "NVGPU_AS_IOCTL_BIND_CHANNEL", kBindF, 0,
        "Binds a channel fd to this address space, for good."),
    Row(kAllocSpace32, "NVGPU32_AS_IOCTL_ALLOC_SPACE", kAllocSpaceF, 0,
        "ALLOC_SPACE under its 32-bit code (same LP64 layout)."),
    Row(kFreeSpace, "NVGPU_AS_IOCTL_FREE_SPACE", kFreeSpaceF, 0,
        "Releases the reserved range at `offset`."),
    Row(kUnmapBuffer, "NVGPU_AS_IOCTL_UNMAP_BUFFER", kUnmapF, 0,
        "Removes the mapping at `offset`."),
    Row(kAllocSpace, "NVGPU_AS_IOCTL_ALLOC_SPACE", kAllocSpaceF, 0,
        "Reserves `pages` pages (fixed or aligned, sparse or not); returns the offset."),
    Row(kMapBufferEx, "NVGPU_AS_IOCTL_MAP_BUFFER_EX", kMapExF, 0,
        "Maps (part of) a dma-buf with direct kind control; returns the GPU VA."),
    Row(kGetVaRegions, "NVGPU_AS_IOCTL_GET_VA_REGIONS", kGetVaRegionsF, kPure,
        "Writes the VA regions at buf_addr (as many as buf_size holds); returns the full size.",
        kGetVaRegionsP),
    Row(kMapBufferBatch, "NVGPU_AS_IOCTL_MAP_BUFFER_BATCH", kBatchF, 0,
        "Unmaps then maps arrays of buffers; on error returns how many of each succeeded.",
        kBatchP),
};
static_assert(TableIsSound(kIoctls), "L4T nvhost-as-gpu layouts disagree with their codes");
static_assert(sizeof(BindChannel) == IocSize(kBindChannel));
static_assert(sizeof(AllocSpace) == IocSize(kAllocSpace) &&
              sizeof(AllocSpace) == IocSize(kAllocSpace32));
static_assert(sizeof(FreeSpace) == IocSize(kFreeSpace));
static_assert(sizeof(UnmapBuffer) == IocSize(kUnmapBuffer));
static_assert(sizeof(MapBufferEx) == IocSize(kMapBufferEx));
static_assert(sizeof(VaRegion) == 24);
static_assert(sizeof(GetVaRegions) == IocSize(kGetVaRegions));
static_assert(sizeof(MapBufferBatch) == IocSize(kMapBufferBatch));

NVS_CHECK_MEMBER(kAllocSpaceF, AllocSpace, page_size);
NVS_CHECK_MEMBER(kAllocSpaceF, AllocSpace, flags);
NVS_CHECK_MEMBER(kAllocSpaceF, AllocSpace, padding);
NVS_CHECK_MEMBER(kFreeSpaceF, FreeSpace, pages);
NVS_CHECK_MEMBER(kFreeSpaceF, FreeSpace, page_size);
NVS_CHECK_MEMBER(kMapExF, MapBufferEx, flags);
NVS_CHECK_MEMBER(kMapExF, MapBufferEx, compr_kind);
NVS_CHECK_MEMBER(kMapExF, MapBufferEx, incompr_kind);
NVS_CHECK_MEMBER(kMapExF, MapBufferEx, dmabuf_fd);
NVS_CHECK_MEMBER(kMapExF, MapBufferEx, page_size);
NVS_CHECK_MEMBER(kMapExF, MapBufferEx, buffer_offset);
NVS_CHECK_MEMBER(kMapExF, MapBufferEx, mapping_size);
NVS_CHECK_MEMBER(kMapExF, MapBufferEx, offset);
NVS_CHECK_MEMBER(kVaRegionF, VaRegion, page_size);
NVS_CHECK_MEMBER(kVaRegionF, VaRegion, pages);
NVS_CHECK_MEMBER(kGetVaRegionsF, GetVaRegions, buf_addr);
NVS_CHECK_MEMBER(kGetVaRegionsF, GetVaRegions, buf_size);
NVS_CHECK_MEMBER(kBatchF, MapBufferBatch, maps);
NVS_CHECK_MEMBER(kBatchF, MapBufferBatch, num_unmaps);
NVS_CHECK_MEMBER(kBatchF, MapBufferBatch, num_maps);
NVS_CHECK_MEMBER(kBatchF, MapBufferBatch, reserved);

}  // namespace

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::l4t::nvgpu_as
