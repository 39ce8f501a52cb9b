// Hostile-input limits: caps that every loader, shape check and allocation reads, so a malformed
// or hostile file gets a clear error naming the limit instead of exhausting the stack, the memory
// or the machine. Process-wide; the C API sets them (hn_set_limit / hn_get_limit, whose
// HN_LIMIT_* values are this enum's).
//
//   SetLimit(Limit::kMaxNodes, 10'000'000);   // allow bigger graphs
#pragma once

#include <cstdint>
#include <string>

namespace hybridnet {

class Shape;

/// The limits a process can set; see the file comment.
enum class Limit : int {
  kMaxNodes = 0,            ///< nodes in one graph (symbol JSON)
  kMaxRank = 1,             ///< dimensions of one tensor
  kMaxTensorElements = 2,   ///< elements of one tensor
  kMaxAllocationBytes = 3,  ///< bytes of one allocation (tensors, the executor's arena)
};
/// The number of Limit values.
constexpr int kNumLimits = 4;

/// A limit's C name and default.
struct LimitInfo {
  const char* c_name;     ///< the C API's name, e.g. "HN_LIMIT_MAX_NODES"
  int64_t default_value;  ///< the value until hn_set_limit / SetLimit changes it
};

/// The one table of limits: C names and defaults (far above any real model's needs).
const LimitInfo& DescribeLimit(Limit limit);
/// The limit's current value. Thread-safe.
int64_t GetLimit(Limit limit);
/// Throws kInvalidArgument unless value >= 1. Thread-safe.
void SetLimit(Limit limit, int64_t value);
/// " (HN_LIMIT_MAX_NODES = 4194304; raise it with hn_set_limit)": for error messages.
std::string LimitNote(Limit limit);

/// Throws unless `shape` is within the rank and element limits, checked without overflow:
/// too many dimensions or a negative one is kShapeError, too many elements kOutOfMemory.
/// `context` prefixes the message (e.g. "_full(node): "). Called before anything is allocated.
void CheckShapeLimits(const Shape& shape, const std::string& context = "");

}  // namespace hybridnet
