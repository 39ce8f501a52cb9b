// hybridnet summary / hybridnet dot PREFIX EPOCH: MXNet's mx.viz.print_summary table and
// plot_network drawing of an export, as written and (--as-run) as the executor runs it.
#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli.h"

extern char** environ;

namespace hybridnet_cli {

namespace {

using Symbol = Owned<hn_symbol, hn_symbol_free>;

// The --input shapes in the C API's form (names, ndims, concatenated dims).
struct ShapeArrays {
  explicit ShapeArrays(const ShapeMap& shapes) {
    for (const auto& kv : shapes) {
      names.push_back(kv.first.c_str());
      ndims.push_back(static_cast<int>(kv.second.size()));
      dims.insert(dims.end(), kv.second.begin(), kv.second.end());
    }
  }
  std::vector<const char*> names;
  std::vector<int> ndims;
  std::vector<int64_t> dims;
};

std::string TakeString(char* raw) {
  std::string text(raw);
  hn_string_free(raw);
  return text;
}

// The export's graph, and with --as-run the graph the executor runs for these shapes.
struct Graphs {
  Symbol written, as_run;
};

Graphs LoadGraphs(const Args& args, const ShapeMap& shapes) {
  LoadedModel m = LoadModel(args.positional(0), args.positional(1));
  hn_symbol* raw = nullptr;
  Check(hn_model_symbol(m.model.get(), &raw));
  Graphs graphs{Symbol(raw), nullptr};
  if (args.flag("--as-run")) {
    if (shapes.empty()) UsageError("--as-run needs the input shapes (--input NAME=D1,D2,...)");
    ShapeArrays a(shapes);
    Check(hn_symbol_as_run(graphs.written.get(), a.names.size(), a.names.data(), a.ndims.data(),
                           a.dims.data(), &raw));
    graphs.as_run.reset(raw);
  }
  return graphs;
}

std::string Summary(const hn_symbol* symbol, const ShapeMap& shapes, int line_length) {
  ShapeArrays a(shapes);
  char* raw = nullptr;
  Check(hn_symbol_print_summary(symbol, a.names.size(), a.names.data(), a.ndims.data(),
                                a.dims.data(), line_length, nullptr, 0, &raw));
  return TakeString(raw);
}

int RunSummary(const Args& args) {
  ShapeMap shapes = ParseShapes(args.values("--input"));
  Graphs graphs = LoadGraphs(args, shapes);
  const int line_length = args.Number("--line-length", 120, 1);
  if (!graphs.as_run) {
    std::cout << Summary(graphs.written.get(), shapes, line_length);
    return 0;
  }
  std::cout << "As written:\n" << Summary(graphs.written.get(), shapes, line_length);
  std::cout << "\nAs run:\n" << Summary(graphs.as_run.get(), shapes, line_length);
  return 0;
}

std::string Dot(const hn_symbol* symbol, const ShapeMap& shapes, bool hide_weights) {
  ShapeArrays a(shapes);
  char* raw = nullptr;
  Check(hn_symbol_plot_network(symbol, "plot", a.names.size(), a.names.data(), a.ndims.data(),
                               a.dims.data(), 0, nullptr, nullptr, 0, nullptr, nullptr,
                               hide_weights ? 1 : 0, &raw));
  return TakeString(raw) + "\n";
}

// Runs Graphviz's `dot -Tsvg` on `dot_path`; false when dot is not installed.
bool RenderSvg(const std::string& dot_path, const std::string& svg_path) {
  std::vector<std::string> words = {"dot", "-q", "-Tsvg", dot_path, "-o", svg_path};
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, "dot", nullptr, nullptr, argv.data(), environ) != 0) return false;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw CliError{HN_ERR_IO, "Graphviz's dot failed on " + dot_path};
  }
  return true;
}

// "net" for "net.dot": where the .svg and the --as-run drawing go.
std::string Stem(const std::string& path) {
  const bool dot = path.size() > 4 && path.compare(path.size() - 4, 4, ".dot") == 0;
  return dot ? path.substr(0, path.size() - 4) : path;
}

void WriteDot(const std::string& text, const std::string& path) {
  std::ofstream file(path, std::ios::binary);
  file << text;
  if (!file.flush()) throw CliError{HN_ERR_IO, "cannot write " + path};
  std::string svg = Stem(path) + ".svg";
  if (RenderSvg(path, svg)) {
    std::cout << "wrote " << path << " and " << svg << "\n";
  } else {
    std::cout << "wrote " << path << " (no SVG: Graphviz's dot is not installed)\n";
  }
}

int RunDot(const Args& args) {
  ShapeMap shapes = ParseShapes(args.values("--input"));
  Graphs graphs = LoadGraphs(args, shapes);
  const bool hide_weights = !args.flag("--show-weights");
  std::string written = Dot(graphs.written.get(), shapes, hide_weights);
  std::optional<std::string> path = args.value("-o");
  if (!path) {
    std::cout << written;
    if (graphs.as_run) std::cout << Dot(graphs.as_run.get(), shapes, hide_weights);
    return 0;
  }
  WriteDot(written, *path);
  if (graphs.as_run)
    WriteDot(Dot(graphs.as_run.get(), shapes, hide_weights), Stem(*path) + ".as-run.dot");
  return 0;
}

}  // namespace

extern const Command kSummary{
    "summary",
    "MXNet's print_summary table of an export (layers, output shapes, parameter counts)",
    {{"PREFIX", "the export's prefix (PREFIX-symbol.json)"}, {"EPOCH", "its epoch (.params)"}},
    {{"--input", "NAME=D1,D2,...", "an input's shape (repeat per input; none: no shapes)", true},
     {"--line-length", "N", "the table's width (default 120)"},
     {"--as-run", nullptr, "also the graph the executor runs: fused kernels, layout changes"}},
    RunSummary,
    "The text is MXNet 1.9.1's mx.viz.print_summary(symbol, shape=...), byte for byte."};

extern const Command kDot{
    "dot",
    "MXNet's plot_network drawing of an export as Graphviz .dot (and .svg with Graphviz)",
    {{"PREFIX", "the export's prefix (PREFIX-symbol.json)"}, {"EPOCH", "its epoch (.params)"}},
    {{"--input", "NAME=D1,D2,...", "an input's shape, shown on the edges (repeat per input)", true},
     {"-o", "FILE.dot",
      "write the .dot here (and FILE.svg when Graphviz's dot is installed); "
      "default: print it"},
     {"--show-weights", nullptr, "draw the weight, bias and BatchNorm variables too"},
     {"--as-run", nullptr, "also the graph the executor runs (FILE.as-run.dot)"}},
    RunDot,
    "The graph is MXNet 1.9.1's mx.viz.plot_network(symbol, shape=...): its nodes, labels, "
    "colours and edges."};

}  // namespace hybridnet_cli
