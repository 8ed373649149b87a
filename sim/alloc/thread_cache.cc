// A replacement for the global operator new and delete in prodsim's own
// binaries (prodsim, the benchmarks): small blocks come from per-thread
// free lists by size class, so that the model's many short-lived objects
// (coroutine frames: every call of a Task function makes one; messages,
// requests, shared_ptr control blocks, btree nodes, vectors) cost a pop
// and a push instead of glibc's free path, which a run's bursts
// of frees push out of its small per-thread cache into the bins (a seventh
// of a small scenario's instructions went to malloc and free).
//
// Every block carries a 16-byte header (so the pointer handed out keeps
// malloc's 16-byte alignment) holding its class, because unsized delete
// must find it. A thread keeps at most kMaxCachedBytes per class; past that
// a freed block goes back to free(), so a thread that frees what others
// allocated (explore's consumer, which drops the runs' outputs) does not
// hoard memory. A thread's lists go back to free() when it ends; a block
// freed after that (a static destructor) goes to free() directly.
//
// Not built under a sanitizer (PRODSIM_THREAD_CACHE is then 0): ASan's own
// operator new must see every allocation to report a use after free.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PRODSIM_THREAD_CACHE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define PRODSIM_THREAD_CACHE 0
#endif
#endif
#ifndef PRODSIM_THREAD_CACHE
#define PRODSIM_THREAD_CACHE 1
#endif

#if PRODSIM_THREAD_CACHE

namespace {

constexpr size_t kHeader = 16;
constexpr size_t kStep = 16;
constexpr size_t kMaxSmall = 4096;  // payload bytes (coroutine frames too); larger: malloc alone
constexpr size_t kClasses = kMaxSmall / kStep;
constexpr uint32_t kBig = 0xffffffff;
constexpr size_t kMaxCachedBytes = size_t{1} << 20;  // per class and thread

struct Header {
  uint32_t cls;
  uint32_t pad[3];
};
static_assert(sizeof(Header) == kHeader);

struct Free {
  Free* next;
};

struct Lists {
  Free* head[kClasses];
  uint32_t count[kClasses];
  bool dead;  // the thread's destructor ran
};

// Zero-initialised and trivially destructible: usable from the first
// allocation of the thread to its last.
thread_local Lists lists;

size_t BlockBytes(uint32_t cls) { return kHeader + (size_t{cls} + 1) * kStep; }

void DrainLists() {
  for (size_t c = 0; c < kClasses; ++c) {
    while (Free* f = lists.head[c]) {
      lists.head[c] = f->next;
      std::free(f);
    }
    lists.count[c] = 0;
  }
  lists.dead = true;
}

struct Drainer {
  ~Drainer() { DrainLists(); }
};

void* Raw(size_t bytes) {
  for (;;) {
    if (void* p = std::malloc(bytes)) return p;
    std::new_handler h = std::get_new_handler();
    if (h == nullptr) return nullptr;
    h();
  }
}

void* Allocate(size_t size) {
  if (size == 0) size = 1;
  if (size > kMaxSmall) {
    void* raw = Raw(size + kHeader);
    if (raw == nullptr) return nullptr;
    static_cast<Header*>(raw)->cls = kBig;
    return static_cast<char*>(raw) + kHeader;
  }
  const uint32_t cls = static_cast<uint32_t>((size - 1) / kStep);
  if (Free* f = lists.head[cls]) {
    lists.head[cls] = f->next;
    --lists.count[cls];
    static_cast<Header*>(static_cast<void*>(f))->cls = cls;
    return reinterpret_cast<char*>(f) + kHeader;
  }
  if (!lists.dead) {
    // The first block of the thread arms the drain at its end.
    thread_local Drainer drainer;
    (void)drainer;
  }
  void* raw = Raw(BlockBytes(cls));
  if (raw == nullptr) return nullptr;
  static_cast<Header*>(raw)->cls = cls;
  return static_cast<char*>(raw) + kHeader;
}

void Release(void* p) {
  if (p == nullptr) return;
  char* raw = static_cast<char*>(p) - kHeader;
  const uint32_t cls = reinterpret_cast<Header*>(raw)->cls;
  if (cls == kBig || lists.dead || size_t{lists.count[cls]} * BlockBytes(cls) >= kMaxCachedBytes) {
    std::free(raw);
    return;
  }
  Free* f = reinterpret_cast<Free*>(raw);
  f->next = lists.head[cls];
  lists.head[cls] = f;
  ++lists.count[cls];
}

void* AllocateOrThrow(size_t size) {
  void* p = Allocate(size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(size_t size) { return AllocateOrThrow(size); }
void* operator new[](size_t size) { return AllocateOrThrow(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept { return Allocate(size); }
void* operator new[](size_t size, const std::nothrow_t&) noexcept { return Allocate(size); }
void operator delete(void* p) noexcept { Release(p); }
void operator delete[](void* p) noexcept { Release(p); }
void operator delete(void* p, size_t) noexcept { Release(p); }
void operator delete[](void* p, size_t) noexcept { Release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { Release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { Release(p); }

#endif  // PRODSIM_THREAD_CACHE
