// PRODSIM_ASSERT: the invariant check of prodsim's own code.
//
// Always on, in every build and preset; never compiled out. A failure is a
// bug in prodsim (not in the modelled producer), so it prints where and what
// and aborts. Split compound conditions into separate asserts so a failure
// says which part broke.
#ifndef PRODSIM_BASE_ASSERT_H_
#define PRODSIM_BASE_ASSERT_H_

namespace sim::internal {
[[noreturn]] void AssertFail(const char* expr, const char* file, int line, const char* msg);
}  // namespace sim::internal

#define PRODSIM_ASSERT(cond)                                           \
  do {                                                                 \
    if (!(cond)) [[unlikely]]                                          \
      ::sim::internal::AssertFail(#cond, __FILE__, __LINE__, nullptr); \
  } while (0)

// PRODSIM_ASSERT_MSG(cond, "why it matters"): the message is a C string.
#define PRODSIM_ASSERT_MSG(cond, msg)                                \
  do {                                                               \
    if (!(cond)) [[unlikely]]                                        \
      ::sim::internal::AssertFail(#cond, __FILE__, __LINE__, (msg)); \
  } while (0)

#endif  // PRODSIM_BASE_ASSERT_H_
