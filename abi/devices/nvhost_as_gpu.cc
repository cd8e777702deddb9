#include "abi/devices/nvhost_as_gpu.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nvhost_as_gpu {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, O = Dir::kOut, IO = Dir::kInOut, N = Dir::kNone;
constexpr Fmt H = Fmt::kHex;
constexpr NvError kOk = NvError::kSuccess;

constexpr Field kBindChannelF[] = {{"channel_fd", 0, kU32, 1, I}};
constexpr Field kAllocSpaceF[] = {{"pages", 0, kU32, 1, I},
                                  {"page_size", 4, kU32, 1, I, nullptr, false, H},
                                  {"flags", 8, kU32, 1, I, nullptr, false, H},
                                  {"padding", 12, kU32, 1, N},
                                  {"offset", 16, kU64, 1, O, nullptr, false, H},
                                  {"align", 16, kU64, 1, I, nullptr, true, H}};
constexpr Field kFreeSpaceF[] = {{"offset", 0, kU64, 1, I, nullptr, false, H},
                                 {"pages", 8, kU32, 1, I},
                                 {"page_size", 12, kU32, 1, I, nullptr, false, H}};
constexpr Field kMapBufferF[] = {
    {"flags", 0, kU32, 1, I, nullptr, false, H},   {"reserved0", 4, kU32, 1, N},
    {"mem_id", 8, kU32, 1, I, nullptr, false, H},  {"reserved1", 12, kU32, 1, N},
    {"offset", 16, kU64, 1, O, nullptr, false, H}, {"align", 16, kU64, 1, I, nullptr, true, H}};
constexpr Field kUnmapBufferF[] = {{"offset", 0, kU64, 1, I, nullptr, false, H}};
constexpr Field kMapBufferExF[] = {{"flags", 0, kU32, 1, I, nullptr, false, H},
                                   {"kind", 4, kS32, 1, IO},
                                   {"mem_id", 8, kU32, 1, I, nullptr, false, H},
                                   {"reserved", 12, kU32, 1, N},
                                   {"buffer_offset", 16, kU64, 1, I, nullptr, false, H},
                                   {"mapping_size", 24, kU64, 1, I, nullptr, false, H},
                                   {"offset", 32, kU64, 1, O, nullptr, false, H},
                                   {"align", 32, kU64, 1, I, nullptr, true, H}};
constexpr Field kAllocAsF[] = {{"big_page_size", 0, kU32, 1, I, nullptr, false, H},
                               {"as_fd", 4, kS32, 1, I},
                               {"reserved", 8, kU64, 1, I}};
constexpr Field kVaRegionF[] = {{"offset", 0, kU64, 1, O, nullptr, false, H},
                                {"page_size", 8, kU32, 1, O, nullptr, false, H},
                                {"reserved", 12, kU32, 1, N},
                                {"pages", 16, kU64, 1, O}};
constexpr StructDesc kVaRegion{"va_region", 24, kVaRegionF};
constexpr Field kGetVaRegionsF[] = {{"buf_addr", 0, kU64, 1, N, nullptr, false, H},
                                    {"buf_size", 8, kU32, 1, IO},
                                    {"reserved", 12, kU32, 1, N},
                                    {"regions", 16, kStruct, 2, O, &kVaRegion}};
// Through Ioctl3 the second output buffer receives regions as well.
constexpr ArrayDesc kGetVaRegionsA[] = {
    {"regions2", &kVaRegion, O, Buffer::kOut2, CountFrom::kRest, 0, 1024}};
// Clients' order: flags first, big_page_size at 8 (see AllocAsEx in the header).
constexpr Field kAllocAsExF[] = {{"flags", 0, kU32, 1, I, nullptr, false, H},
                                 {"as_fd", 4, kS32, 1, I},
                                 {"big_page_size", 8, kU32, 1, I, nullptr, false, H},
                                 {"reserved", 12, kU32, 1, I},
                                 {"va_range_start", 16, kU64, 1, I, nullptr, false, H},
                                 {"va_range_end", 24, kU64, 1, I, nullptr, false, H},
                                 {"va_range_split", 32, kU64, 1, I, nullptr, false, H}};
constexpr Field kMapBufferEx2F[] = {{"flags", 0, kU32, 1, I, nullptr, false, H},
                                    {"kind", 4, kS32, 1, IO},
                                    {"mem_id", 8, kU32, 1, I, nullptr, false, H},
                                    {"reserved0", 12, kU32, 1, N},
                                    {"buffer_offset", 16, kU64, 1, I, nullptr, false, H},
                                    {"mapping_size", 24, kU64, 1, I, nullptr, false, H},
                                    {"offset", 32, kU64, 1, O, nullptr, false, H},
                                    {"align", 32, kU64, 1, I, nullptr, true, H},
                                    {"vma_addr", 40, kU64, 1, I, nullptr, false, H},
                                    {"pages", 48, kU32, 1, I},
                                    {"reserved1", 52, kU32, 1, N}};
constexpr Field kRemapOpF[] = {
    {"flags", 0, kU16, 1, I, nullptr, false, H},      {"kind", 2, kU16, 1, I},
    {"mem_handle", 4, kU32, 1, I, nullptr, false, H}, {"mem_offset_in_pages", 8, kU32, 1, I},
    {"virt_offset_in_pages", 12, kU32, 1, I},         {"num_pages", 16, kU32, 1, I}};
constexpr StructDesc kRemapOp{"remap_op", 20, kRemapOpF};
constexpr ArrayDesc kRemapA[] = {
    {"entries", &kRemapOp, I, Buffer::kMain, CountFrom::kRest, 0, 65536}};

constexpr IoctlDesc kIoctls[] = {
    {kBindChannel,
     "NVGPU_AS_IOCTL_BIND_CHANNEL",
     kBindChannelF,
     0,
     {},
     0,
     {},
     kOk,
     "Binds a channel fd to this address space, for good."},
    {kAllocSpace,
     "NVGPU_AS_IOCTL_ALLOC_SPACE",
     kAllocSpaceF,
     0,
     {},
     0,
     {},
     kOk,
     "Reserves a range of pages in the address space; returns its GPU VA."},
    {kFreeSpace,
     "NVGPU_AS_IOCTL_FREE_SPACE",
     kFreeSpaceF,
     0,
     {},
     0,
     {},
     kOk,
     "Releases a reserved range of pages."},
    {kMapBuffer,
     "NVGPU_AS_IOCTL_MAP_BUFFER",
     kMapBufferF,
     0,
     {},
     0,
     {},
     kOk,
     "Maps an nvmap object into the address space; returns the GPU VA."},
    {kUnmapBuffer,
     "NVGPU_AS_IOCTL_UNMAP_BUFFER",
     kUnmapBufferF,
     0,
     {},
     0,
     {},
     kOk,
     "Removes the mapping at a GPU VA."},
    {kMapBufferEx,
     "NVGPU_AS_IOCTL_MAP_BUFFER_EX",
     kMapBufferExF,
     0,
     {},
     0,
     {},
     kOk,
     "Maps part of an nvmap object with a kind; returns the GPU VA.",
     {},
     {},
     "NVGPU_AS_IOCTL_MAP_BUFFER"},
    {kAllocAs,
     "NVGPU_AS_IOCTL_ALLOC_AS",
     kAllocAsF,
     0,
     {},
     0,
     {},
     kOk,
     "Creates the address space with a big page size (Switch-specific)."},
    {kGetVaRegions,
     "NVGPU_AS_IOCTL_GET_VA_REGIONS",
     kGetVaRegionsF,
     kPure | kUsesIoctl3,
     kGetVaRegionsA,
     0,
     {},
     kOk,
     "Reports the address space's VA regions (inline, or via Ioctl3)."},
    {kAllocAsEx,
     "NVGPU_AS_IOCTL_ALLOC_AS_EX",
     kAllocAsExF,
     0,
     {},
     0,
     {},
     kOk,
     "Creates the address space with a big page size and an explicit VA range.",
     {},
     {},
     "NVGPU_AS_IOCTL_ALLOC_AS"},
    {kMapBufferEx2,
     "NVGPU_AS_IOCTL_MAP_BUFFER_EX2",
     kMapBufferEx2F,
     0,
     {},
     0,
     {},
     kOk,
     "MAP_BUFFER_EX with a VMA address and page count.",
     {},
     {},
     "NVGPU_AS_IOCTL_MAP_BUFFER_EX"},
    {kRemap,
     "NVGPU_AS_IOCTL_REMAP",
     {},
     kVariable,
     kRemapA,
     0,
     {},
     kOk,
     "Points pages of reserved (sparse) ranges at nvmap memory, one op per entry."},
};
static_assert(TableIsSound(kIoctls), "nvhost-as-gpu layouts disagree with their codes");
static_assert(sizeof(BindChannel) == IocSize(kBindChannel));
static_assert(sizeof(AllocSpace) == IocSize(kAllocSpace));
static_assert(sizeof(FreeSpace) == IocSize(kFreeSpace));
static_assert(sizeof(MapBuffer) == IocSize(kMapBuffer));
static_assert(sizeof(UnmapBuffer) == IocSize(kUnmapBuffer));
static_assert(sizeof(MapBufferEx) == IocSize(kMapBufferEx));
static_assert(sizeof(AllocAs) == IocSize(kAllocAs));
static_assert(sizeof(GetVaRegions) == IocSize(kGetVaRegions));
static_assert(sizeof(AllocAsEx) == IocSize(kAllocAsEx));
static_assert(sizeof(MapBufferEx2) == IocSize(kMapBufferEx2));
static_assert(sizeof(VaRegion) == 24);
static_assert(sizeof(RemapOp) == 20);

NVS_CHECK_MEMBER(kBindChannelF, BindChannel, channel_fd);
NVS_CHECK_MEMBER(kAllocSpaceF, AllocSpace, pages);
NVS_CHECK_MEMBER(kAllocSpaceF, AllocSpace, page_size);
NVS_CHECK_MEMBER(kAllocSpaceF, AllocSpace, flags);
NVS_CHECK_MEMBER(kAllocSpaceF, AllocSpace, padding);
NVS_CHECK_MEMBER(kFreeSpaceF, FreeSpace, offset);
NVS_CHECK_MEMBER(kFreeSpaceF, FreeSpace, pages);
NVS_CHECK_MEMBER(kFreeSpaceF, FreeSpace, page_size);
NVS_CHECK_MEMBER(kMapBufferF, MapBuffer, flags);
NVS_CHECK_MEMBER(kMapBufferF, MapBuffer, reserved0);
NVS_CHECK_MEMBER(kMapBufferF, MapBuffer, mem_id);
NVS_CHECK_MEMBER(kMapBufferF, MapBuffer, reserved1);
NVS_CHECK_MEMBER(kUnmapBufferF, UnmapBuffer, offset);
NVS_CHECK_MEMBER(kMapBufferExF, MapBufferEx, flags);
NVS_CHECK_MEMBER(kMapBufferExF, MapBufferEx, kind);
NVS_CHECK_MEMBER(kMapBufferExF, MapBufferEx, mem_id);
NVS_CHECK_MEMBER(kMapBufferExF, MapBufferEx, reserved);
NVS_CHECK_MEMBER(kMapBufferExF, MapBufferEx, buffer_offset);
NVS_CHECK_MEMBER(kMapBufferExF, MapBufferEx, mapping_size);
NVS_CHECK_MEMBER(kAllocAsF, AllocAs, big_page_size);
NVS_CHECK_MEMBER(kAllocAsF, AllocAs, as_fd);
NVS_CHECK_MEMBER(kAllocAsF, AllocAs, reserved);
NVS_CHECK_MEMBER(kGetVaRegionsF, GetVaRegions, buf_addr);
NVS_CHECK_MEMBER(kGetVaRegionsF, GetVaRegions, buf_size);
NVS_CHECK_MEMBER(kGetVaRegionsF, GetVaRegions, reserved);
NVS_CHECK_MEMBER(kGetVaRegionsF, GetVaRegions, regions);
NVS_CHECK_MEMBER(kAllocAsExF, AllocAsEx, flags);
NVS_CHECK_MEMBER(kAllocAsExF, AllocAsEx, as_fd);
NVS_CHECK_MEMBER(kAllocAsExF, AllocAsEx, big_page_size);
NVS_CHECK_MEMBER(kAllocAsExF, AllocAsEx, reserved);
NVS_CHECK_MEMBER(kAllocAsExF, AllocAsEx, va_range_start);
NVS_CHECK_MEMBER(kAllocAsExF, AllocAsEx, va_range_end);
NVS_CHECK_MEMBER(kAllocAsExF, AllocAsEx, va_range_split);
NVS_CHECK_MEMBER(kMapBufferEx2F, MapBufferEx2, flags);
NVS_CHECK_MEMBER(kMapBufferEx2F, MapBufferEx2, kind);
NVS_CHECK_MEMBER(kMapBufferEx2F, MapBufferEx2, mem_id);
NVS_CHECK_MEMBER(kMapBufferEx2F, MapBufferEx2, reserved0);
NVS_CHECK_MEMBER(kMapBufferEx2F, MapBufferEx2, buffer_offset);
NVS_CHECK_MEMBER(kMapBufferEx2F, MapBufferEx2, mapping_size);
NVS_CHECK_MEMBER(kMapBufferEx2F, MapBufferEx2, vma_addr);
NVS_CHECK_MEMBER(kMapBufferEx2F, MapBufferEx2, pages);
NVS_CHECK_MEMBER(kMapBufferEx2F, MapBufferEx2, reserved1);

}  // namespace

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::nvhost_as_gpu
