// C API: models (hn_model_*) and predictors (hn_predictor_*).
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "c_api_common.h"
#include "hybridnet/io/json.h"
#include "hybridnet/io/params.h"
#include "hybridnet/onnx.h"

using namespace hn_capi;  // NOLINT
namespace hn = ::hybridnet;

// The C header repeats the core's opset range as macros.
static_assert(HN_ONNX_OPSET_MIN == hn::kOnnxMinOpset && HN_ONNX_OPSET_MAX == hn::kOnnxMaxOpset &&
                  HN_ONNX_OPSET_DEFAULT == hn::kOnnxDefaultOpset,
              "c_api.h and hybridnet/onnx.h disagree on the ONNX opsets");

namespace hn_capi {

std::map<std::string, hn::NDArray> ParamsByName(const std::vector<hn::NDArray>& arrays,
                                                const std::vector<std::string>& names,
                                                const std::string& source) {
  HN_CHECK(!names.empty() || arrays.empty(), kFormatError)
      << "'" << source << "' holds unnamed arrays; a model's params need names "
      << "('arg:NAME' / 'aux:NAME')";
  std::map<std::string, hn::NDArray> params;
  for (size_t i = 0; i < arrays.size(); ++i) {
    std::string key = names[i];
    if (key.rfind("arg:", 0) == 0 || key.rfind("aux:", 0) == 0) key = key.substr(4);
    HN_CHECK(!arrays[i].is_none(), kFormatError)
        << "parameter '" << key << "' in '" << source << "' holds no array";
    params[key] = arrays[i];
  }
  return params;
}

void ExportOnnx(const hn::Symbol& symbol, const std::map<std::string, hn::NDArray>& params,
                const char* path, int opset, int flags, size_t num_known, const char* const* names,
                const int* ndims, const int64_t* dims, const int* dtypes) {
  std::string file = CheckString(path, "path");
  HN_CHECK((flags & ~HN_ONNX_DYNAMIC_BATCH) == 0, kInvalidArgument)
      << "flags " << flags << " has bits other than HN_ONNX_DYNAMIC_BATCH ("
      << HN_ONNX_DYNAMIC_BATCH << ")";
  hn::OnnxExportOptions options;
  options.opset = opset == 0 ? HN_ONNX_OPSET_DEFAULT : opset;
  options.dynamic_batch = (flags & HN_ONNX_DYNAMIC_BATCH) != 0;
  options.input_shapes = ToShapes(num_known, names, ndims, dims);
  for (size_t i = 0; dtypes != nullptr && i < num_known; ++i) {
    options.input_dtypes[names[i]] = ToDType(dtypes[i]);
  }
  options.producer_version = HN_VERSION_STRING;
  hn::SaveOnnx(symbol, params, options, file);
}

}  // namespace hn_capi

namespace {

std::shared_ptr<ModelData> MakeModel(hn::Symbol symbol, hn::NDArrayList list,
                                     const std::string& params_source) {
  auto model = std::make_shared<ModelData>();
  model->symbol = std::move(symbol);
  model->params = ParamsByName(list.arrays, list.names, params_source);
  for (const auto& aux : model->symbol.ListAuxiliaryStates()) {
    HN_CHECK(model->params.count(aux), kNotFound)
        << "auxiliary state '" << aux << "' of the graph has no value in '" << params_source << "'";
  }
  for (const auto& arg : model->symbol.ListArguments())
    if (!model->params.count(arg)) model->input_names.push_back(arg);
  model->inputs.Assign(model->input_names);
  model->outputs.Assign(model->symbol.ListOutputs());
  if (LogEnabled(HN_LOG_INFO)) {
    std::string inputs;
    for (const auto& n : model->input_names) inputs += (inputs.empty() ? "" : ", ") + n;
    Log(HN_LOG_INFO, "loaded a model with " + std::to_string(model->params.size()) +
                         " parameters from '" + params_source + "'; inputs: " + inputs);
  }
  return model;
}

hn_model* NewModel(std::shared_ptr<ModelData> data) {
  auto handle = std::make_unique<hn_model>();
  handle->data = std::move(data);
  return handle.release();
}

// Every predictor of a model binds the model's parameter arrays (never copies): the weights
// convolutions re-lay-out are kept with those arrays, so all predictors share them too.
std::unique_ptr<hn::GraphExecutor> NewExecutor(const ModelData& model, bool fast_math,
                                               hn::DType dtype) {
  hn::ExecutorOptions options;
  options.fast_math = fast_math;
  options.dtype = dtype;
  return std::make_unique<hn::GraphExecutor>(model.symbol, model.input_names, model.params,
                                             options);
}

hn_predictor* NewPredictor(std::shared_ptr<const ModelData> model, bool fast_math,
                           hn::DType dtype) {
  auto p = std::make_unique<hn_predictor>();
  p->executor = NewExecutor(*model, fast_math, dtype);
  p->fast_math = fast_math;
  p->dtype = dtype;
  size_t n = model->input_names.size();
  p->inputs.resize(n);
  p->input_owned.assign(n, false);
  p->model = std::move(model);
  return p.release();
}

size_t InputIndex(const hn_predictor* p, const char* name) {
  std::string n = CheckString(name, "name");
  const auto& names = p->model->input_names;
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == n) return i;
  std::string known;
  for (const auto& k : names) known += (known.empty() ? "" : ", ") + k;
  HN_THROW(kNotFound) << "the model has no input '" << n << "' (inputs: " << known << ")";
}

// Inputs not set are fed zeros of their inferred shape (MXNet's predictor does the same for
// label variables such as SoftmaxOutput's); they are rebuilt when the set shapes change.
const std::vector<hn::NDArray>& Feed(hn_predictor* p) {
  bool complete = std::none_of(p->inputs.begin(), p->inputs.end(),
                               [](const hn::NDArray& a) { return a.is_none(); });
  if (complete) return p->inputs;
  std::vector<hn::Shape> key;
  for (const auto& a : p->inputs) key.push_back(a.is_none() ? hn::Shape() : a.shape());
  if (key != p->feed_key || p->feed.size() != p->inputs.size()) {
    std::map<std::string, hn::Shape> known;
    for (const auto& kv : p->model->params) known[kv.first] = kv.second.shape();
    const auto& names = p->model->input_names;
    for (size_t i = 0; i < names.size(); ++i)
      if (!p->inputs[i].is_none()) known[names[i]] = p->inputs[i].shape();
    hn::Symbol::ShapeResult r = p->model->symbol.InferShape(known, /*partial=*/true);
    std::vector<std::string> args = p->model->symbol.ListArguments();
    std::vector<hn::NDArray> zeros(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      if (!p->inputs[i].is_none()) continue;
      size_t a = static_cast<size_t>(std::find(args.begin(), args.end(), names[i]) - args.begin());
      const hn::Shape& s = r.arg_shapes.at(a);
      HN_CHECK(s.IsKnown(), kInvalidArgument)
          << "input '" << names[i] << "' was not set and its shape cannot be inferred from the "
          << "inputs that were; set it with hn_predictor_set_input";
      zeros[i] = hn::NDArray::Zeros(s);
    }
    p->feed = std::move(zeros);
    p->feed_key = std::move(key);
  }
  for (size_t i = 0; i < p->inputs.size(); ++i)
    if (!p->inputs[i].is_none()) p->feed[i] = p->inputs[i];
  return p->feed;
}

void Forward(hn_predictor* p) {
  const std::vector<hn::NDArray>& feed = Feed(p);
  for (size_t i = 0; i < p->handed_out.size(); ++i) {
    if (p->handed_out[i]) {
      p->outputs[i] = hn::NDArray();
      p->handed_out[i] = false;
    }
  }
  p->has_outputs = false;
  p->executor->Forward(feed, &p->outputs);
  p->handed_out.resize(p->outputs.size(), false);
  p->has_outputs = true;
  if (LogEnabled(HN_LOG_DEBUG)) {
    size_t plans = p->executor->stats().num_plans;
    if (plans != p->plans_seen) {
      p->plans_seen = plans;
      std::string shapes;
      for (const auto& a : feed) shapes += (shapes.empty() ? "" : ", ") + a.shape().ToString();
      Log(HN_LOG_DEBUG,
          "predictor planned for input shapes " + shapes + " (plan " + std::to_string(plans) + ")");
    }
  }
}

const hn::NDArray& Output(const hn_predictor* p, size_t index) {
  HN_CHECK(p->has_outputs, kInvalidArgument)
      << "no outputs yet: call hn_predictor_forward first (or the last forward failed)";
  HN_CHECK(index < p->outputs.size(), kInvalidArgument)
      << "index " << index << " is out of range: the model has " << p->outputs.size() << " outputs";
  return p->outputs[index];
}

}  // namespace

extern "C" {

int hn_model_load(const char* prefix, int epoch, hn_model** out) noexcept {
  HN_API_BEGIN();
  std::string p = CheckString(prefix, "prefix");
  CheckOut(out, "out");
  HN_CHECK(epoch >= 0 && epoch <= 9999, kInvalidArgument)
      << "epoch must be in [0, 9999], got " << epoch;
  char suffix[32];
  std::snprintf(suffix, sizeof(suffix), "-%04d.params", epoch);
  std::string params_file = p + suffix;
  hn::Symbol symbol = hn::Symbol::Load(p + "-symbol.json");
  *out = NewModel(MakeModel(std::move(symbol), hn::LoadNDArrayList(params_file), params_file));
  HN_API_END();
}

int hn_model_load_from_memory(const char* json, size_t json_bytes, const void* params,
                              size_t params_bytes, hn_model** out) noexcept {
  HN_API_BEGIN();
  HN_CHECK(json != nullptr, kInvalidArgument) << "argument 'json' is NULL";
  HN_CHECK(params != nullptr || params_bytes == 0, kInvalidArgument) << "argument 'params' is NULL";
  CheckOut(out, "out");
  hn::Symbol symbol = hn::LoadJSON(std::string(json, json_bytes), "<json buffer>");
  hn::NDArrayList list;  // no bytes: a graph whose every variable is an input
  if (params_bytes > 0) {
    list = hn::ParseNDArrayList(std::string(static_cast<const char*>(params), params_bytes),
                                "<params buffer>");
  }
  *out = NewModel(MakeModel(std::move(symbol), std::move(list), "<params buffer>"));
  HN_API_END();
}

void hn_model_free(hn_model* model) noexcept { delete model; }

int hn_model_input_names(const hn_model* model, const char* const** out_names,
                         size_t* out_count) noexcept {
  HN_API_BEGIN();
  CheckHandle(model, "model");
  CheckOut(out_names, "out_names");
  CheckOut(out_count, "out_count");
  *out_names = model->data->inputs.ptrs.data();
  *out_count = model->data->inputs.ptrs.size();
  HN_API_END();
}

int hn_model_output_names(const hn_model* model, const char* const** out_names,
                          size_t* out_count) noexcept {
  HN_API_BEGIN();
  CheckHandle(model, "model");
  CheckOut(out_names, "out_names");
  CheckOut(out_count, "out_count");
  *out_names = model->data->outputs.ptrs.data();
  *out_count = model->data->outputs.ptrs.size();
  HN_API_END();
}

int hn_model_symbol(const hn_model* model, hn_symbol** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(model, "model");
  CheckOut(out, "out");
  auto handle = std::make_unique<hn_symbol>();
  handle->symbol = model->data->symbol;
  *out = handle.release();
  HN_API_END();
}

int hn_model_export_onnx(const hn_model* model, const char* path, int opset, int flags,
                         size_t num_known, const char* const* names, const int* ndims,
                         const int64_t* dims, const int* dtypes) noexcept {
  HN_API_BEGIN();
  CheckHandle(model, "model");
  ExportOnnx(model->data->symbol, model->data->params, path, opset, flags, num_known, names, ndims,
             dims, dtypes);
  HN_API_END();
}

int hn_symbol_export_onnx(const hn_symbol* symbol, const hn_tensor_list* params, const char* path,
                          int opset, int flags, size_t num_known, const char* const* names,
                          const int* ndims, const int64_t* dims, const int* dtypes) noexcept {
  HN_API_BEGIN();
  CheckHandle(symbol, "symbol");
  std::map<std::string, hn::NDArray> values;
  if (params != nullptr) {
    values = ParamsByName(params->arrays,
                          std::vector<std::string>(params->names.begin(), params->names.end()),
                          "params");
  }
  ExportOnnx(symbol->symbol, values, path, opset, flags, num_known, names, ndims, dims, dtypes);
  HN_API_END();
}

int hn_predictor_create(const hn_model* model, hn_predictor** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(model, "model");
  CheckOut(out, "out");
  *out = NewPredictor(model->data, false, hn::DType::kFloat32);
  HN_API_END();
}

int hn_predictor_clone(const hn_predictor* predictor, hn_predictor** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(predictor, "predictor");
  CheckOut(out, "out");
  *out = NewPredictor(predictor->model, predictor->fast_math, predictor->dtype);
  HN_API_END();
}

void hn_predictor_free(hn_predictor* predictor) noexcept { delete predictor; }

int hn_predictor_set_fast_math(hn_predictor* predictor, int enable) noexcept {
  HN_API_BEGIN();
  CheckHandle(predictor, "predictor");
  HN_CHECK(enable == 0 || enable == 1, kInvalidArgument)
      << "argument 'enable' must be 0 or 1, got " << enable;
  if (predictor->fast_math != (enable == 1)) {
    predictor->executor = NewExecutor(*predictor->model, enable == 1, predictor->dtype);
    predictor->fast_math = enable == 1;
    predictor->plans_seen = 0;
  }
  HN_API_END();
}

int hn_predictor_set_dtype(hn_predictor* predictor, int dtype) noexcept {
  HN_API_BEGIN();
  CheckHandle(predictor, "predictor");
  HN_CHECK(dtype == HN_DTYPE_FLOAT32 || dtype == HN_DTYPE_BFLOAT16, kInvalidArgument)
      << "argument 'dtype' must be HN_DTYPE_FLOAT32 (0) or HN_DTYPE_BFLOAT16 (12), got " << dtype;
  const auto wanted = static_cast<hn::DType>(dtype);
  if (predictor->dtype != wanted) {
    predictor->executor = NewExecutor(*predictor->model, predictor->fast_math, wanted);
    predictor->dtype = wanted;
    predictor->plans_seen = 0;
  }
  HN_API_END();
}

int hn_predictor_set_input(hn_predictor* predictor, const char* name, int dtype,
                           const int64_t* shape, int ndim, const void* data,
                           size_t data_bytes) noexcept {
  HN_API_BEGIN();
  CheckHandle(predictor, "predictor");
  size_t i = InputIndex(predictor, name);
  hn::DType type = ToDType(dtype);
  hn::Shape s = ToShape(shape, ndim);
  size_t nbytes = ByteSize(s, type);
  HN_CHECK(data != nullptr || nbytes == 0, kInvalidArgument) << "argument 'data' is NULL";
  HN_CHECK(data_bytes == nbytes, kInvalidArgument)
      << "input '" << name << "': a " << s << " " << hn::DTypeName(type) << " input needs "
      << nbytes << " bytes, got data_bytes " << data_bytes;
  hn::NDArray& in = predictor->inputs[i];
  if (!predictor->input_owned[i] || in.is_none() || in.shape() != s || in.dtype() != type) {
    in = hn::NDArray(s, type);
    predictor->input_owned[i] = true;
  }
  if (nbytes > 0) std::memcpy(in.raw_data(), data, nbytes);
  HN_API_END();
}

int hn_predictor_set_input_tensor(hn_predictor* predictor, const char* name,
                                  const hn_tensor* tensor) noexcept {
  HN_API_BEGIN();
  CheckHandle(predictor, "predictor");
  size_t i = InputIndex(predictor, name);
  CheckHandle(tensor, "tensor");
  HN_CHECK(!tensor->array.is_symbolic(), kInvalidArgument) << "the tensor is symbolic";
  predictor->inputs[i] = tensor->array;
  predictor->input_owned[i] = false;
  HN_API_END();
}

int hn_predictor_forward(hn_predictor* predictor) noexcept {
  HN_API_BEGIN();
  CheckHandle(predictor, "predictor");
  Forward(predictor);
  HN_API_END();
}

int hn_predictor_num_outputs(const hn_predictor* predictor, size_t* out_count) noexcept {
  HN_API_BEGIN();
  CheckHandle(predictor, "predictor");
  CheckOut(out_count, "out_count");
  *out_count = predictor->model->outputs.ptrs.size();
  HN_API_END();
}

int hn_predictor_output_shape(const hn_predictor* predictor, size_t index, const int64_t** out_dims,
                              int* out_ndim) noexcept {
  HN_API_BEGIN();
  CheckHandle(predictor, "predictor");
  CheckOut(out_dims, "out_dims");
  CheckOut(out_ndim, "out_ndim");
  const hn::NDArray& a = Output(predictor, index);
  *out_dims = a.shape().begin();
  *out_ndim = static_cast<int>(a.shape().ndim());
  HN_API_END();
}

int hn_predictor_get_output(const hn_predictor* predictor, size_t index, void* buffer,
                            size_t buffer_bytes) noexcept {
  HN_API_BEGIN();
  CheckHandle(predictor, "predictor");
  HN_CHECK(buffer != nullptr, kInvalidArgument) << "argument 'buffer' is NULL";
  const hn::NDArray& a = Output(predictor, index);
  size_t nbytes = a.nbytes();
  HN_CHECK(buffer_bytes >= nbytes, kInvalidArgument)
      << "buffer too small: output " << index << " ('" << predictor->model->outputs.names[index]
      << "', " << a.shape() << " " << hn::DTypeName(a.dtype()) << ") has " << nbytes
      << " bytes, the buffer " << buffer_bytes;
  if (nbytes > 0) std::memcpy(buffer, a.raw_data(), nbytes);
  HN_API_END();
}

int hn_predictor_output(hn_predictor* predictor, size_t index, hn_tensor** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(predictor, "predictor");
  CheckOut(out, "out");
  const hn::NDArray& a = Output(predictor, index);
  *out = new hn_tensor{a};
  predictor->handed_out[index] = true;
  HN_API_END();
}

int hn_predictor_run(hn_predictor* predictor, hn_tensor* const* inputs, size_t num_inputs,
                     size_t max_outputs, hn_tensor** outputs, size_t* out_num_outputs) noexcept {
  HN_API_BEGIN();
  CheckHandle(predictor, "predictor");
  CheckOut(out_num_outputs, "out_num_outputs");
  size_t num_model_inputs = predictor->inputs.size();
  HN_CHECK(num_inputs <= num_model_inputs, kInvalidArgument)
      << "the model has " << num_model_inputs << " inputs, got num_inputs " << num_inputs;
  size_t num_out = predictor->model->outputs.ptrs.size();
  HN_CHECK(num_out <= max_outputs, kInvalidArgument)
      << "the model has " << num_out << " outputs but max_outputs is " << max_outputs;
  HN_CHECK(outputs != nullptr || num_out == 0, kInvalidArgument) << "out-pointer 'outputs' is NULL";
  std::vector<hn::NDArray> in = ToArrays(inputs, num_inputs, "inputs");
  for (size_t i = 0; i < num_model_inputs; ++i) {
    predictor->inputs[i] = i < in.size() ? in[i] : hn::NDArray();
    predictor->input_owned[i] = false;
  }
  Forward(predictor);
  StoreTensors("the model", predictor->outputs, max_outputs, outputs, out_num_outputs);
  std::fill(predictor->handed_out.begin(), predictor->handed_out.end(), true);
  HN_API_END();
}

}  // extern "C"
