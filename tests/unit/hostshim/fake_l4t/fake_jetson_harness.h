// The fake Jetson (hostshim/fake_l4t/fake_jetson.h) without FUSE, for its unit tests: L4T calls
// from an in-memory caller (this test's own memory; fds mapped to sessions by hand).
#pragma once

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "abi/l4t/nvgpu_as.h"
#include "abi/l4t/nvgpu_channel.h"
#include "abi/l4t/nvmap.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/fake_l4t/fake_jetson.h"
#include "hostshim/fake_l4t/self_caller.h"

namespace nvsentry::hostshim::fake_l4t {

using abi::l4t::L4tNode;

// Memory is this process's (addresses below 64 KiB stand for bad pointers: SelfMemoryCaller).
class MemCaller : public SelfMemoryCaller {
 public:
  pid_t tid() const override { return 1; }
  uint64_t SessionOf(int32_t fd) override { return fds.contains(fd) ? fds[fd] : 0; }
  std::map<int32_t, uint64_t> fds;
};

// The fake's answer to one call (a parked call's comes from another thread).
class Recorded : public WaitedReply {
 public:
  int Err() { return Wait(); }
};

class FakeJetsonTest : public ::testing::Test {
 protected:
  // Sends `code` with `arg` as the kernel would (in/out by the code's direction).
  template <typename T>
  std::shared_ptr<Recorded> Send(uint64_t session, uint32_t code, T* arg) {
    const uint32_t size = (code >> 16) & 0x3FFF;
    const bool in = code & (1u << 30), out = code & (1u << 31);
    auto r = std::make_shared<Recorded>();
    const L4tRequest req{code,
                         {reinterpret_cast<const uint8_t*>(arg), in ? size : 0u},
                         reinterpret_cast<uint64_t>(arg),
                         out ? size : 0u,
                         caller_};
    fake_.Ioctl(session, req, r);
    return r;
  }
  template <typename T>
  int Call(uint64_t session, uint32_t code, T* arg) {
    auto r = Send(session, code, arg);
    const int err = r->Err();
    std::vector<uint8_t> out = r->out();
    if (err == 0 && !out.empty()) std::memcpy(arg, out.data(), out.size());
    return err;
  }
  uint64_t Open(L4tNode n) {
    const int64_t h = fake_.Open(n);
    EXPECT_GT(h, 0);
    return static_cast<uint64_t>(h);
  }

  FakeJetson fake_;
  MemCaller caller_;
};

// The rules of docs/host-abi.md, one test each (named after the rule's id): helpers that make
// the objects a rule needs.
class FakeL4tRules : public FakeJetsonTest {
 protected:
  // A CREATEd (and, when `alloc`, ALLOCated) nvmap object of `size` bytes on `nvmap`.
  uint32_t NewObject(uint64_t nvmap, uint32_t size, bool alloc = true) {
    abi::l4t::nvmap::CreateHandle c{};
    c.size = size;
    EXPECT_EQ(Call(nvmap, abi::l4t::nvmap::kCreate, &c), 0);
    if (alloc) {
      abi::l4t::nvmap::AllocHandle a{c.handle, 1u << 30 /* IOVMM */, 1, 4096};
      EXPECT_EQ(Call(nvmap, abi::l4t::nvmap::kAlloc, &a), 0);
    }
    return c.handle;
  }
  // A channel (caller fd `fd`) bound to the address space `as` and to a TSG of its own, as an
  // r32.7.4 client must before setting it up (L4T-TSG-8).
  uint64_t BoundChannel(uint64_t as, int32_t fd = 40) {
    const uint64_t ch = Open(L4tNode::kNvhostGpu);
    caller_.fds[fd] = ch;
    uint32_t bind = static_cast<uint32_t>(fd);
    EXPECT_EQ(Call(as, 0xC0044101u /* AS BIND_CHANNEL */, &bind), 0);
    EXPECT_EQ(BindToTsg(Open(L4tNode::kTsg), fd), 0);
    return ch;
  }
  // TSG BIND_CHANNEL of the caller's fd `fd` on `tsg`.
  int BindToTsg(uint64_t tsg, int32_t fd) {
    int32_t channel_fd = fd;
    return Call(tsg, 0x40045401u /* TSG BIND_CHANNEL */, &channel_fd);
  }
};

// The channel rules' set-up: an nvmap open, an address space and a pushbuffer mapped in it that
// binds the 3D class (something a channel runs cleanly).
class FakeL4tChannelRules : public FakeL4tRules {
 protected:
  void SetUp() override {
    nvmap_ = Open(L4tNode::kNvmap);
    as_ = Open(L4tNode::kNvhostAsGpu);
    // A pushbuffer that binds the 3D class on subchannel 0: something a channel runs cleanly.
    const uint32_t words[] = {(1u << 29) | (1u << 16), 0xB197};
    const uint32_t push = NewObject(nvmap_, 4096);
    abi::l4t::nvmap::RwHandle w{reinterpret_cast<uint64_t>(words), push, 0, 8, 8, 8, 1};
    EXPECT_EQ(Call(nvmap_, abi::l4t::nvmap::kWrite, &w), 0);
    abi::l4t::nvgpu_as::MapBufferEx m{};
    m.flags = abi::l4t::nvgpu_as::kMapDirectKindCtrl;
    m.compr_kind = -1;
    m.dmabuf_fd = push;
    EXPECT_EQ(Call(as_, abi::l4t::nvgpu_as::kMapBufferEx, &m), 0);
    entry_ = {static_cast<uint32_t>(m.offset),
              static_cast<uint32_t>(m.offset >> 32) | (2u << 10)};  // two words
  }
  void TearDown() override {
    for (uint64_t ch : channels_) fake_.Release(ch);
    fake_.Release(as_);
    fake_.Release(nvmap_);
  }
  // A channel, bound to the address space with a 3D object when `bound`, with a ring of `ring`.
  uint64_t Channel(bool bound, uint32_t ring = 0) {
    const int32_t fd = 40 + static_cast<int32_t>(channels_.size());
    const uint64_t ch = bound ? BoundChannel(as_, fd) : Open(L4tNode::kNvhostGpu);
    channels_.push_back(ch);
    if (ring != 0) {
      abi::l4t::nvgpu_channel::AllocGpfifoEx g{};
      g.num_entries = ring;
      EXPECT_EQ(Call(ch, abi::l4t::nvgpu_channel::kAllocGpfifoEx, &g), 0);
    }
    if (bound) {
      abi::l4t::nvgpu_channel::AllocObjCtx o{0xB197, 0, 0};
      EXPECT_EQ(Call(ch, abi::l4t::nvgpu_channel::kAllocObjCtx, &o), 0);
    }
    return ch;
  }
  // A submission of `n` entries of that pushbuffer.
  int Submit(uint64_t ch, uint32_t n, uint32_t flags = 0) {
    entries_.assign(n, entry_);
    abi::l4t::nvgpu_channel::SubmitGpfifo s{
        reinterpret_cast<uint64_t>(entries_.data()), n, flags, {}};
    return Call(ch, abi::l4t::nvgpu_channel::kSubmitGpfifo, &s);
  }
  uint64_t nvmap_ = 0, as_ = 0;
  abi::l4t::nvgpu_channel::GpfifoEntry entry_{};
  std::vector<uint64_t> channels_;
  std::vector<abi::l4t::nvgpu_channel::GpfifoEntry> entries_;
};

}  // namespace nvsentry::hostshim::fake_l4t
