// hybridnet features: what the library can do on this CPU (hn_runtime_feature_get), as MXNet's
// mx.runtime.Features lists them; with --require, whether it has some, for scripts and tests.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"

namespace hybridnet_cli {

namespace {

struct Feature {
  std::string name, description;
  bool enabled = false;
};

std::vector<Feature> Features() {
  size_t count = 0;
  Check(hn_runtime_feature_count(&count));
  std::vector<Feature> features(count);
  for (size_t i = 0; i < count; ++i) {
    const char *name = nullptr, *description = nullptr;
    int enabled = 0;
    Check(hn_runtime_feature_get(i, &name, &enabled, &description));
    features[i] = {name, description, enabled != 0};
  }
  return features;
}

// The exit code of --require when a feature is off: 77, which test runners read as "skipped"
// (CTest's SKIP_RETURN_CODE, Automake), so a test can start with the check.
constexpr int kMissingFeature = 77;

int RunFeatures(const Args& args) {
  const std::vector<Feature> features = Features();
  const std::vector<std::string> required = args.values("--require");
  if (!required.empty()) {
    int status = 0;
    for (const std::string& name : required) {
      auto it = std::find_if(features.begin(), features.end(),
                             [&](const Feature& f) { return f.name == name; });
      if (it == features.end()) {
        std::string known;
        for (const Feature& f : features) known += (known.empty() ? "" : ", ") + f.name;
        UsageError("unknown feature '" + name + "'; the features are: " + known);
      }
      if (!it->enabled) {
        std::cout << "not on this CPU: " << it->name << " (" << it->description << ")\n";
        status = kMissingFeature;
      }
    }
    return status;
  }
  if (args.flag("--json")) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const Feature& f : features) {
      list.push_back({{"name", f.name}, {"enabled", f.enabled}, {"description", f.description}});
    }
    std::cout << list.dump(2) << "\n";
    return 0;
  }
  for (const Feature& f : features) {
    std::cout << (f.enabled ? "✔ " : "✖ ") << std::left << std::setw(17) << f.name << " "
              << f.description << "\n";
  }
  return 0;
}

}  // namespace

extern const Command kFeatures{
    "features",
    "what the library can do on this CPU (instruction sets, exact int8, bf16 kernels)",
    {},
    {{"--json", nullptr, "print a JSON list of {name, enabled, description}"},
     {"--require", "NAME", "exit 77 (a test's \"skipped\") unless NAME is enabled", true}},
    RunFeatures,
    "Names are MXNet's (mx.runtime.Features) where MXNet has the feature."};

}  // namespace hybridnet_cli
