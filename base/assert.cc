#include "base/assert.h"

#include <cstdio>
#include <cstdlib>

namespace sim::internal {

void AssertFail(const char* expr, const char* file, int line, const char* msg) {
  std::fprintf(stderr, "%s:%d: PRODSIM_ASSERT failed: %s%s%s\n", file, line, expr,
               msg != nullptr ? ": " : "", msg != nullptr ? msg : "");
  std::fflush(stderr);
  std::abort();
}

}  // namespace sim::internal
