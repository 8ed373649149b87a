// The thread cache (thread_cache.cc) behind operator new: blocks of every
// class keep their bytes, come back in LIFO order on the thread that freed
// them, and may be freed on another thread or after their thread ended.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCached = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kCached = false;
#else
constexpr bool kCached = true;
#endif
#else
constexpr bool kCached = true;
#endif

// Fills and checks a block with a pattern of its own.
void Fill(unsigned char* p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(seed + i * 7);
}
bool Holds(const unsigned char* p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != static_cast<unsigned char>(seed + i * 7)) return false;
  }
  return true;
}

TEST(ThreadCacheTest, EverySizeKeepsItsBytesAndAlignment) {
  std::vector<std::pair<unsigned char*, size_t>> blocks;
  for (size_t n = 0; n <= 5000; n += (n < 300 ? 1 : 37)) {
    auto* p = static_cast<unsigned char*>(::operator new(n));
    ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u) << n;
    Fill(p, n, static_cast<unsigned>(n));
    blocks.emplace_back(p, n);
  }
  for (const auto& [p, n] : blocks) EXPECT_TRUE(Holds(p, n, static_cast<unsigned>(n))) << n;
  // Half with sized delete (where the compiler has it), half unsized: both
  // find the block's class.
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (i % 2 == 0) {
#if defined(__cpp_sized_deallocation)
      ::operator delete(blocks[i].first, blocks[i].second);
#else
      // clang 14 declares sized delete only with -fsized-deallocation.
      ::operator delete(blocks[i].first);
#endif
    } else {
      ::operator delete(blocks[i].first);
    }
  }
}

TEST(ThreadCacheTest, AFreedBlockIsReusedFirst) {
  if (!kCached) GTEST_SKIP() << "a sanitizer build keeps the standard operator new";
  void* a = ::operator new(40);
  void* b = ::operator new(40);
  ::operator delete(a);
  ::operator delete(b);
  void* c = ::operator new(33);  // the same 16-byte class as 40 (33..48)
  void* d = ::operator new(48);
  EXPECT_EQ(c, b);
  EXPECT_EQ(d, a);
  ::operator delete(c);
  ::operator delete(d);
}

TEST(ThreadCacheTest, BlocksCrossThreadsAndOutliveTheirThread) {
  // Allocated on workers, freed on this thread after the workers ended
  // (explore's consumer drops what its runs allocated), and the reverse.
  std::vector<std::unique_ptr<std::string>> made(4000);
  {
    std::vector<std::thread> workers;
    for (int t = 0; t < 4; ++t) {
      workers.emplace_back([&made, t] {
        for (size_t i = static_cast<size_t>(t); i < made.size(); i += 4) {
          made[i] = std::make_unique<std::string>(20 + i % 300, static_cast<char>('a' + i % 26));
        }
      });
    }
    for (std::thread& w : workers) w.join();
  }
  for (size_t i = 0; i < made.size(); ++i) {
    ASSERT_EQ(made[i]->size(), 20 + i % 300);
    ASSERT_EQ((*made[i])[0], static_cast<char>('a' + i % 26));
  }
  std::vector<int*> mine;
  for (int i = 0; i < 1000; ++i) mine.push_back(new int[static_cast<size_t>(i % 50 + 1)]{i});
  std::thread other([&mine] {
    for (int* p : mine) delete[] p;
  });
  other.join();
  made.clear();
}

TEST(ThreadCacheTest, LargeBlocksGoToMalloc) {
  std::vector<unsigned char*> big;
  for (size_t n : {4097u, 65536u, 1u << 22}) {
    auto* p = static_cast<unsigned char*>(::operator new(n));
    Fill(p, n, 3);
    EXPECT_TRUE(Holds(p, n, 3));
    big.push_back(p);
  }
  for (unsigned char* p : big) ::operator delete(p);
}

}  // namespace
