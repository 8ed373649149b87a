// Tiny local stand-ins for the status macros that Abseil 20220623 lacks.
#ifndef PRODSIM_BASE_STATUS_MACROS_H_
#define PRODSIM_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define PRODSIM_CONCAT_INNER_(a, b) a##b
#define PRODSIM_CONCAT_(a, b) PRODSIM_CONCAT_INNER_(a, b)

// RETURN_IF_ERROR(expr): returns the status of `expr` from the enclosing
// function when it is not OK.
#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    ::absl::Status prodsim_status_ = (expr);           \
    if (!prodsim_status_.ok()) return prodsim_status_; \
  } while (0)

// ASSIGN_OR_RETURN(lhs, expr): `lhs = *expr` or return its status.
// `lhs` may be a declaration (auto x), so no parentheses can go round it.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL_(PRODSIM_CONCAT_(prodsim_or_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                           \
  if (!tmp.ok()) return tmp.status();          \
  lhs = std::move(*tmp)
// NOLINTEND(bugprone-macro-parentheses)

#endif  // PRODSIM_BASE_STATUS_MACROS_H_
