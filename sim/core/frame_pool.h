// FramePool: where coroutine frames come from.
//
// Every call of a Task<T> function allocates a frame, and the model calls
// them at every step (a request, a response, a retry), so operator new and
// delete were a fifth of a run's time. Frames come instead from
// per-thread free lists by size class (64-byte steps up to kMaxPooled; a
// larger frame goes to operator new): after the first run on a thread a
// frame costs a pop and a push. Per thread, because explore's runs go on
// several threads (scenarios/parallel.h) and a run's frames live and die on
// its thread; a thread's lists are freed when it ends.
//
// Under AddressSanitizer the pool is off (every frame from operator new),
// so that a use of a destroyed frame is still reported.
#ifndef PRODSIM_SIM_CORE_FRAME_POOL_H_
#define PRODSIM_SIM_CORE_FRAME_POOL_H_

#include <cstddef>

namespace sim::internal {

inline constexpr size_t kFrameClass = 64;
inline constexpr size_t kMaxPooled = 4096;

void* AllocateFrame(size_t size);
// REQUIRES: size is what AllocateFrame was given.
void FreeFrame(void* frame, size_t size);

}  // namespace sim::internal

#endif  // PRODSIM_SIM_CORE_FRAME_POOL_H_
