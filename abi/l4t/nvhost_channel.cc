#include "abi/l4t/nvhost_channel.h"

#include <cstddef>

#include "abi/l4t/elements.h"
#include "abi/layout_check.h"

namespace nvsentry::abi::l4t::nvhost_channel {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, O = Dir::kOut, IO = Dir::kInOut, N = Dir::kNone;
constexpr Fmt H = Fmt::kHex;

constexpr Field kParamF[] = {{"param", 0, kU32, 1, I}, {"value", 4, kU32, 1, O}};
constexpr Field kGetClkF[] = {{"rate", 0, kU32, 1, O},
                              {"moduleid", 4, kU32, 1, I, nullptr, false, H}};
constexpr Field kSetClkF[] = {{"rate", 0, kU32, 1, I},
                              {"moduleid", 4, kU32, 1, I, nullptr, false, H}};
constexpr Field kFdF[] = {{"fd", 0, kU32, 1, I}};
constexpr Field kTimeoutF[] = {{"timeout", 0, kU32, 1, I}};
constexpr Field kPriorityF[] = {{"priority", 0, kU32, 1, I}};
constexpr Field kTimeoutExF[] = {{"timeout", 0, kU32, 1, I},
                                 {"flags", 4, kU32, 1, I, nullptr, false, H}};

constexpr Field kCmdbufF[] = {
    {"mem", 0, kU32, 1, I}, {"offset", 4, kU32, 1, I, nullptr, false, H}, {"words", 8, kU32, 1, I}};
constexpr StructDesc kCmdbuf{"cmdbuf", 12, kCmdbufF};
constexpr Field kCmdbufExtF[] = {{"pre_fence", 0, kS32, 1, I}, {"reserved", 4, kU32, 1, N}};
constexpr StructDesc kCmdbufExt{"cmdbuf_ext", 8, kCmdbufExtF};
constexpr Field kRelocF[] = {{"cmdbuf_mem", 0, kU32, 1, I},
                             {"cmdbuf_offset", 4, kU32, 1, I, nullptr, false, H},
                             {"target", 8, kU32, 1, I},
                             {"target_offset", 12, kU32, 1, I, nullptr, false, H}};
constexpr StructDesc kReloc{"reloc", 16, kRelocF};
constexpr Field kRelocTypeF[] = {{"reloc_type", 0, kU32, 1, I}, {"padding", 4, kU32, 1, N}};
constexpr StructDesc kRelocType{"reloc_type", 8, kRelocTypeF};
constexpr Field kWaitchkF[] = {{"mem", 0, kU32, 1, I},
                               {"offset", 4, kU32, 1, I, nullptr, false, H},
                               {"syncpt_id", 8, kU32, 1, I},
                               {"thresh", 12, kU32, 1, I}};
constexpr StructDesc kWaitchk{"waitchk", 16, kWaitchkF};
constexpr Field kIncrF[] = {{"syncpt_id", 0, kU32, 1, I}, {"syncpt_incrs", 4, kU32, 1, I}};
constexpr StructDesc kIncr{"syncpt_incr", 8, kIncrF};
constexpr Field kSubmitF[] = {{"submit_version", 0, kU32, 1, I},
                              {"num_syncpt_incrs", 4, kU32, 1, I},
                              {"num_cmdbufs", 8, kU32, 1, I},
                              {"num_relocs", 12, kU32, 1, I},
                              {"num_waitchks", 16, kU32, 1, I},
                              {"timeout", 20, kU32, 1, I},
                              {"flags", 24, kU32, 1, I, nullptr, false, H},
                              {"fence", 28, kU32, 1, O},
                              {"syncpt_incrs", 32, kU64, 1, I, nullptr, false, H},
                              {"cmdbuf_exts", 40, kU64, 1, I, nullptr, false, H},
                              {"checksum_methods", 48, kU32, 1, I},
                              {"checksum_falcon_methods", 52, kU32, 1, I},
                              {"pad", 56, kU64, 1, N},
                              {"reloc_types", 64, kU64, 1, I, nullptr, false, H},
                              {"cmdbufs", 72, kU64, 1, I, nullptr, false, H},
                              {"relocs", 80, kU64, 1, I, nullptr, false, H},
                              {"reloc_shifts", 88, kU64, 1, I, nullptr, false, H},
                              {"waitchks", 96, kU64, 1, I, nullptr, false, H},
                              {"waitbases", 104, kU64, 1, N, nullptr, false, H},
                              {"class_ids", 112, kU64, 1, I, nullptr, false, H},
                              {"fences", 120, kU64, 1, I, nullptr, false, H}};
// r32.7.4 (bus_client.c) reads each of these when the pointer is set; NVHOST_SUBMIT_MAX_NUM_
// SYNCPT_INCRS (10) bounds the increments.
constexpr UserPtrDesc kSubmitP[] = {
    {"syncpt_incrs", 32, &kIncr, I, PtrCount::kElements, 4, 10},
    {"cmdbuf_exts", 40, &kCmdbufExt, I, PtrCount::kElements, 8, 1024, true},
    {"reloc_types", 64, &kRelocType, I, PtrCount::kElements, 12, 4096, true},
    {"cmdbufs", 72, &kCmdbuf, I, PtrCount::kElements, 8, 1024},
    {"relocs", 80, &kReloc, I, PtrCount::kElements, 12, 4096},
    {"reloc_shifts", 88, &kU32Elem, I, PtrCount::kElements, 12, 4096},
    {"waitchks", 96, &kWaitchk, I, PtrCount::kElements, 16, 256},
    {"class_ids", 112, &kU32Elem, I, PtrCount::kElements, 8, 1024, true},
    {"fences", 120, &kU32Elem, O, PtrCount::kElements, 4, 10}};
constexpr Field kBufferF[] = {{"dmabuf_fd", 0, kU32, 1, I},
                              {"reserved0", 4, kU32, 1, N},
                              {"reserved1", 8, kU64, 2, N},
                              {"address", 24, kU64, 1, O, nullptr, false, H}};
constexpr StructDesc kBuffer{"channel_buffer", 32, kBufferF};
constexpr Field kMapBufferF[] = {{"num_buffers", 0, kU32, 1, I},
                                 {"reserved", 4, kU32, 1, N},
                                 {"table_address", 8, kU64, 1, I, nullptr, false, H}};
constexpr UserPtrDesc kMapP[] = {{"buffers", 8, &kBuffer, IO, PtrCount::kElements, 0, 4096}};
constexpr UserPtrDesc kUnmapP[] = {{"buffers", 8, &kBuffer, I, PtrCount::kElements, 0, 4096}};

constexpr IoctlDesc Row(uint32_t code, std::string_view name, std::span<const Field> fields,
                        uint32_t flags, std::string_view summary,
                        std::span<const UserPtrDesc> ptrs = {}) {
  return {code, name, fields, flags, {}, 0, {}, NvError::kSuccess, summary, {}, ptrs};
}

constexpr IoctlDesc kIoctls[] = {
    Row(kSetNvmapFd, "NVHOST_IOCTL_CHANNEL_SET_NVMAP_FD", kFdF, 0, "Names the caller's nvmap fd."),
    Row(kGetClkRate, "NVHOST_IOCTL_CHANNEL_GET_CLK_RATE", kGetClkF, kPure,
        "A module clock's rate."),
    Row(kSetClkRate, "NVHOST_IOCTL_CHANNEL_SET_CLK_RATE", kSetClkF, 0,
        "Requests a module clock rate."),
    Row(kSetTimeout, "NVHOST_IOCTL_CHANNEL_SET_TIMEOUT", kTimeoutF, 0, "The submit timeout in ms."),
    Row(kSetPriority, "NVHOST_IOCTL_CHANNEL_SET_PRIORITY", kPriorityF, 0,
        "The channel's priority (50 low, 100 medium, 150 high)."),
    Row(kGetSyncpoint, "NVHOST_IOCTL_CHANNEL_GET_SYNCPOINT", kParamF, kPure,
        "The syncpoint of the channel's module `param`."),
    Row(kGetWaitbase, "NVHOST_IOCTL_CHANNEL_GET_WAITBASE", kParamF, kPure,
        "The wait base of module `param`."),
    Row(kSetTimeoutEx, "NVHOST_IOCTL_CHANNEL_SET_TIMEOUT_EX", kTimeoutExF, 0,
        "SET_TIMEOUT with flags."),
    Row(kGetModmutex, "NVHOST_IOCTL_CHANNEL_GET_MODMUTEX", kParamF, kPure,
        "The module mutex `param`."),
    Row(kSubmit, "NVHOST_IOCTL_CHANNEL_SUBMIT", kSubmitF, 0,
        "Submits command buffers, relocations, wait checks and syncpoint increments, each read "
        "through its pointer; writes one fence per increment.",
        kSubmitP),
    Row(kMapBuffer, "NVHOST_IOCTL_CHANNEL_MAP_BUFFER", kMapBufferF, 0,
        "Maps dma-bufs for the engine; writes each one's address in the table.", kMapP),
    Row(kUnmapBuffer, "NVHOST_IOCTL_CHANNEL_UNMAP_BUFFER", kMapBufferF, 0,
        "Unmaps dma-bufs mapped by MAP_BUFFER.", kUnmapP),
};
static_assert(TableIsSound(kIoctls), "L4T host1x channel layouts disagree with their codes");
static_assert(sizeof(GetParamArg) == IocSize(kGetSyncpoint));
static_assert(sizeof(ClkRate) == IocSize(kSetClkRate));
static_assert(sizeof(U32Arg) == IocSize(kSetPriority));
static_assert(sizeof(SetTimeoutEx) == IocSize(kSetTimeoutEx));
static_assert(sizeof(Cmdbuf) == 12 && sizeof(CmdbufExt) == 8 && sizeof(Reloc) == 16);
static_assert(sizeof(RelocType) == 8 && sizeof(Waitchk) == 16 && sizeof(SyncptIncr) == 8);
static_assert(sizeof(Submit) == IocSize(kSubmit));
static_assert(sizeof(ChannelBuffer) == 32);
static_assert(sizeof(MapBuffer) == IocSize(kMapBuffer));

NVS_CHECK_MEMBER(kParamF, GetParamArg, value);
NVS_CHECK_MEMBER(kSetClkF, ClkRate, moduleid);
NVS_CHECK_MEMBER(kSubmitF, Submit, num_syncpt_incrs);
NVS_CHECK_MEMBER(kSubmitF, Submit, num_waitchks);
NVS_CHECK_MEMBER(kSubmitF, Submit, fence);
NVS_CHECK_MEMBER(kSubmitF, Submit, syncpt_incrs);
NVS_CHECK_MEMBER(kSubmitF, Submit, cmdbuf_exts);
NVS_CHECK_MEMBER(kSubmitF, Submit, checksum_methods);
NVS_CHECK_MEMBER(kSubmitF, Submit, pad);
NVS_CHECK_MEMBER(kSubmitF, Submit, reloc_types);
NVS_CHECK_MEMBER(kSubmitF, Submit, cmdbufs);
NVS_CHECK_MEMBER(kSubmitF, Submit, relocs);
NVS_CHECK_MEMBER(kSubmitF, Submit, reloc_shifts);
NVS_CHECK_MEMBER(kSubmitF, Submit, waitchks);
NVS_CHECK_MEMBER(kSubmitF, Submit, waitbases);
NVS_CHECK_MEMBER(kSubmitF, Submit, class_ids);
NVS_CHECK_MEMBER(kSubmitF, Submit, fences);
NVS_CHECK_MEMBER(kBufferF, ChannelBuffer, address);
NVS_CHECK_MEMBER(kMapBufferF, MapBuffer, table_address);

}  // namespace

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::l4t::nvhost_channel
