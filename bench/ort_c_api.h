// The part of ONNX Runtime's C ABI the peer benchmark calls, declared here because the
// `onnxruntime` wheel from PyPI (our source of libonnxruntime.so) ships no headers and no PyPI
// package carries them. ORT's ABI is a table of function pointers, OrtApi, returned by
// OrtGetApiBase()->GetApi(version); entries are only ever appended, and ORT pins the offsets of
// every released version with static_asserts (onnxruntime/core/session/onnxruntime_c_api.cc).
// Everything used here belongs to version 1, whose 102 entries are fixed: we ask for version 1
// and name only the slots we call, by their index in that table. Benchmark-only: nothing of
// hybridnet's build or runtime uses ONNX Runtime.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ort {

struct Status;
struct Env;
struct Session;
struct SessionOptions;
struct Value;
struct MemoryInfo;
struct RunOptions;
struct Allocator;

// Enum values of the version-1 header.
constexpr int kLoggingLevelWarning = 2;    // OrtLoggingLevel
constexpr int kGraphOptimizationAll = 99;  // GraphOptimizationLevel::ORT_ENABLE_ALL
constexpr int kArenaAllocator = 1;         // OrtAllocatorType::OrtArenaAllocator
constexpr int kMemTypeDefault = 0;         // OrtMemType::OrtMemTypeDefault
constexpr int kTensorFloat = 1;            // ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT

// Slot numbers in OrtApi version 1.
enum Slot : size_t {
  kGetErrorMessage = 2,
  kCreateEnv = 3,
  kCreateSession = 7,
  kRun = 9,
  kCreateSessionOptions = 10,
  kSetSessionGraphOptimizationLevel = 23,
  kSetIntraOpNumThreads = 24,
  kSetInterOpNumThreads = 25,
  kCreateTensorWithDataAsOrtValue = 49,
  kCreateCpuMemoryInfo = 69,
  kReleaseEnv = 92,
  kReleaseStatus = 93,
  kReleaseMemoryInfo = 94,
  kReleaseSession = 95,
  kReleaseValue = 96,
  kReleaseSessionOptions = 100,
  kVersion1Slots = 102,
};

using GetErrorMessageFn = const char* (*)(const Status*);
using CreateEnvFn = Status* (*)(int level, const char* logid, Env** out);
using CreateSessionFn = Status* (*)(const Env*, const char* path, const SessionOptions*,
                                    Session** out);
using RunFn = Status* (*)(Session*, const RunOptions*, const char* const* input_names,
                          const Value* const* inputs, size_t num_inputs,
                          const char* const* output_names, size_t num_outputs, Value** outputs);
using CreateSessionOptionsFn = Status* (*)(SessionOptions** out);
using SetGraphOptimizationLevelFn = Status* (*)(SessionOptions*, int level);
using SetNumThreadsFn = Status* (*)(SessionOptions*, int threads);
using CreateTensorWithDataFn = Status* (*)(const MemoryInfo*, void* data, size_t bytes,
                                           const int64_t* shape, size_t rank, int element_type,
                                           Value** out);
using CreateCpuMemoryInfoFn = Status* (*)(int allocator_type, int mem_type, MemoryInfo** out);
template <typename T>
using ReleaseFn = void (*)(T*);

struct ApiBase {
  const void* const* (*GetApi)(uint32_t version);
  const char* (*GetVersionString)();
};

using GetApiBaseFn = const ApiBase* (*)();

}  // namespace ort
