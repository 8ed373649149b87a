#include "sim/core/frame_pool.h"

#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define PRODSIM_FRAME_POOL 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PRODSIM_FRAME_POOL 0
#endif
#endif
#ifndef PRODSIM_FRAME_POOL
#define PRODSIM_FRAME_POOL 1
#endif

namespace sim::internal {
namespace {

constexpr size_t kClasses = kMaxPooled / kFrameClass;

struct FreeBlock {
  FreeBlock* next;
};

// One thread's free lists; the blocks go back to operator delete when the
// thread ends.
class ThreadFrames {
 public:
  ThreadFrames() = default;
  ThreadFrames(const ThreadFrames&) = delete;
  ThreadFrames& operator=(const ThreadFrames&) = delete;
  ~ThreadFrames() {
    for (FreeBlock*& head : free_) {
      while (head != nullptr) {
        FreeBlock* b = head;
        head = b->next;
        ::operator delete(static_cast<void*>(b));
      }
    }
  }
  FreeBlock*& list(size_t cls) { return free_[cls]; }

 private:
  FreeBlock* free_[kClasses] = {};
};

thread_local ThreadFrames frames;

// The class of a size: 1..64 -> 0, 65..128 -> 1, ...
size_t ClassOf(size_t size) { return (size - 1) / kFrameClass; }

}  // namespace

void* AllocateFrame(size_t size) {
  if (!PRODSIM_FRAME_POOL || size == 0 || size > kMaxPooled) return ::operator new(size);
  const size_t cls = ClassOf(size);
  FreeBlock*& head = frames.list(cls);
  if (head != nullptr) {
    FreeBlock* b = head;
    head = b->next;
    return b;
  }
  return ::operator new((cls + 1) * kFrameClass);
}

void FreeFrame(void* frame, size_t size) {
  if (!PRODSIM_FRAME_POOL || size == 0 || size > kMaxPooled) {
    ::operator delete(frame);
    return;
  }
  FreeBlock* b = static_cast<FreeBlock*>(frame);
  FreeBlock*& head = frames.list(ClassOf(size));
  b->next = head;
  head = b;
}

}  // namespace sim::internal
