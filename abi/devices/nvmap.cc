#include "abi/devices/nvmap.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nvmap {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, O = Dir::kOut, IO = Dir::kInOut, N = Dir::kNone;
constexpr Fmt H = Fmt::kHex;
constexpr NvError kNs = NvError::kNotSupported;

constexpr Field kCreateF[] = {{"size", 0, kU32, 1, I, nullptr, false, H},
                              {"handle", 4, kU32, 1, O, nullptr, false, H}};
constexpr Field kFromIdF[] = {{"id", 0, kU32, 1, I, nullptr, false, H},
                              {"handle", 4, kU32, 1, O, nullptr, false, H}};
constexpr Field kAllocF[] = {{"handle", 0, kU32, 1, I, nullptr, false, H},
                             {"heapmask", 4, kU32, 1, I, nullptr, false, H},
                             {"flags", 8, kU32, 1, I, nullptr, false, H},
                             {"align", 12, kU32, 1, IO, nullptr, false, H},
                             {"kind", 16, kU8, 1, I, nullptr, false, H},
                             {"pad", 17, kU8, 7, N},
                             {"addr", 24, kU64, 1, I}};
constexpr Field kFreeF[] = {{"handle", 0, kU32, 1, I, nullptr, false, H},
                            {"pad", 4, kU32, 1, N},
                            {"address", 8, kU64, 1, O},
                            {"size", 16, kU32, 1, O, nullptr, false, H},
                            {"flags", 20, kU32, 1, O, nullptr, false, H}};
constexpr Field kParamF[] = {{"handle", 0, kU32, 1, I, nullptr, false, H},
                             {"param", 4, kU32, 1, I},
                             {"result", 8, kU32, 1, O, nullptr, false, H}};
constexpr Field kGetIdF[] = {{"id", 0, kU32, 1, O, nullptr, false, H},
                             {"handle", 4, kU32, 1, I, nullptr, false, H}};
constexpr Field kAruidF[] = {
    {"aruid", 0, kU64, 1, I}, {"handle", 8, kU32, 1, I, nullptr, false, H}, {"pad", 12, kU8, 4, N}};
// Layouts Switchbrew does not give (every one of them answers NotSupported).
constexpr Field kOpaque40[] = {{"data", 0, kU8, 40, IO}};
constexpr Field kOpaque16[] = {{"data", 0, kU8, 16, IO}};
constexpr Field kOpaque8[] = {{"data", 0, kU8, 8, IO}};
constexpr Field kOpaque4[] = {{"data", 0, kU8, 4, IO}};
constexpr Field kOpaqueIn4[] = {{"data", 0, kU8, 4, I}};

constexpr uint32_t kNsFlags = kFixedAnswer | kOpaque;

constexpr IoctlDesc kIoctls[] = {
    {kCreate,
     "NVMAP_IOC_CREATE",
     kCreateF,
     0,
     {},
     0,
     {},
     NvError::kSuccess,
     "Creates an nvmap object of `size` bytes (no memory yet); returns its handle."},
    {kClaim, "NVMAP_IOC_CLAIM", {}, kFixedAnswer, {}, 0, {}, kNs, "Answers NotSupported."},
    {kFromId,
     "NVMAP_IOC_FROM_ID",
     kFromIdF,
     0,
     {},
     0,
     {},
     NvError::kSuccess,
     "Returns a new handle to the object with global id `id`."},
    {kAlloc,
     "NVMAP_IOC_ALLOC",
     kAllocF,
     0,
     {},
     0,
     {},
     NvError::kSuccess,
     "Backs an object with guest memory at `addr`, pinning it; align is rounded up and returned."},
    {kFree,
     "NVMAP_IOC_FREE",
     kFreeF,
     0,
     {},
     0,
     {},
     NvError::kSuccess,
     "Drops a handle; on the last reference returns the memory's address, size and flags."},
    {kMmap, "NVMAP_IOC_MMAP", kOpaque40, kNsFlags, {}, 0, {}, kNs, "Answers NotSupported."},
    {kWrite, "NVMAP_IOC_WRITE", kOpaque40, kNsFlags, {}, 0, {}, kNs, "Answers NotSupported."},
    {kRead, "NVMAP_IOC_READ", kOpaque40, kNsFlags, {}, 0, {}, kNs, "Answers NotSupported."},
    {kParam,
     "NVMAP_IOC_PARAM",
     kParamF,
     kPure,
     {},
     0,
     {},
     NvError::kSuccess,
     "Reads one property of an object: 1 size, 2 alignment, 3 base (error), 4 heap, 5 kind, 6 "
     "compr."},
    {kPinMult, "NVMAP_IOC_PIN_MULT", kOpaque16, kNsFlags, {}, 0, {}, kNs, "Answers NotSupported."},
    {kUnpinMult,
     "NVMAP_IOC_UNPIN_MULT",
     kOpaque16,
     kNsFlags,
     {},
     0,
     {},
     kNs,
     "Answers NotSupported."},
    {kCache, "NVMAP_IOC_CACHE", kOpaque8, kNsFlags, {}, 0, {}, kNs, "Answers NotSupported."},
    {kGetIvcId,
     "NVMAP_IOC_GET_IVC_ID",
     kOpaque4,
     kNsFlags,
     {},
     0,
     {},
     kNs,
     "Answers NotSupported."},
    {kGetId,
     "NVMAP_IOC_GET_ID",
     kGetIdF,
     kPure,
     {},
     0,
     {},
     NvError::kSuccess,
     "Returns the global id of the object behind `handle` (for FROM_ID in another process)."},
    {kFromIvcId,
     "NVMAP_IOC_FROM_IVC_ID",
     kOpaque4,
     kNsFlags,
     {},
     0,
     {},
     kNs,
     "Answers NotSupported."},
    {kSetAllocationTagLabel,
     "NVMAP_IOC_SET_ALLOCATION_TAG_LABEL",
     kOpaqueIn4,
     kNsFlags,
     {},
     0,
     {},
     kNs,
     "Answers NotSupported."},
    {kReserve, "NVMAP_IOC_RESERVE", {}, kFixedAnswer, {}, 0, {}, kNs, "Answers NotSupported."},
    {kExportForAruid,
     "NVMAP_IOC_EXPORT_FOR_ARUID",
     kAruidF,
     0,
     {},
     0,
     {},
     NvError::kSuccess,
     "Binds an object to an applet resource user id."},
    {kIsOwnedByAruid,
     "NVMAP_IOC_IS_OWNED_BY_ARUID",
     kAruidF,
     kPure,
     {},
     0,
     {},
     NvError::kSuccess,
     "Checks whether an object is bound to an applet resource user id (the answer is the result)."},
    {kRemoveExportForAruid,
     "NVMAP_IOC_REMOVE_EXPORT_FOR_ARUID",
     kAruidF,
     0,
     {},
     0,
     {},
     NvError::kSuccess,
     "Unbinds an object from an applet resource user id."},
};
static_assert(TableIsSound(kIoctls), "nvmap layouts disagree with their codes");
static_assert(sizeof(Create) == IocSize(kCreate));
static_assert(sizeof(FromId) == IocSize(kFromId));
static_assert(sizeof(Alloc) == IocSize(kAlloc));
static_assert(sizeof(Free) == IocSize(kFree));
static_assert(sizeof(ParamArgs) == IocSize(kParam));
static_assert(sizeof(GetId) == IocSize(kGetId));
static_assert(sizeof(Aruid) == IocSize(kExportForAruid));

NVS_CHECK_MEMBER(kCreateF, Create, size);
NVS_CHECK_MEMBER(kCreateF, Create, handle);
NVS_CHECK_MEMBER(kFromIdF, FromId, id);
NVS_CHECK_MEMBER(kFromIdF, FromId, handle);
NVS_CHECK_MEMBER(kAllocF, Alloc, handle);
NVS_CHECK_MEMBER(kAllocF, Alloc, heapmask);
NVS_CHECK_MEMBER(kAllocF, Alloc, flags);
NVS_CHECK_MEMBER(kAllocF, Alloc, align);
NVS_CHECK_MEMBER(kAllocF, Alloc, kind);
NVS_CHECK_MEMBER(kAllocF, Alloc, pad);
NVS_CHECK_MEMBER(kAllocF, Alloc, addr);
NVS_CHECK_MEMBER(kFreeF, Free, handle);
NVS_CHECK_MEMBER(kFreeF, Free, pad);
NVS_CHECK_MEMBER(kFreeF, Free, address);
NVS_CHECK_MEMBER(kFreeF, Free, size);
NVS_CHECK_MEMBER(kFreeF, Free, flags);
NVS_CHECK_MEMBER(kParamF, ParamArgs, handle);
NVS_CHECK_MEMBER(kParamF, ParamArgs, param);
NVS_CHECK_MEMBER(kParamF, ParamArgs, result);
NVS_CHECK_MEMBER(kGetIdF, GetId, id);
NVS_CHECK_MEMBER(kGetIdF, GetId, handle);
NVS_CHECK_MEMBER(kAruidF, Aruid, aruid);
NVS_CHECK_MEMBER(kAruidF, Aruid, handle);
NVS_CHECK_MEMBER(kAruidF, Aruid, pad);

}  // namespace

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::nvmap
