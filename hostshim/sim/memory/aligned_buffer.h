// A heap buffer that starts on a page boundary, for data the kernel copies to or from guest memory
// (process_vm_readv/writev). The kernel copies with `rep movsb`, which on this kind of machine
// runs at about half speed when the sentry's side is off a cache-line boundary, and malloc aligns
// to 16 bytes only: measured, a 64 MiB guest-to-guest DMA copy through a buffer 16 bytes off a
// page ran at 0.52 of memcpy's rate, through an aligned one at 1.05 (huge pages, two threads).
// Move-only; the contents start uninitialised.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <span>
#include <utility>

namespace nvsentry::hostshim::sim {

class AlignedBuffer {
 public:
  static constexpr size_t kAlignment = 4096;

  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t size)
      : data_(static_cast<uint8_t*>(
            std::aligned_alloc(kAlignment, (size + kAlignment - 1) / kAlignment * kAlignment))),
        size_(size) {
    if (data_ == nullptr && size != 0) throw std::bad_alloc();
  }
  ~AlignedBuffer() { std::free(data_); }
  AlignedBuffer(AlignedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    return *this;
  }

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::span<uint8_t> span() const { return {data_, size_}; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace nvsentry::hostshim::sim
