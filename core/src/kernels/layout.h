// Data layouts, in one place: MXNet's layout names of the spatial ops, channel-first (N, C,
// spatial...) against channel-last (N, spatial..., C), and the shapes between them. Convolution
// kernels run on channel-last data; the channel-last pass (pass/layout.cc) keeps data so between
// them, and oneDNN's memory tags (kernels/onednn.cc) name the same two orders.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "hybridnet/param.h"
#include "hybridnet/shape.h"

namespace hybridnet {
namespace internal {

/// Data layouts of the spatial ops (MXNet's names). Convolution accepts all but NWC.
enum class Layout { kNCW, kNCHW, kNCDHW, kNWC, kNHWC, kNDHWC };

inline const EnumNames<Layout>& PoolingLayoutNames() {
  static const EnumNames<Layout> names = {{"NCW", Layout::kNCW},     {"NCHW", Layout::kNCHW},
                                          {"NCDHW", Layout::kNCDHW}, {"NWC", Layout::kNWC},
                                          {"NHWC", Layout::kNHWC},   {"NDHWC", Layout::kNDHWC}};
  return names;
}

inline const EnumNames<Layout>& ConvLayoutNames() {
  static const EnumNames<Layout> names = {{"NCW", Layout::kNCW},
                                          {"NCHW", Layout::kNCHW},
                                          {"NCDHW", Layout::kNCDHW},
                                          {"NHWC", Layout::kNHWC},
                                          {"NDHWC", Layout::kNDHWC}};
  return names;
}

inline const char* LayoutName(Layout layout) {
  switch (layout) {
    case Layout::kNCW:
      return "NCW";
    case Layout::kNCHW:
      return "NCHW";
    case Layout::kNCDHW:
      return "NCDHW";
    case Layout::kNWC:
      return "NWC";
    case Layout::kNHWC:
      return "NHWC";
    case Layout::kNDHWC:
      return "NDHWC";
  }
  return "?";
}

/// Number of spatial dimensions of a layout.
inline size_t LayoutRank(Layout layout) { return std::string(LayoutName(layout)).size() - 2; }

inline bool IsChannelLast(Layout layout) {
  return layout == Layout::kNWC || layout == Layout::kNHWC || layout == Layout::kNDHWC;
}

/// NCW, NCHW or NCDHW for 1, 2 or 3 spatial dimensions.
inline Layout ChannelFirstLayout(size_t spatial_rank) {
  return spatial_rank == 1 ? Layout::kNCW : spatial_rank == 2 ? Layout::kNCHW : Layout::kNCDHW;
}

/// NWC, NHWC or NDHWC for 1, 2 or 3 spatial dimensions.
inline Layout ChannelLastLayout(size_t spatial_rank) {
  return spatial_rank == 1 ? Layout::kNWC : spatial_rank == 2 ? Layout::kNHWC : Layout::kNDHWC;
}

/// True for MXNet's channel-first names and for no layout given ("", "None").
inline bool IsChannelFirstName(const std::string& layout) {
  return layout.empty() || layout == "None" || layout == "NCW" || layout == "NCHW" ||
         layout == "NCDHW";
}

/// The channel-last shape (N, spatial..., C) of a channel-first one (N, C, spatial...), and back;
/// an unknown shape (fewer than two dims) stays as it is.
inline Shape ChannelLastShape(const Shape& s) {
  if (s.ndim() < 2) return s;
  std::vector<int64_t> d = {s[0]};
  d.insert(d.end(), s.begin() + 2, s.end());
  d.push_back(s[1]);
  return Shape(d);
}

inline Shape ChannelFirstShape(const Shape& s) {
  if (s.ndim() < 2) return s;
  std::vector<int64_t> d = {s[0], s[s.ndim() - 1]};
  d.insert(d.end(), s.begin() + 1, s.end() - 1);
  return Shape(d);
}

class Workspace;

/// Copies channel-first data (N, C, S) to channel-last (N, S, C), or back; S is the product of
/// the spatial dims. Exact (a copy), on a oneDNN reorder (onednn.cc).
void Relayout(const float* src, float* dst, int64_t N, int64_t C, int64_t S, bool to_channel_last,
              Workspace* workspace);

}  // namespace internal
}  // namespace hybridnet
