// hybridnet against ONNX Runtime on identical models, in one process: the same input, alternating
// rounds (the order flips every round, so drift in the machine's load hits both), the median of
// each round, then medians over rounds and the median of the per-round ratios. Before timing, the
// outputs of every system are compared (the same weights must give the same numbers).
//
//   peer_bench --model DIR/resnet18_v1 --onnx DIR/resnet18_v1-1x3x224x224.onnx
//              --ort-lib .../libonnxruntime.so.1.x --shape 1,3,224,224 --threads 1
//              [--rounds 9] [--round-seconds 0.3] [--fast-math] [--floor]
//
// --floor adds the OpenBLAS floor of the seed MLP (three GEMM/GEMV + bias + relu into
// preallocated buffers, the model's own weights); --fast-math adds hybridnet with
// hn_predictor_set_fast_math. Result lines start with "RESULT"; the last one, "SUMMARY", is what
// scripts/bench.sh tabulates. `peer_bench --describe` prints the CPU, OpenBLAS and oneDNN settings.
#include <cblas.h>
#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "hybridnet/c_api.h"
#include "ort_c_api.h"

namespace {

struct Options {
  std::string model, onnx, ort_lib;
  std::vector<int64_t> shape;
  int threads = 1;
  int rounds = 9;
  double round_seconds = 0.3;
  bool fast_math = false;
  bool floor = false;
};

[[noreturn]] void Fail(const std::string& what) { throw std::runtime_error(what); }

void CheckHn(int rc, const char* what) {
  if (rc != HN_OK) Fail(std::string(what) + ": " + hn_last_error());
}

// One system under test: runs a forward on the shared input; its output after a run.
struct System {
  std::string name;
  std::function<void()> run;
  std::vector<float> output;
  std::vector<double> round_medians;      // wall-clock seconds per forward
  std::vector<double> cpu_round_medians;  // CPU seconds of the process per forward
  int iterations = 1;
};

// ---- hybridnet (C API predictor) ---------------------------------------------------------------

struct Hybridnet {
  hn_model* model = nullptr;
  hn_predictor* predictor = nullptr;
  ~Hybridnet() {
    hn_predictor_free(predictor);
    hn_model_free(model);
  }
};

void AddHybridnet(const Options& o, const std::vector<float>& input, bool fast_math,
                  std::vector<Hybridnet>* keep, std::vector<System>* systems, size_t output_count) {
  keep->emplace_back();
  Hybridnet& h = keep->back();
  CheckHn(hn_model_load(o.model.c_str(), 0, &h.model), "hn_model_load");
  CheckHn(hn_predictor_create(h.model, &h.predictor), "hn_predictor_create");
  if (fast_math) CheckHn(hn_predictor_set_fast_math(h.predictor, 1), "hn_predictor_set_fast_math");
  CheckHn(hn_predictor_set_input(h.predictor, "data", HN_DTYPE_FLOAT32, o.shape.data(),
                                 static_cast<int>(o.shape.size()), input.data(),
                                 input.size() * sizeof(float)),
          "hn_predictor_set_input");
  systems->push_back(System{fast_math ? "hybridnet fast_math" : "hybridnet",
                            nullptr,
                            std::vector<float>(output_count),
                            {},
                            {},
                            1});
  System& s = systems->back();
  hn_predictor* p = h.predictor;
  float* out = s.output.data();
  const size_t bytes = output_count * sizeof(float);
  s.run = [p, out, bytes] {
    CheckHn(hn_predictor_forward(p), "hn_predictor_forward");
    CheckHn(hn_predictor_get_output(p, 0, out, bytes), "hn_predictor_get_output");
  };
}

// ---- ONNX Runtime (C API of the onnxruntime wheel's libonnxruntime.so) ------------------------

struct OrtRuntime {
  const void* const* api = nullptr;
  ort::Env* env = nullptr;
  ort::Session* session = nullptr;
  ort::MemoryInfo* memory = nullptr;
  ort::Value* input = nullptr;
  ort::Value* output = nullptr;
  std::string version;

  template <typename Fn>
  Fn At(ort::Slot slot) const {
    return reinterpret_cast<Fn>(const_cast<void*>(api[slot]));
  }
  void Check(ort::Status* status, const char* what) const {
    if (status == nullptr) return;
    std::string message = At<ort::GetErrorMessageFn>(ort::kGetErrorMessage)(status);
    At<ort::ReleaseFn<ort::Status>>(ort::kReleaseStatus)(status);
    Fail(std::string("ONNX Runtime ") + what + ": " + message);
  }
  ~OrtRuntime() {
    if (api == nullptr) return;
    if (output) At<ort::ReleaseFn<ort::Value>>(ort::kReleaseValue)(output);
    if (input) At<ort::ReleaseFn<ort::Value>>(ort::kReleaseValue)(input);
    if (memory) At<ort::ReleaseFn<ort::MemoryInfo>>(ort::kReleaseMemoryInfo)(memory);
    if (session) At<ort::ReleaseFn<ort::Session>>(ort::kReleaseSession)(session);
    if (env) At<ort::ReleaseFn<ort::Env>>(ort::kReleaseEnv)(env);
  }
};

void AddOnnxRuntime(const Options& o, std::vector<float>* input, OrtRuntime* rt,
                    std::vector<System>* systems, const std::vector<int64_t>& output_shape,
                    size_t output_count) {
  void* lib = dlopen(o.ort_lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) Fail("cannot load " + o.ort_lib + ": " + dlerror());
  auto get_base = reinterpret_cast<ort::GetApiBaseFn>(dlsym(lib, "OrtGetApiBase"));
  if (get_base == nullptr) Fail(o.ort_lib + " has no OrtGetApiBase");
  const ort::ApiBase* base = get_base();
  rt->version = base->GetVersionString();
  rt->api = base->GetApi(1);
  if (rt->api == nullptr) Fail("ONNX Runtime " + rt->version + " does not offer C API version 1");
  rt->Check(
      rt->At<ort::CreateEnvFn>(ort::kCreateEnv)(ort::kLoggingLevelWarning, "peer_bench", &rt->env),
      "CreateEnv");
  ort::SessionOptions* options = nullptr;
  rt->Check(rt->At<ort::CreateSessionOptionsFn>(ort::kCreateSessionOptions)(&options),
            "CreateSessionOptions");
  rt->Check(rt->At<ort::SetNumThreadsFn>(ort::kSetIntraOpNumThreads)(options, o.threads),
            "SetIntraOpNumThreads");
  rt->Check(rt->At<ort::SetNumThreadsFn>(ort::kSetInterOpNumThreads)(options, 1),
            "SetInterOpNumThreads");
  rt->Check(rt->At<ort::SetGraphOptimizationLevelFn>(ort::kSetSessionGraphOptimizationLevel)(
                options, ort::kGraphOptimizationAll),
            "SetSessionGraphOptimizationLevel");
  rt->Check(rt->At<ort::CreateSessionFn>(ort::kCreateSession)(rt->env, o.onnx.c_str(), options,
                                                              &rt->session),
            "CreateSession");
  rt->At<ort::ReleaseFn<ort::SessionOptions>>(ort::kReleaseSessionOptions)(options);
  rt->Check(rt->At<ort::CreateCpuMemoryInfoFn>(ort::kCreateCpuMemoryInfo)(
                ort::kArenaAllocator, ort::kMemTypeDefault, &rt->memory),
            "CreateCpuMemoryInfo");
  systems->push_back(
      System{"onnxruntime " + rt->version, nullptr, std::vector<float>(output_count), {}, {}, 1});
  System& s = systems->back();
  auto create = rt->At<ort::CreateTensorWithDataFn>(ort::kCreateTensorWithDataAsOrtValue);
  rt->Check(create(rt->memory, input->data(), input->size() * sizeof(float), o.shape.data(),
                   o.shape.size(), ort::kTensorFloat, &rt->input),
            "CreateTensorWithDataAsOrtValue (input)");
  rt->Check(create(rt->memory, s.output.data(), output_count * sizeof(float), output_shape.data(),
                   output_shape.size(), ort::kTensorFloat, &rt->output),
            "CreateTensorWithDataAsOrtValue (output)");
  auto run = rt->At<ort::RunFn>(ort::kRun);
  s.run = [rt, run] {
    static const char* const in_names[] = {"data"};
    static const char* const out_names[] = {"output"};
    const ort::Value* inputs[] = {rt->input};
    ort::Value* outputs[] = {rt->output};
    rt->Check(run(rt->session, nullptr, in_names, inputs, 1, out_names, 1, outputs), "Run");
  };
}

// ---- the OpenBLAS floor of the seed MLP --------------------------------------------------------

struct Floor {
  std::vector<std::vector<float>> weights, biases, acts;
  std::vector<int> units;
};

void AddFloor(const Options& o, const std::vector<float>* input, Floor* f,
              std::vector<System>* systems, size_t output_count) {
  hn_tensor_list* list = nullptr;
  CheckHn(hn_tensor_list_load((o.model + "-0000.params").c_str(), &list), "hn_tensor_list_load");
  auto get = [&](const std::string& name) {
    size_t count = 0;
    CheckHn(hn_tensor_list_size(list, &count), "hn_tensor_list_size");
    for (size_t i = 0; i < count; ++i) {
      const char* n = nullptr;
      CheckHn(hn_tensor_list_name(list, i, &n), "hn_tensor_list_name");
      if (name != n) continue;
      hn_tensor* t = nullptr;
      CheckHn(hn_tensor_list_get(list, i, &t), "hn_tensor_list_get");
      int64_t size = 0;
      CheckHn(hn_tensor_size(t, &size), "hn_tensor_size");
      std::vector<float> v(static_cast<size_t>(size));
      CheckHn(hn_tensor_copy_to(t, v.data(), v.size() * sizeof(float)), "hn_tensor_copy_to");
      hn_tensor_free(t);
      return v;
    }
    Fail("the seed MLP's parameters lack " + name);
  };
  for (int layer = 0; layer < 3; ++layer) {
    const std::string prefix = "arg:dense" + std::to_string(layer) + "_fwd_";
    f->biases.push_back(get(prefix + "bias"));
    f->weights.push_back(get(prefix + "weight"));
    f->units.push_back(static_cast<int>(f->biases.back().size()));
  }
  hn_tensor_list_free(list);
  const int batch = static_cast<int>(o.shape[0]);
  for (int n : f->units) f->acts.emplace_back(static_cast<size_t>(batch * n));
  systems->push_back(
      System{"OpenBLAS floor", nullptr, std::vector<float>(output_count), {}, {}, 1});
  System& s = systems->back();
  const int in_dim = static_cast<int>(o.shape[1]);
  float* result = s.output.data();
  s.run = [f, input, batch, in_dim, result, output_count] {
    const float* in = input->data();
    int k = in_dim;
    for (size_t layer = 0; layer < 3; ++layer) {
      const int n = f->units[layer];
      float* out = f->acts[layer].data();
      const float* w = f->weights[layer].data();
      const float* b = f->biases[layer].data();
      for (int r = 0; r < batch; ++r)
        std::memcpy(out + r * n, b, sizeof(float) * static_cast<size_t>(n));
      if (batch == 1) {
        cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.f, w, k, in, 1, 1.f, out, 1);
      } else {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, batch, n, k, 1.f, in, k, w, k, 1.f,
                    out, n);
      }
      if (layer < 2) {
        for (int i = 0; i < batch * n; ++i) out[i] = std::max(out[i], 0.f);
      }
      in = out;
      k = n;
    }
    std::memcpy(result, f->acts[2].data(), output_count * sizeof(float));
  };
}

// ---- timing ------------------------------------------------------------------------------------

double Seconds(const std::function<void()>& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// max |a - b| / max |b|
double RelativeDifference(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 1e-30;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
  }
  return diff / scale;
}

std::vector<int64_t> ParseShape(const std::string& text) {
  std::vector<int64_t> dims;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t next = text.find(',', pos);
    if (next == std::string::npos) next = text.size();
    dims.push_back(std::stoll(text.substr(pos, next - pos)));
    pos = next + 1;
  }
  return dims;
}

// The machine every figure depends on.
void Describe() {
  std::string cpu = "unknown";
  if (FILE* f = std::fopen("/proc/cpuinfo", "r")) {
    char line[512];
    while (std::fgets(line, sizeof line, f)) {
      if (std::strncmp(line, "model name", 10) == 0) {
        cpu = std::strchr(line, ':') + 2;
        cpu.erase(cpu.find_last_not_of("\n") + 1);
        break;
      }
    }
    std::fclose(f);
  }
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  const dnnl_version_t* v = dnnl_version();
  std::printf("CPU: %s\n", cpu.c_str());
  std::printf("OpenBLAS: %s; core %s; OPENBLAS_CORETYPE=%s\n", openblas_get_config(),
              openblas_get_corename(), coretype ? coretype : "(unset)");
  std::printf("oneDNN: %d.%d.%d, ISA %s\n", v->major, v->minor, v->patch,
              dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa()));
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Fail(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--model")
      o.model = value();
    else if (arg == "--onnx")
      o.onnx = value();
    else if (arg == "--ort-lib")
      o.ort_lib = value();
    else if (arg == "--shape")
      o.shape = ParseShape(value());
    else if (arg == "--threads")
      o.threads = std::stoi(value());
    else if (arg == "--rounds")
      o.rounds = std::stoi(value());
    else if (arg == "--round-seconds")
      o.round_seconds = std::stod(value());
    else if (arg == "--fast-math")
      o.fast_math = true;
    else if (arg == "--floor")
      o.floor = true;
    else
      Fail("unknown argument " + arg);
  }
  if (o.model.empty() || o.shape.empty()) Fail("--model and --shape are required");
  return o;
}

int Run(const Options& o) {
  CheckHn(hn_set_num_threads(o.threads), "hn_set_num_threads");
  int64_t count = 1;
  for (int64_t d : o.shape) count *= d;
  std::vector<float> input(static_cast<size_t>(count));
  for (size_t i = 0; i < input.size(); ++i)
    input[i] = static_cast<float>((i * 7919) % 1000) / 1000.f;

  // hybridnet first: its output shape sizes everyone's output buffer.
  std::vector<Hybridnet> nets;
  nets.reserve(2);
  std::vector<System> systems;
  systems.reserve(4);
  {
    Hybridnet probe;
    CheckHn(hn_model_load(o.model.c_str(), 0, &probe.model), "hn_model_load");
    CheckHn(hn_predictor_create(probe.model, &probe.predictor), "hn_predictor_create");
    CheckHn(hn_predictor_set_input(probe.predictor, "data", HN_DTYPE_FLOAT32, o.shape.data(),
                                   static_cast<int>(o.shape.size()), input.data(),
                                   input.size() * sizeof(float)),
            "hn_predictor_set_input");
    CheckHn(hn_predictor_forward(probe.predictor), "hn_predictor_forward");
    const int64_t* dims = nullptr;
    int ndim = 0;
    CheckHn(hn_predictor_output_shape(probe.predictor, 0, &dims, &ndim),
            "hn_predictor_output_shape");
    std::vector<int64_t> out_shape(dims, dims + ndim);
    size_t out_count = 1;
    for (int64_t d : out_shape) out_count *= static_cast<size_t>(d);
    AddHybridnet(o, input, false, &nets, &systems, out_count);
    if (o.fast_math) AddHybridnet(o, input, true, &nets, &systems, out_count);
    static OrtRuntime ort_runtime;  // outlives the systems that call it
    if (!o.onnx.empty()) AddOnnxRuntime(o, &input, &ort_runtime, &systems, out_shape, out_count);
    static Floor floor;
    if (o.floor) AddFloor(o, &input, &floor, &systems, out_count);
  }

  // Warm up (plans, primitives, weight layouts), check the outputs agree, size the rounds.
  int status = 0;
  for (System& s : systems) {
    for (int i = 0; i < 3; ++i) s.run();
    const double t = Seconds(s.run);
    s.iterations = static_cast<int>(std::clamp(o.round_seconds / std::max(t, 1e-7), 3.0, 5000.0));
  }
  for (size_t k = 1; k < systems.size(); ++k) {
    const double d = RelativeDifference(systems[k].output, systems[0].output);
    std::printf("RESULT check %s vs %s: max |diff| / max |output| = %.2e\n",
                systems[k].name.c_str(), systems[0].name.c_str(), d);
    const bool inexact = systems[k].name == "hybridnet fast_math";
    if (d > 1e-4 && !inexact) {
      std::printf("RESULT error: %s does not give hybridnet's output (different weights?)\n",
                  systems[k].name.c_str());
      status = 1;
    }
  }

  for (int r = 0; r < o.rounds; ++r) {
    for (size_t j = 0; j < systems.size(); ++j) {
      System& s = systems[r % 2 == 0 ? j : systems.size() - 1 - j];
      std::vector<double> times, cpu;
      for (int i = 0; i < s.iterations; ++i) {
        const double c0 = CpuSeconds();
        times.push_back(Seconds(s.run));
        cpu.push_back(CpuSeconds() - c0);
      }
      s.round_medians.push_back(Median(times));
      s.cpu_round_medians.push_back(Median(cpu));
    }
  }
  // Wall-clock time is what a caller waits; on a shared machine it includes time the process
  // waited for a core, so CPU time (all threads of the process) is printed next to it.
  auto ratio = [&](const System& a, const System& b, bool cpu) {
    std::vector<double> r;
    for (int i = 0; i < o.rounds; ++i) {
      r.push_back(cpu ? a.cpu_round_medians[i] / b.cpu_round_medians[i]
                      : a.round_medians[i] / b.round_medians[i]);
    }
    return Median(r);
  };
  const System& ours = systems[0];
  for (const System& s : systems) {
    std::printf(
        "RESULT time %-26s wall %10.1f us (hybridnet / it %.3f)  cpu %10.1f us "
        "(hybridnet / it %.3f)\n",
        s.name.c_str(), 1e6 * Median(s.round_medians), ratio(ours, s, false),
        1e6 * Median(s.cpu_round_medians), ratio(ours, s, true));
  }
  // One line for scripts/bench.sh: times in us, ratios as hybridnet (or fast_math) / the peer.
  const System* fast = nullptr;
  const System* ort = nullptr;
  const System* floor = nullptr;
  for (const System& s : systems) {
    if (s.name == "hybridnet fast_math") fast = &s;
    if (s.name.rfind("onnxruntime", 0) == 0) ort = &s;
    if (s.name == "OpenBLAS floor") floor = &s;
  }
  auto num = [](bool have, double v) { return have ? std::to_string(v) : std::string("-"); };
  std::printf(
      "SUMMARY hybridnet_us=%.1f ort_us=%s ratio=%s cpu_ratio=%s fast_ratio=%s "
      "floor_ratio=%s\n",
      1e6 * Median(ours.round_medians),
      num(ort != nullptr, ort ? 1e6 * Median(ort->round_medians) : 0).c_str(),
      num(ort != nullptr, ort ? ratio(ours, *ort, false) : 0).c_str(),
      num(ort != nullptr, ort ? ratio(ours, *ort, true) : 0).c_str(),
      num(fast && ort, fast && ort ? ratio(*fast, *ort, false) : 0).c_str(),
      num(floor != nullptr, floor ? ratio(ours, *floor, false) : 0).c_str());
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 2 && std::string(argv[1]) == "--describe") {
      Describe();
      return 0;
    }
    Describe();
    return Run(Parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "peer_bench: %s\n", e.what());
    return 2;
  }
}
