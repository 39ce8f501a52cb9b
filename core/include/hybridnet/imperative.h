// Eager invocation: parse attributes, infer shapes and types, allocate, run the kernel.
// When any input is symbolic (hybridize tracing) a graph node is appended instead and symbolic
// outputs are returned.
#pragma once

#include <string>
#include <vector>

#include "hybridnet/ndarray.h"
#include "hybridnet/op.h"

namespace hybridnet {

/// Runs a pre-parsed op (the fast path: no registry look-up, no attribute parsing).
std::vector<NDArray> Invoke(const NodeAttrs& attrs, const std::vector<NDArray>& inputs);
/// Looks the op up by name or alias and parses `attrs`.
std::vector<NDArray> Invoke(const std::string& op_name, const std::vector<NDArray>& inputs,
                            const AttrDict& attrs = {}, const std::string& node_name = "");

/// Computes output shapes and dtypes of an op for given inputs (no kernel run).
void InferOutputs(const NodeAttrs& attrs, std::vector<Shape>* in_shapes,
                  std::vector<DType>* in_types, std::vector<Shape>* out_shapes,
                  std::vector<DType>* out_types);

/// Sets the number of threads every kernel uses, process-wide, for calls on any thread: our own
/// kernels' loops, oneDNN's (OpenMP) and the matrix products (split between the threads, each
/// block on one OpenBLAS thread). Without it: OMP_NUM_THREADS when set, else the number of
/// cores. 1 is fastest for small problems on few cores.
void SetNumThreads(int num_threads);
/// The number of threads every kernel uses (SetNumThreads', else OpenMP's default).
int GetNumThreads();
/// The kernel libraries in force, for benchmark reports: where matrix products run (OpenBLAS
/// and its kernel set, or oneDNN's sgemm where OpenBLAS does not know the CPU and falls back to
/// SSE kernels) and oneDNN's version and instruction set (convolutions).
std::string KernelLibraries();

/// A capability of this library on this CPU, named as MXNet's mx.runtime.Features names its
/// (CPU_AVX512, MKLDNN, CUDA, ...) where MXNet has the name.
struct RuntimeFeature {
  const char* name;         ///< "CPU_AVX512", "INT8_EXACT", "MKLDNN", ...
  bool enabled;             ///< whether this library has it on this CPU
  const char* description;  ///< what it means for hybridnet, one sentence
};
/// Every feature, in a fixed order: the one table the C API, the CLI, the bindings and the tests
/// that depend on the CPU read.
const std::vector<RuntimeFeature>& RuntimeFeatures();

}  // namespace hybridnet
