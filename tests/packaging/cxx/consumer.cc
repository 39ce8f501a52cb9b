// The C API from C++ (RAII over the handles), built against the installed package:
//   find_package(hybridnet) + target_link_libraries(... hybridnet::hybridnet)
//   cxx_consumer PREFIX IN.npy    loads PREFIX-symbol.json/-0000.params and runs IN.npy
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "hybridnet/c_api.h"

namespace {

void Check(int status, const char* what) {
  if (status != HN_OK) throw std::runtime_error(std::string(what) + ": " + hn_last_error());
}

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using Model = std::unique_ptr<hn_model, Deleter<hn_model, hn_model_free>>;
using Predictor = std::unique_ptr<hn_predictor, Deleter<hn_predictor, hn_predictor_free>>;
using Tensor = std::unique_ptr<hn_tensor, Deleter<hn_tensor, hn_tensor_free>>;

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: cxx_consumer PREFIX IN.npy\n");
    return 2;
  }
  try {
    hn_model* m = nullptr;
    Check(hn_model_load(argv[1], 0, &m), "hn_model_load");
    Model model(m);
    hn_predictor* p = nullptr;
    Check(hn_predictor_create(model.get(), &p), "hn_predictor_create");
    Predictor predictor(p);
    hn_tensor* t = nullptr;
    Check(hn_tensor_load_npy(argv[2], &t), "hn_tensor_load_npy");
    Tensor input(t);
    const char* const* names = nullptr;
    size_t num = 0;
    Check(hn_model_input_names(model.get(), &names, &num), "hn_model_input_names");
    Check(hn_predictor_set_input_tensor(predictor.get(), names[0], input.get()), "set input");
    Check(hn_predictor_forward(predictor.get()), "hn_predictor_forward");
    const int64_t* dims = nullptr;
    int ndim = 0;
    Check(hn_predictor_output_shape(predictor.get(), 0, &dims, &ndim), "output shape");
    std::vector<float> y(static_cast<size_t>(dims[0] * dims[1]));
    Check(hn_predictor_get_output(predictor.get(), 0, y.data(), y.size() * sizeof(float)),
          "output");
    std::printf("C++ consumer (find_package): hybridnet %s, output (%lld, %lld): %.6g %.6g\n",
                hn_version(), static_cast<long long>(dims[0]), static_cast<long long>(dims[1]),
                y[0], y[1]);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cxx_consumer: %s\n", e.what());
    return 1;
  }
}
