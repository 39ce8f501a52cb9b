// hn_profiler_*: the C face of hybridnet/profiler.h.
#include <string>
#include <utility>
#include <vector>

#include "c_api_common.h"
#include "hybridnet/profiler.h"

using namespace hn_capi;  // NOLINT(build/namespaces)
namespace profiler = hn::profiler;

extern "C" {

int hn_profiler_set_config(const char* const* keys, const char* const* values,
                           size_t num_options) noexcept {
  HN_API_BEGIN();
  if (num_options > 0) {
    CheckHandle(keys, "keys");
    CheckHandle(values, "values");
  }
  std::vector<std::pair<std::string, std::string>> options;
  for (size_t i = 0; i < num_options; ++i)
    options.emplace_back(CheckString(keys[i], "keys[i]"), CheckString(values[i], "values[i]"));
  profiler::SetConfig(options);
  HN_API_END();
}

int hn_profiler_set_state(const char* state) noexcept {
  HN_API_BEGIN();
  profiler::SetState(CheckString(state, "state"));
  HN_API_END();
}

int hn_profiler_state(const char** out_state) noexcept {
  HN_API_BEGIN();
  CheckOut(out_state, "out_state");
  *out_state = profiler::State() == "run" ? "run" : "stop";
  HN_API_END();
}

int hn_profiler_pause(void) noexcept {
  HN_API_BEGIN();
  profiler::Pause();
  HN_API_END();
}

int hn_profiler_resume(void) noexcept {
  HN_API_BEGIN();
  profiler::Resume();
  HN_API_END();
}

int hn_profiler_dump(int finished) noexcept {
  HN_API_BEGIN();
  profiler::Dump(finished != 0);
  HN_API_END();
}

int hn_profiler_dumps(int reset, const char* format, const char* sort_by, int ascending,
                      char** out) noexcept {
  HN_API_BEGIN();
  CheckOut(out, "out");
  *out = NewCString(profiler::Dumps(reset != 0, format ? format : "table",
                                    sort_by ? sort_by : "total", ascending != 0));
  HN_API_END();
}

int hn_profiler_scope_push(const char* name) noexcept {
  HN_API_BEGIN();
  profiler::PushScope(CheckString(name, "name"));
  HN_API_END();
}

int hn_profiler_scope_pop(void) noexcept {
  HN_API_BEGIN();
  profiler::PopScope();
  HN_API_END();
}

int hn_profiler_clock(int64_t* out_ns) noexcept {
  HN_API_BEGIN();
  CheckOut(out_ns, "out_ns");
  *out_ns = profiler::Clock();
  HN_API_END();
}

int hn_profiler_record_duration(const char* kind, const char* domain, const char* name,
                                int64_t start_ns) noexcept {
  HN_API_BEGIN();
  profiler::RecordDuration(CheckString(kind, "kind"), CheckString(domain, "domain"),
                           CheckString(name, "name"), start_ns);
  HN_API_END();
}

int hn_profiler_set_counter(const char* domain, const char* name, int64_t value) noexcept {
  HN_API_BEGIN();
  profiler::SetCounter(CheckString(domain, "domain"), CheckString(name, "name"), value);
  HN_API_END();
}

int hn_profiler_mark(const char* domain, const char* name, const char* scope) noexcept {
  HN_API_BEGIN();
  profiler::Mark(profiler::Domain(CheckString(domain, "domain")), CheckString(name, "name"),
                 scope ? scope : "process");
  HN_API_END();
}

}  // extern "C"
