// The L4T r32.7 host ABI tables (abi/l4t/) against the public headers of L4T r32.7.4:
// kernel/nvgpu include/uapi/linux/nvgpu.h, kernel/nvidia include/uapi/linux/nvmap.h and
// nvhost_ioctl.h. Every expected code, size and offset here is typed in by hand from those headers
// (LP64: unsigned long and pointers are 8 bytes), never computed by abi/.
#include <cstddef>
#include <string_view>

#include "abi/l4t/nodes.h"
#include "abi/l4t/nvgpu_as.h"
#include "abi/l4t/nvgpu_channel.h"
#include "abi/l4t/nvgpu_ctrl.h"
#include "abi/l4t/nvgpu_tsg.h"
#include "abi/l4t/nvhost_channel.h"
#include "abi/l4t/nvhost_ctrl.h"
#include "abi/l4t/nvmap.h"
#include "gtest/gtest.h"

namespace nvsentry::abi::l4t {
namespace {

// The ioctl `code` of `node`: named `name`, `size` bytes in the code, and each {field, offset}.
struct At {
  std::string_view field;
  uint16_t offset;
};
void ExpectIoctl(L4tNode node, uint32_t code, std::string_view name, uint32_t size,
                 std::initializer_list<At> fields = {}) {
  const IoctlDesc* d = FindL4tIoctl(node, code);
  ASSERT_NE(d, nullptr) << name;
  EXPECT_EQ(d->name, name);
  EXPECT_EQ(d->size(), size) << name;
  for (const At& a : fields) {
    const Field* found = nullptr;
    for (const Field& f : d->fields)
      if (f.name == a.field) found = &f;
    ASSERT_NE(found, nullptr) << name << "." << a.field;
    EXPECT_EQ(found->offset, a.offset) << name << "." << a.field;
  }
}

const UserPtrDesc* PtrAt(L4tNode node, uint32_t code, uint16_t offset) {
  const IoctlDesc* d = FindL4tIoctl(node, code);
  if (d == nullptr) return nullptr;
  for (const UserPtrDesc& p : d->user_ptrs)
    if (p.ptr == offset) return &p;
  return nullptr;
}

// nvmap.h: struct nvmap_create_handle, NVMAP_IOC_CREATE/FROM_ID/GET_ID/GET_FD/FROM_FD.
TEST(L4tNvmap, CreateHandle) {
  EXPECT_EQ(sizeof(nvmap::CreateHandle), 8u);
  EXPECT_EQ(offsetof(nvmap::CreateHandle, handle), 4u);
  EXPECT_EQ(nvmap::kCreate, 0xC0084E00u);
  EXPECT_EQ(nvmap::kFromId, 0xC0084E02u);
  EXPECT_EQ(nvmap::kGetId, 0xC0084E0Du);
  EXPECT_EQ(nvmap::kGetFd, 0xC0084E0Fu);
  EXPECT_EQ(nvmap::kFromFd, 0xC0084E10u);
  ExpectIoctl(L4tNode::kNvmap, 0xC0084E00, "NVMAP_IOC_CREATE", 8, {{"size", 0}, {"handle", 4}});
  ExpectIoctl(L4tNode::kNvmap, 0xC0084E10, "NVMAP_IOC_FROM_FD", 8, {{"fd", 0}, {"handle", 4}});
  ExpectIoctl(L4tNode::kNvmap, 0xC0084E0F, "NVMAP_IOC_GET_FD", 8, {{"fd", 0}, {"handle", 4}});
}

// struct nvmap_alloc_handle, NVMAP_IOC_ALLOC _IOW('N', 3).
TEST(L4tNvmap, AllocHandle) {
  EXPECT_EQ(sizeof(nvmap::AllocHandle), 16u);
  EXPECT_EQ(nvmap::kAlloc, 0x40104E03u);
  ExpectIoctl(L4tNode::kNvmap, 0x40104E03, "NVMAP_IOC_ALLOC", 16,
              {{"handle", 0}, {"heap_mask", 4}, {"flags", 8}, {"align", 12}});
}

// NVMAP_IOC_FREE _IO('N', 4): the handle is the argument.
TEST(L4tNvmap, FreeTakesTheHandleItself) {
  EXPECT_EQ(nvmap::kFree, 0x00004E04u);
  const IoctlDesc* d = FindL4tIoctl(L4tNode::kNvmap, 0x00004E04);
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(d->fields.empty());
  EXPECT_NE(d->flags & kArgIsValue, 0u);
}

// struct nvmap_rw_handle (unsigned long addr first), NVMAP_IOC_WRITE/READ _IOW('N', 6/7).
TEST(L4tNvmap, RwHandle) {
  EXPECT_EQ(sizeof(nvmap::RwHandle), 32u);
  EXPECT_EQ(offsetof(nvmap::RwHandle, handle), 8u);
  EXPECT_EQ(offsetof(nvmap::RwHandle, count), 28u);
  EXPECT_EQ(nvmap::kWrite, 0x40204E06u);
  EXPECT_EQ(nvmap::kRead, 0x40204E07u);
  ExpectIoctl(L4tNode::kNvmap, 0x40204E07, "NVMAP_IOC_READ", 32,
              {{"addr", 0},
               {"handle", 8},
               {"offset", 12},
               {"elem_size", 16},
               {"hmem_stride", 20},
               {"user_stride", 24},
               {"count", 28}});
  const UserPtrDesc* p = PtrAt(L4tNode::kNvmap, 0x40204E07, 0);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->count_from, PtrCount::kStrided);
  EXPECT_EQ(p->dir, Dir::kOut);  // READ writes the caller's memory
  EXPECT_EQ(p->count, 28);
  EXPECT_EQ(p->elem_size_at, 16);
  EXPECT_EQ(p->stride_at, 24);
  EXPECT_EQ(PtrAt(L4tNode::kNvmap, 0x40204E06, 0)->dir, Dir::kIn);
}

// struct nvmap_handle_param (unsigned long result), NVMAP_IOC_PARAM _IOWR('N', 8).
TEST(L4tNvmap, HandleParam) {
  EXPECT_EQ(sizeof(nvmap::HandleParam), 16u);
  EXPECT_EQ(nvmap::kParam, 0xC0104E08u);
  ExpectIoctl(L4tNode::kNvmap, 0xC0104E08, "NVMAP_IOC_PARAM", 16,
              {{"handle", 0}, {"param", 4}, {"result", 8}});
}

// struct nvmap_cache_op, NVMAP_IOC_CACHE _IOW('N', 12).
TEST(L4tNvmap, CacheOp) {
  EXPECT_EQ(sizeof(nvmap::CacheOp), 24u);
  EXPECT_EQ(nvmap::kCache, 0x40184E0Cu);
  ExpectIoctl(L4tNode::kNvmap, 0x40184E0C, "NVMAP_IOC_CACHE", 24,
              {{"addr", 0}, {"handle", 8}, {"len", 12}, {"op", 16}});
}

// struct nvmap_set_tag_label, NVMAP_IOC_SET_TAG_LABEL _IOW('N', 24).
TEST(L4tNvmap, SetTagLabel) {
  EXPECT_EQ(sizeof(nvmap::SetTagLabel), 16u);
  EXPECT_EQ(nvmap::kSetTagLabel, 0x40104E18u);
  ExpectIoctl(L4tNode::kNvmap, 0x40104E18, "NVMAP_IOC_SET_TAG_LABEL", 16,
              {{"tag", 0}, {"len", 4}, {"addr", 8}});
  ASSERT_NE(PtrAt(L4tNode::kNvmap, 0x40104E18, 8), nullptr);
  EXPECT_TRUE(PtrAt(L4tNode::kNvmap, 0x40104E18, 8)->nullable);
}

// struct nvmap_handle_parameters, NVMAP_IOC_PARAMETERS _IOR('N', 27).
TEST(L4tNvmap, HandleParameters) {
  EXPECT_EQ(sizeof(nvmap::HandleParameters), 56u);
  EXPECT_EQ(nvmap::kParameters, 0x80384E1Bu);
  ExpectIoctl(L4tNode::kNvmap, 0x80384E1B, "NVMAP_IOC_PARAMETERS", 56,
              {{"contig", 0},
               {"import_id", 4},
               {"handle", 8},
               {"heap_number", 12},
               {"access_flags", 16},
               {"heap", 24},
               {"align", 32},
               {"coherency", 40},
               {"size", 48}});
}

// nvhost_ioctl.h: nvhost_ctrl_syncpt_read_args, NVHOST_IOCTL_CTRL_SYNCPT_READ/READ_MAX.
TEST(L4tNvhostCtrl, SyncptRead) {
  EXPECT_EQ(sizeof(nvhost_ctrl::SyncptRead), 8u);
  ExpectIoctl(L4tNode::kNvhostCtrl, 0xC0084801, "NVHOST_IOCTL_CTRL_SYNCPT_READ", 8,
              {{"id", 0}, {"value", 4}});
  ExpectIoctl(L4tNode::kNvhostCtrl, 0xC0084808, "NVHOST_IOCTL_CTRL_SYNCPT_READ_MAX", 8);
}

TEST(L4tNvhostCtrl, SyncptIncr) {
  EXPECT_EQ(sizeof(nvhost_ctrl::SyncptIncr), 4u);
  ExpectIoctl(L4tNode::kNvhostCtrl, 0x40044802, "NVHOST_IOCTL_CTRL_SYNCPT_INCR", 4, {{"id", 0}});
}

// nvhost_ctrl_syncpt_wait_args (packed, 12 bytes), _IOW: nothing comes back.
TEST(L4tNvhostCtrl, SyncptWait) {
  EXPECT_EQ(sizeof(nvhost_ctrl::SyncptWait), 12u);
  ExpectIoctl(L4tNode::kNvhostCtrl, 0x400C4803, "NVHOST_IOCTL_CTRL_SYNCPT_WAIT", 12,
              {{"id", 0}, {"thresh", 4}, {"timeout", 8}});
}

TEST(L4tNvhostCtrl, SyncptWaitEx) {
  EXPECT_EQ(sizeof(nvhost_ctrl::SyncptWaitEx), 16u);
  EXPECT_EQ(nvhost_ctrl::kSyncptWaitEx, 0xC0104806u);
  ExpectIoctl(L4tNode::kNvhostCtrl, 0xC0104806, "NVHOST_IOCTL_CTRL_SYNCPT_WAITEX", 16,
              {{"id", 0}, {"thresh", 4}, {"timeout", 8}, {"value", 12}});
}

TEST(L4tNvhostCtrl, SyncptWaitMex) {
  EXPECT_EQ(sizeof(nvhost_ctrl::SyncptWaitMex), 32u);
  ExpectIoctl(L4tNode::kNvhostCtrl, 0xC0204809, "NVHOST_IOCTL_CTRL_SYNCPT_WAITMEX", 32,
              {{"value", 12}, {"tv_sec", 16}, {"tv_nsec", 20}, {"clock_id", 24}});
}

TEST(L4tNvhostCtrl, ModuleMutexAndVersion) {
  ExpectIoctl(L4tNode::kNvhostCtrl, 0xC0084804, "NVHOST_IOCTL_CTRL_MODULE_MUTEX", 8,
              {{"id", 0}, {"lock", 4}});
  ExpectIoctl(L4tNode::kNvhostCtrl, 0x80044807, "NVHOST_IOCTL_CTRL_GET_VERSION", 4);
}

// nvhost_ctrl_sync_fence_create_args: fence_fd before the two pointers.
TEST(L4tNvhostCtrl, SyncFenceCreate) {
  EXPECT_EQ(sizeof(nvhost_ctrl::SyncFenceCreate), 24u);
  ExpectIoctl(L4tNode::kNvhostCtrl, 0xC018480B, "NVHOST_IOCTL_CTRL_SYNC_FENCE_CREATE", 24,
              {{"num_pts", 0}, {"fence_fd", 4}, {"pts", 8}, {"name", 16}});
  const UserPtrDesc* pts = PtrAt(L4tNode::kNvhostCtrl, 0xC018480B, 8);
  ASSERT_NE(pts, nullptr);
  EXPECT_EQ(pts->elem->size, 8u);  // nvhost_ctrl_sync_fence_info {id, thresh}
  EXPECT_EQ(pts->count, 0);
}

TEST(L4tNvhostCtrl, ModuleRegRdWr) {
  EXPECT_EQ(sizeof(nvhost_ctrl::ModuleRegRdWr), 32u);
  ExpectIoctl(L4tNode::kNvhostCtrl, 0xC020480C, "NVHOST_IOCTL_CTRL_MODULE_REGRDWR", 32,
              {{"write", 12}, {"offsets", 16}, {"values", 24}});
}

// nvhost_ctrl_get_characteristics {u64 size; u64 addr} over nvhost_characteristics (32 bytes).
TEST(L4tNvhostCtrl, GetCharacteristics) {
  EXPECT_EQ(sizeof(nvhost_ctrl::Characteristics), 32u);
  EXPECT_EQ(offsetof(nvhost_ctrl::Characteristics, num_syncpts), 12u);
  ExpectIoctl(L4tNode::kNvhostCtrl, 0xC010480E, "NVHOST_IOCTL_CTRL_GET_CHARACTERISTICS", 16,
              {{"nvhost_characteristics_buf_size", 0}, {"nvhost_characteristics_buf_addr", 8}});
  const UserPtrDesc* p = PtrAt(L4tNode::kNvhostCtrl, 0xC010480E, 8);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->count_from, PtrCount::kBytes);
  EXPECT_EQ(p->elem->size, 32u);
}

TEST(L4tNvhostCtrl, PollFd) {
  ExpectIoctl(L4tNode::kNvhostCtrl, 0x80084810, "NVHOST_IOCTL_CTRL_POLL_FD_CREATE", 8, {{"fd", 0}});
  ExpectIoctl(L4tNode::kNvhostCtrl, 0x40104811, "NVHOST_IOCTL_CTRL_POLL_FD_TRIGGER_EVENT", 16,
              {{"fd", 0}, {"id", 4}, {"thresh", 8}});
  ExpectIoctl(L4tNode::kNvhostCtrl, 0xC008480F, "NVHOST_IOCTL_CTRL_CHECK_MODULE_SUPPORT", 8);
}

// nvhost_submit_args: 8 u32, then the pointers, 128 bytes; NVHOST_IOCTL_CHANNEL_SUBMIT ('H', 26).
TEST(L4tHost1xChannel, Submit) {
  EXPECT_EQ(sizeof(nvhost_channel::Submit), 128u);
  EXPECT_EQ(nvhost_channel::kSubmit, 0xC080481Au);
  EXPECT_EQ(sizeof(nvhost_channel::SyncptIncr), 8u);
  EXPECT_EQ(sizeof(nvhost_channel::Cmdbuf), 12u);
  ExpectIoctl(L4tNode::kHost1xChannel, 0xC080481A, "NVHOST_IOCTL_CHANNEL_SUBMIT", 128,
              {{"num_syncpt_incrs", 4},
               {"num_cmdbufs", 8},
               {"num_relocs", 12},
               {"num_waitchks", 16},
               {"fence", 28},
               {"syncpt_incrs", 32},
               {"cmdbuf_exts", 40},
               {"reloc_types", 64},
               {"cmdbufs", 72},
               {"relocs", 80},
               {"reloc_shifts", 88},
               {"waitchks", 96},
               {"waitbases", 104},
               {"class_ids", 112},
               {"fences", 120}});
  const UserPtrDesc* cmdbufs = PtrAt(L4tNode::kHost1xChannel, 0xC080481A, 72);
  ASSERT_NE(cmdbufs, nullptr);
  EXPECT_EQ(cmdbufs->count, 8);  // num_cmdbufs
  EXPECT_EQ(cmdbufs->elem->size, 12u);
  const UserPtrDesc* fences = PtrAt(L4tNode::kHost1xChannel, 0xC080481A, 120);
  ASSERT_NE(fences, nullptr);
  EXPECT_EQ(fences->count, 4);  // num_syncpt_incrs
  EXPECT_EQ(fences->dir, Dir::kOut);
  EXPECT_EQ(PtrAt(L4tNode::kHost1xChannel, 0xC080481A, 104), nullptr);  // waitbases: unread
}

TEST(L4tHost1xChannel, SmallCalls) {
  ExpectIoctl(L4tNode::kHost1xChannel, 0xC0084810, "NVHOST_IOCTL_CHANNEL_GET_SYNCPOINT", 8,
              {{"param", 0}, {"value", 4}});
  ExpectIoctl(L4tNode::kHost1xChannel, 0xC0084809, "NVHOST_IOCTL_CHANNEL_GET_CLK_RATE", 8,
              {{"rate", 0}, {"moduleid", 4}});
  ExpectIoctl(L4tNode::kHost1xChannel, 0x4004480D, "NVHOST_IOCTL_CHANNEL_SET_PRIORITY", 4);
  ExpectIoctl(L4tNode::kHost1xChannel, 0xC0084817, "NVHOST_IOCTL_CHANNEL_GET_MODMUTEX", 8);
}

// nvhost_channel_map_buffer_args over nvhost_channel_buffer (32 bytes).
TEST(L4tHost1xChannel, MapBuffer) {
  EXPECT_EQ(sizeof(nvhost_channel::ChannelBuffer), 32u);
  EXPECT_EQ(offsetof(nvhost_channel::ChannelBuffer, address), 24u);
  ExpectIoctl(L4tNode::kHost1xChannel, 0xC010481C, "NVHOST_IOCTL_CHANNEL_MAP_BUFFER", 16,
              {{"num_buffers", 0}, {"table_address", 8}});
  ExpectIoctl(L4tNode::kHost1xChannel, 0xC010481D, "NVHOST_IOCTL_CHANNEL_UNMAP_BUFFER", 16);
}

// nvgpu.h: the zcull and ZBC calls keep the guest's codes.
TEST(L4tNvgpuCtrl, ZcullAndZbc) {
  ExpectIoctl(L4tNode::kNvhostCtrlGpu, 0x80044701, "NVGPU_GPU_IOCTL_ZCULL_GET_CTX_SIZE", 4);
  ExpectIoctl(L4tNode::kNvhostCtrlGpu, 0x80284702, "NVGPU_GPU_IOCTL_ZCULL_GET_INFO", 40,
              {{"subregion_count", 36}});
  ExpectIoctl(L4tNode::kNvhostCtrlGpu, 0x402C4703, "NVGPU_GPU_IOCTL_ZBC_SET_TABLE", 44,
              {{"depth", 32}, {"format", 36}, {"type", 40}});
  ExpectIoctl(L4tNode::kNvhostCtrlGpu, 0xC0344704, "NVGPU_GPU_IOCTL_ZBC_QUERY_TABLE", 52,
              {{"ref_cnt", 36}, {"index_size", 48}});
}

// struct nvgpu_gpu_characteristics (r32.7.4: 256 bytes) and nvgpu_gpu_get_characteristics.
TEST(L4tNvgpuCtrl, GetCharacteristics) {
  EXPECT_EQ(sizeof(nvgpu_ctrl::GpuCharacteristics), 256u);
  EXPECT_EQ(offsetof(nvgpu_ctrl::GpuCharacteristics, flags), 56u);
  EXPECT_EQ(offsetof(nvgpu_ctrl::GpuCharacteristics, twod_class), 64u);
  EXPECT_EQ(offsetof(nvgpu_ctrl::GpuCharacteristics, gpc_mask), 88u);
  EXPECT_EQ(offsetof(nvgpu_ctrl::GpuCharacteristics, gpu_va_bit_count), 114u);
  EXPECT_EQ(offsetof(nvgpu_ctrl::GpuCharacteristics, chipname), 148u);
  EXPECT_EQ(offsetof(nvgpu_ctrl::GpuCharacteristics, gr_compbit_store_base_hw), 160u);
  EXPECT_EQ(offsetof(nvgpu_ctrl::GpuCharacteristics, max_freq), 192u);
  EXPECT_EQ(offsetof(nvgpu_ctrl::GpuCharacteristics, max_css_buffer_size), 252u);
  EXPECT_EQ(nvgpu_ctrl::kGetCharacteristics, 0xC0104705u);
  ExpectIoctl(L4tNode::kNvhostCtrlGpu, 0xC0104705, "NVGPU_GPU_IOCTL_GET_CHARACTERISTICS", 16,
              {{"gpu_characteristics_buf_size", 0}, {"gpu_characteristics_buf_addr", 8}});
  const UserPtrDesc* p = PtrAt(L4tNode::kNvhostCtrlGpu, 0xC0104705, 8);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->count_from, PtrCount::kBytes);
  EXPECT_EQ(p->count, 0);
  EXPECT_EQ(p->elem->size, 256u);
  EXPECT_EQ(p->dir, Dir::kOut);
}

TEST(L4tNvgpuCtrl, AllocAsOpenTsgOpenChannel) {
  EXPECT_EQ(sizeof(nvgpu_ctrl::AllocAs), 16u);
  ExpectIoctl(L4tNode::kNvhostCtrlGpu, 0xC0104708, "NVGPU_GPU_IOCTL_ALLOC_AS", 16,
              {{"big_page_size", 0}, {"as_fd", 4}, {"flags", 8}});
  ExpectIoctl(L4tNode::kNvhostCtrlGpu, 0xC0084709, "NVGPU_GPU_IOCTL_OPEN_TSG", 8, {{"tsg_fd", 0}});
  ExpectIoctl(L4tNode::kNvhostCtrlGpu, 0xC004470B, "NVGPU_GPU_IOCTL_OPEN_CHANNEL", 4,
              {{"channel_fd", 0}, {"runlist_id", 0}});
}

// nvgpu_gpu_get_tpc_masks_args {u32 mask_buf_size; u32 reserved; u64 mask_buf_addr}.
TEST(L4tNvgpuCtrl, GetTpcMasks) {
  EXPECT_EQ(sizeof(nvgpu_ctrl::GetTpcMasks), 16u);
  ExpectIoctl(L4tNode::kNvhostCtrlGpu, 0xC010470A, "NVGPU_GPU_IOCTL_GET_TPC_MASKS", 16,
              {{"mask_buf_size", 0}, {"mask_buf_addr", 8}});
  const UserPtrDesc* p = PtrAt(L4tNode::kNvhostCtrlGpu, 0xC010470A, 8);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->count_from, PtrCount::kBytes);
  EXPECT_EQ(p->elem->size, 4u);
}

// nvgpu_gpu_l2_fb_args: three 1-bit fields and a u32, __packed: 5 bytes.
TEST(L4tNvgpuCtrl, FlushL2IsFiveBytes) {
  EXPECT_EQ(sizeof(nvgpu_ctrl::FlushL2), 5u);
  EXPECT_EQ(nvgpu_ctrl::kFlushL2, 0xC005470Cu);
  ExpectIoctl(L4tNode::kNvhostCtrlGpu, 0xC005470C, "NVGPU_GPU_IOCTL_FLUSH_L2", 5,
              {{"flush", 0}, {"reserved", 1}});
}

TEST(L4tNvgpuCtrl, DebugAndSmQueries) {
  ExpectIoctl(L4tNode::kNvhostCtrlGpu, 0xC008470E, "NVGPU_GPU_IOCTL_SET_MMUDEBUG_MODE", 8);
  ExpectIoctl(L4tNode::kNvhostCtrlGpu, 0xC010470F, "NVGPU_GPU_IOCTL_SET_SM_DEBUG_MODE", 16,
              {{"channel_fd", 0}, {"enable", 4}, {"sms", 8}});
  ExpectIoctl(L4tNode::kNvhostCtrlGpu, 0xC0084711, "NVGPU_GPU_IOCTL_GET_TPC_EXCEPTION_EN_STATUS",
              8);
  ExpectIoctl(L4tNode::kNvhostCtrlGpu, 0xC0084712, "NVGPU_GPU_IOCTL_NUM_VSMS", 8);
}

// WAIT_FOR_PAUSE and VSMS_MAPPING: a pointer to one entry per SM (struct warpstate is 48 bytes,
// nvgpu_gpu_vsms_mapping_entry 2).
TEST(L4tNvgpuCtrl, PerSmPointers) {
  EXPECT_EQ(sizeof(nvgpu_ctrl::WarpState), 48u);
  EXPECT_EQ(sizeof(nvgpu_ctrl::VsmsMappingEntry), 2u);
  ExpectIoctl(L4tNode::kNvhostCtrlGpu, 0xC0084710, "NVGPU_GPU_IOCTL_WAIT_FOR_PAUSE", 8);
  ExpectIoctl(L4tNode::kNvhostCtrlGpu, 0xC0084713, "NVGPU_GPU_IOCTL_VSMS_MAPPING", 8);
  EXPECT_EQ(PtrAt(L4tNode::kNvhostCtrlGpu, 0xC0084710, 0)->count_from, PtrCount::kImplied);
  EXPECT_EQ(PtrAt(L4tNode::kNvhostCtrlGpu, 0xC0084713, 0)->elem->size, 2u);
}

TEST(L4tNvgpuCtrl, Time) {
  EXPECT_EQ(sizeof(nvgpu_ctrl::GetCpuTimeCorrelationInfo), 264u);
  ExpectIoctl(L4tNode::kNvhostCtrlGpu, 0xC1084718, "NVGPU_GPU_IOCTL_GET_CPU_TIME_CORRELATION_INFO",
              264, {{"samples", 0}, {"count", 256}, {"source_id", 260}});
  ExpectIoctl(L4tNode::kNvhostCtrlGpu, 0xC0104719, "NVGPU_GPU_IOCTL_GET_GPU_TIME", 16);
}

TEST(L4tNvgpuAs, BindAllocFreeUnmap) {
  ExpectIoctl(L4tNode::kNvhostAsGpu, 0xC0044101, "NVGPU_AS_IOCTL_BIND_CHANNEL", 4);
  EXPECT_EQ(sizeof(nvgpu_as::AllocSpace), 24u);
  ExpectIoctl(L4tNode::kNvhostAsGpu, 0xC0184106, "NVGPU_AS_IOCTL_ALLOC_SPACE", 24,
              {{"flags", 8}, {"padding", 12}, {"offset", 16}, {"align", 16}});
  ExpectIoctl(L4tNode::kNvhostAsGpu, 0xC0184102, "NVGPU32_AS_IOCTL_ALLOC_SPACE", 24,
              {{"offset", 16}});
  ExpectIoctl(L4tNode::kNvhostAsGpu, 0xC0104103, "NVGPU_AS_IOCTL_FREE_SPACE", 16,
              {{"offset", 0}, {"pages", 8}, {"page_size", 12}});
  ExpectIoctl(L4tNode::kNvhostAsGpu, 0xC0084105, "NVGPU_AS_IOCTL_UNMAP_BUFFER", 8);
}

// nvgpu_as_map_buffer_ex_args: {u32 flags; s16 compr_kind; s16 incompr_kind; u32 dmabuf_fd;
// u32 page_size; u64 buffer_offset; u64 mapping_size; u64 offset}, 40 bytes.
TEST(L4tNvgpuAs, MapBufferEx) {
  EXPECT_EQ(sizeof(nvgpu_as::MapBufferEx), 40u);
  EXPECT_EQ(nvgpu_as::kMapBufferEx, 0xC0284107u);
  EXPECT_EQ(nvgpu_as::kMapDirectKindCtrl, 0x100u);
  ExpectIoctl(L4tNode::kNvhostAsGpu, 0xC0284107, "NVGPU_AS_IOCTL_MAP_BUFFER_EX", 40,
              {{"flags", 0},
               {"compr_kind", 4},
               {"incompr_kind", 6},
               {"dmabuf_fd", 8},
               {"page_size", 12},
               {"buffer_offset", 16},
               {"mapping_size", 24},
               {"offset", 32}});
}

// nvgpu_as_get_va_regions_args {u64 buf_addr; u32 buf_size; u32 reserved} over 24-byte regions.
TEST(L4tNvgpuAs, GetVaRegions) {
  EXPECT_EQ(sizeof(nvgpu_as::GetVaRegions), 16u);
  EXPECT_EQ(sizeof(nvgpu_as::VaRegion), 24u);
  EXPECT_EQ(nvgpu_as::kGetVaRegions, 0xC0104108u);
  ExpectIoctl(L4tNode::kNvhostAsGpu, 0xC0104108, "NVGPU_AS_IOCTL_GET_VA_REGIONS", 16,
              {{"buf_addr", 0}, {"buf_size", 8}});
  const UserPtrDesc* p = PtrAt(L4tNode::kNvhostAsGpu, 0xC0104108, 0);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->count_from, PtrCount::kBytes);
  EXPECT_EQ(p->count, 8);
  EXPECT_EQ(p->elem->size, 24u);
}

TEST(L4tNvgpuAs, MapBufferBatch) {
  EXPECT_EQ(sizeof(nvgpu_as::MapBufferBatch), 32u);
  ExpectIoctl(L4tNode::kNvhostAsGpu, 0xC020410B, "NVGPU_AS_IOCTL_MAP_BUFFER_BATCH", 32,
              {{"unmaps", 0}, {"maps", 8}, {"num_unmaps", 16}, {"num_maps", 20}});
  EXPECT_EQ(PtrAt(L4tNode::kNvhostAsGpu, 0xC020410B, 8)->elem->size, 40u);
}

// nvgpu_submit_gpfifo_args {u64 gpfifo; u32 num_entries; u32 flags; nvgpu_fence}, 24 bytes.
TEST(L4tNvgpuChannel, SubmitGpfifo) {
  EXPECT_EQ(sizeof(nvgpu_channel::SubmitGpfifo), 24u);
  EXPECT_EQ(nvgpu_channel::kSubmitGpfifo, 0xC018486Bu);
  ExpectIoctl(L4tNode::kNvhostGpu, 0xC018486B, "NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO", 24,
              {{"gpfifo", 0}, {"num_entries", 8}, {"flags", 12}, {"fence", 16}});
  const UserPtrDesc* p = PtrAt(L4tNode::kNvhostGpu, 0xC018486B, 0);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->count_from, PtrCount::kElements);
  EXPECT_EQ(p->count, 8);
  EXPECT_EQ(p->elem->size, 8u);
  EXPECT_EQ(p->dir, Dir::kIn);
}

TEST(L4tNvgpuChannel, SetupCalls) {
  ExpectIoctl(L4tNode::kNvhostGpu, 0x40044805, "NVGPU_IOCTL_CHANNEL_SET_NVMAP_FD", 4);
  ExpectIoctl(L4tNode::kNvhostGpu, 0x4004480B, "NVGPU_IOCTL_CHANNEL_SET_TIMEOUT", 4);
  ExpectIoctl(L4tNode::kNvhostGpu, 0xC0084812, "NVGPU_IOCTL_CHANNEL_SET_TIMEOUT_EX", 8);
  ExpectIoctl(L4tNode::kNvhostGpu, 0x40084864, "NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO", 8);
  EXPECT_EQ(sizeof(nvgpu_channel::AllocGpfifoEx), 32u);
  ExpectIoctl(L4tNode::kNvhostGpu, 0x4020487B, "NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO_EX", 32,
              {{"num_entries", 0}, {"num_inflight_jobs", 4}, {"flags", 8}, {"reserved", 12}});
  EXPECT_EQ(sizeof(nvgpu_channel::SetupBind), 80u);
  ExpectIoctl(L4tNode::kNvhostGpu, 0xC0504880, "NVGPU_IOCTL_CHANNEL_SETUP_BIND", 80,
              {{"work_submit_token", 20}, {"userd_dmabuf_offset", 24}, {"reserved", 40}});
}

TEST(L4tNvgpuChannel, ObjectsAndNotifiers) {
  ExpectIoctl(L4tNode::kNvhostGpu, 0xC010486C, "NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX", 16,
              {{"class_num", 0}, {"flags", 4}, {"obj_id", 8}});
  ExpectIoctl(L4tNode::kNvhostGpu, 0xC010486E, "NVGPU_IOCTL_CHANNEL_ZCULL_BIND", 16,
              {{"gpu_va", 0}, {"mode", 8}});
  ExpectIoctl(L4tNode::kNvhostGpu, 0xC018486F, "NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER", 24,
              {{"offset", 0}, {"size", 8}, {"mem", 16}});
  ExpectIoctl(L4tNode::kNvhostGpu, 0xC0184866, "NVGPU_IOCTL_CHANNEL_WAIT", 24,
              {{"dmabuf_fd", 8}, {"payload", 16}});
  ExpectIoctl(L4tNode::kNvhostGpu, 0x8010487E, "NVGPU_IOCTL_CHANNEL_GET_USER_SYNCPOINT", 16,
              {{"syncpoint_id", 8}, {"syncpoint_max", 12}});
}

TEST(L4tNvgpuChannel, ControlAndScheduling) {
  ExpectIoctl(L4tNode::kNvhostGpu, 0x00004871, "NVGPU_IOCTL_CHANNEL_ENABLE", 0);
  ExpectIoctl(L4tNode::kNvhostGpu, 0x00004874, "NVGPU_IOCTL_CHANNEL_FORCE_RESET", 0);
  ExpectIoctl(L4tNode::kNvhostGpu, 0xC0104875, "NVGPU_IOCTL_CHANNEL_EVENT_ID_CTRL", 16,
              {{"event_fd", 8}});
  ExpectIoctl(L4tNode::kNvhostGpu, 0x40084879, "NVGPU_IOCTL_CHANNEL_SET_TIMESLICE", 8);
  ExpectIoctl(L4tNode::kNvhostGpu, 0x80044870, "NVGPU_IOCTL_CHANNEL_OPEN", 4);
}

TEST(L4tNvgpuTsg, Calls) {
  ExpectIoctl(L4tNode::kTsg, 0x40045401, "NVGPU_TSG_IOCTL_BIND_CHANNEL", 4);
  ExpectIoctl(L4tNode::kTsg, 0xC0105407, "NVGPU_IOCTL_TSG_EVENT_ID_CTRL", 16,
              {{"cmd", 0}, {"event_id", 4}, {"event_fd", 8}});
  ExpectIoctl(L4tNode::kTsg, 0x40085408, "NVGPU_IOCTL_TSG_SET_RUNLIST_INTERLEAVE", 8);
  ExpectIoctl(L4tNode::kTsg, 0x40085409, "NVGPU_IOCTL_TSG_SET_TIMESLICE", 8, {{"timeslice_us", 0}});
  ExpectIoctl(L4tNode::kTsg, 0x8008540A, "NVGPU_IOCTL_TSG_GET_TIMESLICE", 8);
}

// Every node's magics are the headers' ('H', 'G', 'A', 'N', 'T'); no table repeats a code.
TEST(L4tNodes, MagicsAndUniqueCodes) {
  const std::pair<L4tNode, uint32_t> kMagic[] = {
      {L4tNode::kNvhostCtrl, 'H'},   {L4tNode::kNvhostCtrlGpu, 'G'}, {L4tNode::kNvhostAsGpu, 'A'},
      {L4tNode::kNvhostGpu, 'H'},    {L4tNode::kNvmap, 'N'},         {L4tNode::kTsg, 'T'},
      {L4tNode::kHost1xChannel, 'H'}};
  for (auto [node, magic] : kMagic) {
    const L4tNodeDesc& n = Node(node);
    EXPECT_EQ(n.id, node);
    for (const IoctlDesc& d : n.ioctls) {
      EXPECT_EQ((d.code >> 8) & 0xFF, magic) << d.name;
      int same = 0;
      for (const IoctlDesc& e : n.ioctls) same += e.code == d.code;
      EXPECT_EQ(same, 1) << d.name;
    }
  }
  EXPECT_EQ(Node(L4tNode::kNvmap).path, "/dev/nvmap");
  EXPECT_EQ(Node(L4tNode::kNvhostGpu).path, "/dev/nvhost-gpu");
}

}  // namespace
}  // namespace nvsentry::abi::l4t
