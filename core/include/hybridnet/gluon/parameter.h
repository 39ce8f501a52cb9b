// Parameter: a named weight with deferred initialization. Shapes may hold 0 for dimensions only
// known at the first forward; initialize() records the initializer and the first forward fills
// the shape and draws the values.
#pragma once

#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "hybridnet/autograd.h"
#include "hybridnet/gluon/initializer.h"
#include "hybridnet/ndarray.h"
#include "hybridnet/symbol.h"

namespace hybridnet {
namespace gluon {

class Block;

/// A named weight of a block (MXNet's gluon.Parameter): shape, dtype, initializer and value;
/// initialization may wait until the first forward completes the shape.
class Parameter {
 public:
  /// `local_name` is the attribute name ("weight"); the full name is the owner's prefix + it.
  Parameter(Block* owner, std::string local_name, Shape shape, DType dtype = DType::kFloat32,
            InitializerPtr init = nullptr, bool differentiable = true);

  /// "hybridsequential0_dense0_weight" (MXNet 1.x naming).
  std::string name() const;
  /// What the constructor was given ("weight"; the shape as completed so far).
  ///@{
  const std::string& local_name() const { return local_name_; }
  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  const InitializerPtr& init() const { return init_; }
  bool differentiable() const { return differentiable_; }
  ///@}

  /// Records the initializer (the parameter's own one wins) and draws values now when the shape
  /// is known; otherwise initialization waits for the first forward.
  void Initialize(const InitializerPtr& default_init, bool force_reinit = false);
  /// Whether the parameter has a value.
  bool is_initialized() const { return !data_.is_none(); }
  /// Whether initialization waits for the shape (the first forward).
  bool is_deferred() const { return deferred_init_ != nullptr && data_.is_none(); }

  /// Completes unknown (0) dimensions; a known dimension that differs is a kShapeError naming the
  /// parameter. Runs a pending deferred initialization once the shape is complete.
  void SetShape(const Shape& shape);

  /// The value. Throws kInvalidArgument when not initialized, saying why (no initialize() call,
  /// or deferred until the first forward).
  const NDArray& data() const;
  /// Replaces the value; same shape (after completing unknown dims) and dtype, else kShapeError.
  /// Copies into the existing storage so running graphs see the new values.
  void SetData(const NDArray& value);

  /// The graph variable standing for this parameter, with MXNet's attributes (__shape__,
  /// __dtype__, __lr_mult__, __wd_mult__, __storage_type__, __init__). Created on first use and
  /// then kept, so the recorded __shape__ is the one known at the first trace (as MXNet does).
  const Symbol& var();

  /// During a hybridize() trace the variable as a symbolic array, else data().
  NDArray Value();

  /// Marks the value as an autograd variable with a new zero gradient buffer (MXNet's
  /// grad_req: write, add or null), so backward through eager ops and hybridized blocks alike
  /// stores its gradient. Needs an initialized value; re-marking starts a new buffer. Sets
  /// grad_req to `req`.
  void AttachGrad(autograd::GradReq req = autograd::GradReq::kWrite);
  /// The gradient buffer (MXNet's param.grad()): zeros until a backward writes it. The buffer
  /// is made at the first call, or when a recorded forward first reads the value, so models
  /// only run for inference never hold one. kInvalidArgument when grad_req is null or the
  /// value does not exist yet.
  NDArray Grad();
  /// Sets the gradient buffer to zeros (MXNet's zero_grad; nothing when there is none).
  void ZeroGrad();
  /// Casts the value and the gradient buffer, keeping their values, to `dtype` (MXNet's
  /// Parameter.cast); before initialization only the dtype to draw in changes. The value gets new
  /// storage, so blocks holding a traced graph must drop it (Block::Cast does).
  void Cast(DType dtype);

  /// How backward stores the gradient (MXNet's grad_req; kWrite by default, kNull for
  /// parameters that are not differentiable, such as BatchNorm's running statistics, which keep
  /// kNull whatever is set, as in MXNet). Setting kNull drops the gradient buffer; any other
  /// change starts a new zero one.
  autograd::GradReq grad_req() const { return grad_req_; }
  /// Sets grad_req (see grad_req()).
  void set_grad_req(autograd::GradReq req);
  /// MXNet's lr_mult and wd_mult: the Trainer scales this parameter's learning rate and weight
  /// decay by them.
  ///@{
  float lr_mult() const { return lr_mult_; }
  float wd_mult() const { return wd_mult_; }
  void set_lr_mult(float mult) { lr_mult_ = mult; }
  void set_wd_mult(float mult) { wd_mult_ = mult; }
  ///@}

 private:
  Block* owner_;
  std::string local_name_;
  Shape shape_;
  DType dtype_;
  InitializerPtr init_;
  bool differentiable_;
  InitializerPtr deferred_init_;
  NDArray data_;
  Symbol var_;
  autograd::GradReq grad_req_;
  float lr_mult_ = 1.0f;
  float wd_mult_ = 1.0f;

  // Makes the gradient buffer grad_req asks for, when the value exists and has none yet.
  void EnsureGrad();
};

/// Parameters are shared between a block and the dictionaries listing them.
using ParameterPtr = std::shared_ptr<Parameter>;

/// Parameters by full name, in registration order.
class ParameterDict {
 public:
  /// Adds `p` under its full name.
  void Add(const ParameterPtr& p);
  /// The parameters in registration order.
  const std::vector<ParameterPtr>& list() const { return params_; }
  ParameterPtr Get(const std::string& full_name) const;  ///< nullptr when absent
  /// The number of parameters.
  size_t size() const { return params_.size(); }
  /// The full names, in registration order.
  std::vector<std::string> Keys() const;
  /// Initializes every parameter (Parameter::Initialize).
  void Initialize(const InitializerPtr& init = Uniform(), bool force_reinit = false);
  /// Zeroes every gradient buffer (Parameter::ZeroGrad).
  void ZeroGrad();
  /// Sets every parameter's grad_req (MXNet's collect_params(...).setattr('grad_req', ...)).
  void SetGradReq(autograd::GradReq req);

 private:
  std::vector<ParameterPtr> params_;
};

}  // namespace gluon
}  // namespace hybridnet
