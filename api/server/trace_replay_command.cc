#include "api/server/trace_replay_command.h"

#include <chrono>
#include <iostream>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/codec/file_text.h"
#include "api/codec/json_writer.h"
#include "api/codec/trace_csv.h"
#include "api/server/flags.h"
#include "scheduler/replay/placement_policy.h"

namespace gpusched {
namespace {

constexpr char kCommand[] = "gpusched trace-replay";

struct TraceReplayFlags {
  std::string nodes;
  std::string pods;
  std::string load = "1.3";
  std::string seed = "0";
  std::string scorer = "default";
  std::string output;
};

absl::StatusOr<replay::ReplayOptions> OptionsOf(const TraceReplayFlags& f) {
  replay::ReplayOptions options;
  if (f.nodes.empty() || f.pods.empty()) {
    return absl::InvalidArgumentError("--nodes and --pods are required");
  }
  if (!absl::SimpleAtod(f.load, &options.load) || !(options.load > 0) ||
      options.load > 100) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--load \"", f.load, "\" must be a number above 0 (at most 100)"));
  }
  if (!absl::SimpleAtoi(f.seed, &options.seed)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--seed \"", f.seed, "\" must be a non-negative integer"));
  }
  // A misspelt scorer is a usage error, found before the trace is read.
  if (absl::Status known = replay::MakePolicy(f.scorer, 1, 0).status();
      !known.ok()) {
    return known;
  }
  options.scorer = f.scorer;
  return options;
}

// The flags, or the exit code of a usage error already reported (0 after
// --help).
std::optional<TraceReplayFlags> ParseFlags(const std::vector<std::string>& args,
                                           int* exit_code) {
  TraceReplayFlags f;
  bool help = false;
  FlagSet flags("trace-replay");
  flags.String("nodes", &f.nodes,
               "node list CSV (sn,cpu_milli,memory_mib,gpu,model)");
  flags.String(
      "pods", &f.pods,
      "pod list CSV (name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec])");
  flags.String("load", &f.load,
               "arrived GPU requests / GPU capacity at the end (default 1.3)");
  flags.String("seed", &f.seed,
               "seed of the pod sampling and tie-breaks (default 0)");
  flags.String("scorer", &f.scorer,
               "default, random, bestfit, dotprod, packing, or live weights "
               "such as fragmentation=1");
  flags.String("output", &f.output,
               "write the report JSON here (default: stdout)");
  flags.Bool("help", &help, "this text");
  std::vector<std::string> positional;
  absl::Status parsed = flags.Parse(args, &positional);
  if (parsed.ok() && !positional.empty()) {
    parsed = absl::InvalidArgumentError(
        absl::StrCat("unexpected argument \"", positional[0], "\""));
  }
  if (!parsed.ok()) {
    std::cerr << kCommand << ": " << parsed.message() << "\n" << flags.Usage();
    *exit_code = kExitUsage;
    return std::nullopt;
  }
  if (help) {
    std::cout << flags.Usage();
    *exit_code = 0;
    return std::nullopt;
  }
  return f;
}

void EncodePoints(JsonWriter& json, std::string_view key,
                  const std::vector<replay::LoadPoint>& points) {
  json.Raw(",").Key(key).Raw("[");
  for (size_t i = 0; i < points.size(); ++i) {
    if (i > 0) json.Raw(",");
    json.Raw("{").Key("arrivedLoad").Double(points[i].arrived_load);
    json.Raw(",").Key("gpuAllocationRatio").Double(points[i].allocation_ratio);
    json.Raw("}");
  }
  json.Raw("]");
}

}  // namespace

std::string EncodeReplayReport(const replay::ReplayReport& report,
                               double wall_seconds) {
  JsonWriter json;
  json.Raw("{").Key("scorer").String(report.scorer);
  json.Raw(",").Key("seed").Int(static_cast<int64_t>(report.seed));
  json.Raw(",").Key("load").Double(report.load);
  json.Raw(",").Key("nodes").Int(report.nodes);
  json.Raw(",").Key("gpus").Int(report.gpus);
  json.Raw(",").Key("arrivedPods").Int(report.arrived_pods);
  json.Raw(",").Key("placedPods").Int(report.placed_pods);
  json.Raw(",").Key("failedPods").Int(report.failed_pods);
  json.Raw(",").Key("arrivedGpuMilli").Int(report.arrived_milli);
  json.Raw(",").Key("allocatedGpuMilli").Int(report.allocated_milli);
  json.Raw(",").Key("failedGpuMilli").Int(report.failed_milli);
  json.Raw(",").Key("multiGpuPods").Int(report.multi_gpu_pods);
  json.Raw(",")
      .Key("multiGpuTopologyScore")
      .Double(report.multi_gpu_topology_score);
  EncodePoints(json, "checkpoints", report.checkpoints);
  EncodePoints(json, "curve", report.curve);
  json.Raw(",").Key("wallSeconds").Double(wall_seconds);
  json.Raw("}\n");
  return json.Take();
}

int RunTraceReplay(const std::vector<std::string>& args) {
  int exit_code = 0;
  std::optional<TraceReplayFlags> flags = ParseFlags(args, &exit_code);
  if (!flags) return exit_code;
  absl::StatusOr<replay::ReplayOptions> options = OptionsOf(*flags);
  if (!options.ok()) {
    std::cerr << kCommand << ": " << options.status().message() << "\n";
    return kExitUsage;
  }
  // The wall time covers reading the trace, as a user waits for it too.
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<replay::Trace> trace = ReadTrace(flags->nodes, flags->pods);
  if (!trace.ok()) {
    std::cerr << kCommand << ": " << trace.status().message() << "\n";
    return kExitFailure;
  }
  absl::StatusOr<replay::ReplayReport> report =
      replay::RunReplay(*trace, *options);
  if (!report.ok()) {
    std::cerr << kCommand << ": " << report.status().message() << "\n";
    return kExitFailure;
  }
  const std::chrono::duration<double> wall =
      std::chrono::steady_clock::now() - start;
  const std::string json = EncodeReplayReport(*report, wall.count());
  if (flags->output.empty()) {
    std::cout << json << std::flush;
    return 0;
  }
  if (absl::Status s = WriteTextFile(flags->output, json); !s.ok()) {
    std::cerr << kCommand << ": " << s.message() << "\n";
    return kExitFailure;
  }
  return 0;
}

}  // namespace gpusched
