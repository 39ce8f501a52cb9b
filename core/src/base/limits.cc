#include "hybridnet/limits.h"

#include <atomic>

#include "hybridnet/base.h"
#include "hybridnet/shape.h"

namespace hybridnet {

namespace {

constexpr LimitInfo kLimits[kNumLimits] = {
    {"HN_LIMIT_MAX_NODES", int64_t{1} << 22},             // ResNet-152 has ~1300 nodes
    {"HN_LIMIT_MAX_RANK", 32},                            // MXNet's own ceiling
    {"HN_LIMIT_MAX_TENSOR_ELEMENTS", int64_t{1} << 32},   // 16 GiB of float32
    {"HN_LIMIT_MAX_ALLOCATION_BYTES", int64_t{1} << 34},  // 16 GiB
};

std::atomic<int64_t>& Value(Limit limit) {
  static std::atomic<int64_t> values[kNumLimits] = {{kLimits[0].default_value},
                                                    {kLimits[1].default_value},
                                                    {kLimits[2].default_value},
                                                    {kLimits[3].default_value}};
  return values[static_cast<int>(limit)];
}

int Index(Limit limit) {
  const int i = static_cast<int>(limit);
  HN_CHECK(i >= 0 && i < kNumLimits, kInvalidArgument) << "unknown limit " << i;
  return i;
}

}  // namespace

const LimitInfo& DescribeLimit(Limit limit) { return kLimits[Index(limit)]; }

int64_t GetLimit(Limit limit) { return Value(static_cast<Limit>(Index(limit))).load(); }

void SetLimit(Limit limit, int64_t value) {
  const LimitInfo& info = DescribeLimit(limit);
  HN_CHECK(value >= 1, kInvalidArgument) << info.c_name << " must be at least 1, got " << value;
  Value(limit).store(value);
}

std::string LimitNote(Limit limit) {
  return std::string(" (") + DescribeLimit(limit).c_name + " = " + std::to_string(GetLimit(limit)) +
         "; raise it with hn_set_limit)";
}

void CheckShapeLimits(const Shape& shape, const std::string& context) {
  HN_CHECK(static_cast<int64_t>(shape.ndim()) <= GetLimit(Limit::kMaxRank), kShapeError)
      << context << "a shape of " << shape.ndim() << " dimensions is above the rank limit"
      << LimitNote(Limit::kMaxRank);
  int64_t elements = 1;
  for (int64_t d : shape) {
    HN_CHECK(d >= 0, kShapeError) << context << "shape " << shape << " has a negative dimension";
    HN_CHECK(!__builtin_mul_overflow(elements, d, &elements) &&
                 elements <= GetLimit(Limit::kMaxTensorElements),
             kOutOfMemory)
        << context << "shape " << shape << " has more elements than the tensor limit"
        << LimitNote(Limit::kMaxTensorElements);
  }
}

}  // namespace hybridnet
