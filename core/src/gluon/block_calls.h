// Watching a block tree run (MXNet's forward hooks, as Block.summary uses them): every call of
// Block::operator() on this thread is reported, after the call, to the current observer.
#pragma once

#include <string>
#include <vector>

#include "hybridnet/gluon/block.h"

namespace hybridnet {
namespace internal {

/// Receives the block calls of one thread (see CurrentBlockCallObserver).
class BlockCallObserver {
 public:
  virtual ~BlockCallObserver() = default;
  /// `block` returned `outputs`; `description` is its repr's first line, `alias` its prefix
  /// alias, `own_params` the parameters it declared itself (not its children's).
  virtual void Called(gluon::Block& block, const std::string& description, const std::string& alias,
                      const std::vector<gluon::ParameterPtr>& own_params,
                      const std::vector<NDArray>& outputs) = 0;
};

/// This thread's observer (nullptr: none); whoever sets it restores the previous one.
BlockCallObserver*& CurrentBlockCallObserver();

}  // namespace internal
}  // namespace hybridnet
