// The `hybridnet` command: what its subcommands share. A C API client only (hybridnet/c_api.h),
// as any binding would be.
//
// A subcommand is one file (info.cc, convert.cc, ...) defining a `Command`: its name, its
// arguments and options as a table, and the function that runs it. The table generates the
// parsing, `--help` and the usage errors; main.cc lists the commands. Adding one:
//
//   // tools/cli/hello.cc
//   extern const Command kHello{"hello", "greets NAME", {{"NAME", "who"}},
//                               {{"--loud", nullptr, "in capitals"}},
//                               [](const Args& args) { ... return 0; }};
//
// plus its row `X(kHello)` in main.cc's HN_CLI_COMMANDS (CMake compiles every .cc of this
// folder).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/c_api.h"

namespace hybridnet_cli {

// ---- errors ---------------------------------------------------------------------------------

/// A failed C API call (code < 0, printed with its status name, exit 1) or a usage error
/// (code 0, printed with the usage, exit 2).
struct CliError {
  int code;
  std::string message;
};

/// Throws the C API's last error when `status` is not HN_OK.
void Check(int status);
[[noreturn]] void UsageError(const std::string& message);

// ---- owned C handles --------------------------------------------------------------------------

template <typename T, void (*Free)(T*)>
struct FreeWith {
  void operator()(T* handle) const { Free(handle); }
};
/// A C handle freed by `Free`, e.g. Owned<hn_tensor, hn_tensor_free>.
template <typename T, void (*Free)(T*)>
using Owned = std::unique_ptr<T, FreeWith<T, Free>>;
using Tensor = Owned<hn_tensor, hn_tensor_free>;

// ---- the command table ------------------------------------------------------------------------

/// A positional argument: its name in usage lines ("FILE") and what it is.
struct Positional {
  const char* name;
  const char* help;
};

/// An option: `--name VALUE` (value_name set) or a flag (value_name nullptr).
struct Option {
  const char* name;
  const char* value_name;
  const char* help;
  bool repeatable = false;
  bool required = false;
};

/// The parsed command line of one subcommand (checked against its table).
class Args {
 public:
  const std::string& positional(size_t index) const { return positional_.at(index); }
  bool flag(const std::string& name) const { return values_.count(name) > 0; }
  /// The last value given for `name`, if any.
  std::optional<std::string> value(const std::string& name) const;
  /// Every value given for a repeatable option, in order.
  std::vector<std::string> values(const std::string& name) const;
  /// `name`'s value as a whole number >= `min`, or `fallback` when not given.
  int Number(const std::string& name, int fallback, int min) const;

 private:
  friend struct Command;
  std::vector<std::string> positional_;
  std::map<std::string, std::vector<std::string>> values_;
};

struct Command {
  const char* name;
  const char* summary;  ///< one line, shown by `hybridnet --help`
  std::vector<Positional> positionals;
  std::vector<Option> options;
  std::function<int(const Args&)> run;
  const char* details = "";  ///< more text for `hybridnet COMMAND --help`

  /// Checks `argv` against the table: unknown options, missing values, positionals and
  /// required options are usage errors naming what is wrong.
  Args Parse(const std::vector<std::string>& argv) const;
  /// "hybridnet run PREFIX EPOCH --input NAME=FILE.npy [...] [--eager]"
  std::string UsageLine() const;
  /// The usage line, the summary, the details and every argument and option.
  std::string Help() const;
};

// ---- shared helpers ---------------------------------------------------------------------------

std::string ReadFile(const std::string& path);

enum class FileKind { kSymbol, kParams, kNpy };
/// Symbol JSON, an MXNet NDArray list (.params/.nd) or .npy, by content; HN_ERR_FORMAT otherwise.
FileKind DetectKind(const std::string& path, const std::string& bytes);

/// "(1, 512)", and "(3,)" for one dimension, as numpy prints shapes.
std::string ShapeText(const std::vector<int64_t>& dims);
std::vector<int64_t> TensorShape(const hn_tensor* t);
std::string TensorDType(const hn_tensor* t);
/// The first `max_values` elements as floats (any dtype, converted with the Cast op).
std::vector<float> FirstValues(hn_tensor* t, size_t max_values);
/// "dtype (shape) [v0, v1, ...]" with at most `max_values` values.
std::string TensorSummary(hn_tensor* t, size_t max_values);

using ShapeMap = std::map<std::string, std::vector<int64_t>>;
/// NAME=D1,D2,... specs (each name once); usage errors name the bad spec.
ShapeMap ParseShapes(const std::vector<std::string>& specs);
/// Shape inference of `symbol` from the known shapes (partial: unknown dims stay 0).
Owned<hn_shape_info, hn_shape_info_free> InferShapes(const hn_symbol* symbol,
                                                     const ShapeMap& known);

/// The --dtype option's value: HN_DTYPE_FLOAT32 when absent or "float32", HN_DTYPE_BFLOAT16 for
/// "bfloat16" (hn_predictor_set_dtype); a usage error otherwise.
int ComputeDType(const std::optional<std::string>& value);

/// PREFIX-symbol.json + PREFIX-EEEE.params with the model's input and output names.
struct LoadedModel {
  std::string prefix;
  int epoch = 0;
  Owned<hn_model, hn_model_free> model;
  std::vector<std::string> inputs, outputs;
};
/// Loads PREFIX and EPOCH given as text (a bad EPOCH is a usage error).
LoadedModel LoadModel(const std::string& prefix, const std::string& epoch);

/// The export imported as a block taking every model input (eager unless hybridized).
Owned<hn_block, hn_block_free> ImportBlock(const LoadedModel& m);
/// Every model input for a block, in order: the given tensors, and zeros of the inferred shape
/// for the others (a block, unlike a predictor, needs all its inputs). Unknown names are errors.
std::vector<Tensor> BlockInputs(const LoadedModel& m, std::map<std::string, Tensor> given);
std::vector<Tensor> ForwardBlock(hn_block* block, const std::vector<Tensor>& inputs,
                                 size_t num_outputs);

}  // namespace hybridnet_cli
