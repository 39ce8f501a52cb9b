#include "train_worker_common.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <stdexcept>

namespace hybridnet {
namespace bench {
namespace {

// VmHWM or VmRSS of this process, in kB.
long MemoryKb(const char* field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::strlen(field) + 1));
  }
  return -1;
}

std::string OneLine(std::string text) {
  for (char& c : text)
    if (c == '\n') c = ' ';
  return text;
}

double Milliseconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

double Sum(const NDArray& x, bool squares) {
  double sum = 0;
  for (float v : x.ToFloatVector()) sum += squares ? double(v) * v : v;
  return sum;
}

int Serve(const std::string& name, const std::function<std::unique_ptr<TimedTask>()>& load) {
  std::printf("name=%s\n", OneLine(name).c_str());
  std::fflush(stdout);
  std::unique_ptr<TimedTask> task;
  long base_kb = 0;  // the model and inputs loaded, before the first run
  double first_ms = 0;
  try {
    task = load();
    base_kb = MemoryKb("VmRSS:");
    const auto start = std::chrono::steady_clock::now();
    task->Run();
    first_ms = Milliseconds(start);
    std::printf("check %s first_ms=%.3f\n", task->Checks().c_str(), first_ms);
  } catch (const std::exception& e) {
    std::printf("error=%s\n", OneLine(e.what()).c_str());
    return 3;
  }
  std::fflush(stdout);
  for (std::string line; std::getline(std::cin, line);) {
    if (line == "mem") {
      std::printf("%ld %ld\n", MemoryKb("VmHWM:"), base_kb);
    } else {
      const int count = std::stoi(line);
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < count; ++i) task->Run();
      std::printf("%.4f\n", Milliseconds(start) / count);
    }
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace bench
}  // namespace hybridnet
