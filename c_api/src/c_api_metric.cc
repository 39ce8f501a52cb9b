// C API: metrics (hn_metric_*) over hybridnet/metric.h.
#include <memory>
#include <string>
#include <vector>

#include "c_api_common.h"

using namespace hn_capi;  // NOLINT
namespace hn = ::hybridnet;

extern "C" {

int hn_metric_create(const char* name, const char* const* keys, const char* const* values,
                     size_t num_args, hn_metric** out) noexcept {
  HN_API_BEGIN();
  const std::string metric_name = CheckString(name, "name");
  CheckOut(out, "out");
  auto handle = std::make_unique<hn_metric>();
  handle->metric = hn::metric::Create(metric_name, ToAttrs(keys, values, num_args));
  std::vector<std::string> names;
  for (const auto& reading : handle->metric->Get()) names.push_back(reading.name);
  handle->names.Assign(names);
  *out = handle.release();
  HN_API_END();
}

int hn_metric_update(hn_metric* metric, hn_tensor* const* labels, size_t num_labels,
                     hn_tensor* const* preds, size_t num_preds) noexcept {
  HN_API_BEGIN();
  CheckHandle(metric, "metric");
  metric->metric->Update(ToArrays(labels, num_labels, "labels"),
                         ToArrays(preds, num_preds, "preds"));
  HN_API_END();
}

int hn_metric_get(const hn_metric* metric, int global, size_t max_values, const char** names,
                  double* values, size_t* out_num_values) noexcept {
  HN_API_BEGIN();
  CheckHandle(metric, "metric");
  CheckOut(out_num_values, "out_num_values");
  const auto readings =
      ToFlag(global, "global") ? metric->metric->GetGlobal() : metric->metric->Get();
  if (max_values > 0) {
    CheckOut(names, "names");
    CheckOut(values, "values");
  }
  HN_CHECK(readings.size() == metric->names.ptrs.size(), kInternal)
      << "metric readings changed from " << metric->names.ptrs.size() << " to " << readings.size();
  for (size_t i = 0; i < readings.size() && i < max_values; ++i) {
    names[i] = metric->names.ptrs[i];
    values[i] = readings[i].value;
  }
  *out_num_values = readings.size();
  HN_API_END();
}

int hn_metric_stats(const hn_metric* metric, int global, double* out_num_inst,
                    double* out_sum_metric) noexcept {
  HN_API_BEGIN();
  CheckHandle(metric, "metric");
  const bool use_global = ToFlag(global, "global");
  HN_CHECK(dynamic_cast<const hn::metric::CompositeEvalMetric*>(metric->metric.get()) == nullptr,
           kInvalidArgument)
      << "a CompositeEvalMetric has no statistics of its own; its children have";
  const hn::metric::Stats& stats = use_global ? metric->metric->global() : metric->metric->local();
  if (out_num_inst != nullptr) *out_num_inst = stats.num_inst;
  if (out_sum_metric != nullptr) *out_sum_metric = stats.sum_metric;
  HN_API_END();
}

int hn_metric_reset(hn_metric* metric, int local_only) noexcept {
  HN_API_BEGIN();
  CheckHandle(metric, "metric");
  if (ToFlag(local_only, "local_only")) {
    metric->metric->ResetLocal();
  } else {
    metric->metric->Reset();
  }
  HN_API_END();
}

int hn_metric_kind(const hn_metric* metric, const char** out_kind) noexcept {
  HN_API_BEGIN();
  CheckHandle(metric, "metric");
  CheckOut(out_kind, "out_kind");
  *out_kind = metric->metric->kind();
  HN_API_END();
}

int hn_metric_kind_of(const char* name, const char** out_kind) noexcept {
  HN_API_BEGIN();
  const std::string metric_name = CheckString(name, "name");
  CheckOut(out_kind, "out_kind");
  *out_kind = hn::metric::KindOf(metric_name).c_str();
  HN_API_END();
}

void hn_metric_free(hn_metric* metric) noexcept { delete metric; }

}  // extern "C"
