// hybridnet: command-line tool for MXNet-format models and files (see cli.h). `hybridnet --help`
// lists the subcommands, `hybridnet COMMAND --help` one command's arguments and options.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"

namespace hybridnet_cli {

// The subcommands, one row each, in the order --help lists them; each is defined in <name>.cc.
#define HN_CLI_COMMANDS(X) \
  X(kInfo)                 \
  X(kConvert)              \
  X(kOps)                  \
  X(kRun)                  \
  X(kQuantize)             \
  X(kBench)                \
  X(kSummary)              \
  X(kDot)                  \
  X(kFeatures)             \
  /* end of the table: every row above ends with a backslash */

#define HN_CLI_DECLARE(command) extern const Command command;
#define HN_CLI_ADDRESS(command) &command,
HN_CLI_COMMANDS(HN_CLI_DECLARE)
const Command* const kCommands[] = {HN_CLI_COMMANDS(HN_CLI_ADDRESS)};

namespace {

const Command kVersion{"version", "the library's version and ABI", {}, {}, [](const Args&) {
                         std::cout << "hybridnet " << hn_version() << " (ABI " << hn_abi_version()
                                   << ")\n";
                         return 0;
                       }};

std::string Overview() {
  std::string s = "usage: hybridnet [-v|-vv] COMMAND ...\n";
  for (const Command* c : kCommands) s += "  " + c->UsageLine() + "\n      " + c->summary + "\n";
  s += "  hybridnet COMMAND --help: the command's arguments and options\n";
  s += "  -v / -vv: log the library's info / debug messages to stderr\n";
  return s;
}

const Command* Find(const std::string& name) {
  if (name == "--version" || name == kVersion.name) return &kVersion;
  for (const Command* c : kCommands)
    if (name == c->name) return c;
  return nullptr;
}

void LogToStderr(int level, const char* message, void*) {
  static const char* const kLevels[] = {"debug", "info", "warning", "error"};
  std::fprintf(stderr, "hybridnet [%s] %s\n", kLevels[level >= 0 && level <= 3 ? level : 3],
               message);
}

int Main(std::vector<std::string> args) {
  int verbosity = 0;
  while (!args.empty() && (args[0] == "-v" || args[0] == "-vv")) {
    verbosity = std::max(verbosity, args[0] == "-vv" ? 2 : 1);
    args.erase(args.begin());
  }
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    std::cout << Overview();
    return args.empty() ? 2 : 0;
  }
  const Command* command = Find(args[0]);
  if (command == nullptr) {
    std::cerr << "hybridnet: unknown command '" << args[0] << "'\n" << Overview();
    return 2;
  }
  args.erase(args.begin());
  if (std::find_if(args.begin(), args.end(),
                   [](const std::string& a) { return a == "-h" || a == "--help"; }) != args.end()) {
    std::cout << command->Help();
    return 0;
  }
  if (hn_abi_version() != HN_ABI_VERSION) {
    std::cerr << "hybridnet: libhybridnet ABI " << hn_abi_version() << " does not match the "
              << "header's " << HN_ABI_VERSION << "\n";
    return 1;
  }
  if (verbosity > 0) {
    hn_set_log_callback(LogToStderr, nullptr, verbosity > 1 ? HN_LOG_DEBUG : HN_LOG_INFO);
  }
  try {
    return command->run(command->Parse(args));
  } catch (const CliError& e) {
    if (e.code == 0) {
      std::cerr << "hybridnet: " << e.message << "\nusage: " << command->UsageLine() << "\n";
      return 2;
    }
    std::cerr << "hybridnet: " << hn_status_name(e.code) << ": " << e.message << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "hybridnet: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace
}  // namespace hybridnet_cli

int main(int argc, char** argv) {
  return hybridnet_cli::Main(std::vector<std::string>(argv + 1, argv + argc));
}
