// How honest is "when will it start" (issue H section 3): the Alibaba GPU
// trace's whole-GPU tasks replayed through the queueing engine on a
// virtual clock, one ClusterQueue on the DGX nodes of a generated cluster,
// arrivals compressed to 130 % of its capacity so that a queue forms. Each
// task that must wait gets a start forecast when it arrives (the live
// Forecaster's snapshot and forward runs); the forecast is compared with
// the start it then gets. Three arms: runtimes known (the annotation
// gpusched.io/expected-runtime is the runtime the task will have); only
// deadlines known (activeDeadlineSeconds = runtime x U(1, 3), fixed seed);
// history only (the median observed runtime of finished tasks of the same
// shape). Reports the median and p90 absolute error, the share within 10 %
// of the wait (5 s when the wait is under 50 s), and the share left
// unknown.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "bench/lib/cluster_generator.h"
#include "bench/lib/queued_workloads.h"
#include "benchmark/benchmark.h"
#include "queueing/engine.h"
#include "queueing/runtime_log.h"
#include "queueing/start_forecast.h"

namespace gpusched::bench {
namespace {

enum Arm { kKnown = 0, kDeadlines = 1, kHistory = 2 };

struct TraceTask {
  int64_t created_s = 0;
  int64_t runtime_ms = 0;
  int gpus = 0;
};

std::string TracePath() {
  const char* dir = std::getenv("TRACE_DIR");
  return std::string(dir != nullptr ? dir
                                    : GPUSCHED_SHARED_DIR
                         "/data/alibaba-gpu-v2023") +
         "/openb_pod_list_default.csv";
}

// The first `count` tasks asking for 1 to 8 whole GPUs that ran (columns
// by the header's names).
std::vector<TraceTask> ReadTasks(size_t count) {
  std::ifstream in(TracePath());
  std::string line;
  std::getline(in, line);
  std::map<std::string, size_t> column;
  std::vector<std::string> names = absl::StrSplit(line, ',');
  for (size_t i = 0; i < names.size(); ++i) column[names[i]] = i;
  std::vector<TraceTask> tasks;
  while (tasks.size() < count && std::getline(in, line)) {
    std::vector<std::string> f = absl::StrSplit(line, ',');
    if (f.size() != names.size()) continue;
    int64_t gpus = 0, milli = 0, created = 0, deleted = 0, scheduled = 0;
    if (!absl::SimpleAtoi(f[column["num_gpu"]], &gpus) ||
        !absl::SimpleAtoi(f[column["gpu_milli"]], &milli) ||
        !absl::SimpleAtoi(f[column["creation_time"]], &created) ||
        !absl::SimpleAtoi(f[column["deletion_time"]], &deleted) ||
        !absl::SimpleAtoi(f[column["scheduled_time"]], &scheduled)) {
      continue;
    }
    // Created at 0: running before the trace began, arrival unknown.
    if (gpus < 1 || gpus > 8 || milli != 1000 || deleted <= scheduled ||
        created == 0) {
      continue;
    }
    // Runtimes are heavy-tailed (some run for weeks): capped, so that a few
    // tasks do not set the whole replay's pace.
    const int64_t runtime_s = std::min<int64_t>(deleted - scheduled, 7200);
    tasks.push_back({created, runtime_s * 1000, int(gpus)});
  }
  std::stable_sort(
      tasks.begin(), tasks.end(),
      [](const auto& a, const auto& b) { return a.created_s < b.created_s; });
  return tasks;
}

// Observed runtimes per shape, the last 50 of each; the median answers.
struct Outcome {
  std::vector<double> errors_s;
  int within = 0, unknown = 0, waited = 0;
};

class Replay {
 public:
  Replay(Arm arm, std::vector<TraceTask> tasks)
      : arm_(arm), tasks_(std::move(tasks)) {
    // A DGX node (8 GPUs) per 75 tasks: most tasks take one GPU, and a
    // queue forms only when fewer GPUs than running tasks are there.
    const size_t dgx = std::max<size_t>(1, tasks_.size() / 75);
    int64_t gpus = 0;
    for (Node& node : GenerateCluster(int(dgx) * 4, 0.0, 5).nodes) {
      if (model_.node_count() == dgx ||
          node.meta.labels["nvidia.com/gpu.product"].find("H100") ==
              std::string::npos) {
        continue;
      }
      gpus += node.allocatable.Get(kNvidiaGpu);
      model_.UpsertNode(std::move(node));
    }
    engine_ = *QueueingEngine::Create(QueuesPolicy(1, gpus), &model_,
                                      {.bind_on_admission = true});
    CompressArrivals(gpus);
  }

  Outcome Run() {
    size_t next = 0;
    int64_t now = 0;
    while (next < tasks_.size() || !finish_at_.empty()) {
      now = NextTime(next);
      FinishDue(now);
      std::vector<std::string> arrived;
      for (; next < tasks_.size() && arrival_ms_[next] <= now; ++next) {
        arrived.push_back(Arrive(next, now));
      }
      engine_->Schedule(now);
      NoteStarts(now);
      for (const std::string& key : arrived) {
        if (!started_.contains(key)) Forecast(key, now);
      }
    }
    return Score();
  }

 private:
  // Arrivals spread so that the tasks' GPU-time is 130 % of what the
  // cluster can do over the span.
  void CompressArrivals(int64_t gpus) {
    double gpu_ms = 0;
    for (const TraceTask& t : tasks_) gpu_ms += double(t.gpus) * t.runtime_ms;
    const double span_ms = gpu_ms / (double(gpus) * 1.3);
    const double trace_s =
        std::max<double>(1, tasks_.back().created_s - tasks_.front().created_s);
    for (const TraceTask& t : tasks_) {
      arrival_ms_.push_back(int64_t((t.created_s - tasks_.front().created_s) /
                                    trace_s * span_ms));
    }
  }

  int64_t NextTime(size_t next) const {
    int64_t t = INT64_MAX;
    if (next < tasks_.size()) t = arrival_ms_[next];
    if (!finish_at_.empty()) t = std::min(t, finish_at_.begin()->first);
    return t;
  }

  std::string Arrive(size_t i, int64_t now) {
    const TraceTask& task = tasks_[i];
    StringMap annotations;
    if (arm_ == kKnown) {
      annotations["gpusched.io/expected-runtime"] =
          std::to_string(task.runtime_ms / 1000) + "s";
    }
    Pod pod = QueuedGangPod(int(i), 0, 1, task.gpus, 0, annotations);
    if (arm_ == kDeadlines) {
      std::uniform_real_distribution<double> factor(1.0, 3.0);
      pod.runtime.deadline_ms = int64_t(task.runtime_ms * factor(random_));
    }
    const std::string key = pod.meta.namespace_name + "/g" + std::to_string(i);
    runtime_ms_[key] = task.runtime_ms;
    arrived_ms_[key] = now;
    shape_[key] = WorkloadShape({&pod});
    engine_->AddPod(std::move(pod), now);
    return key;
  }

  void FinishDue(int64_t now) {
    while (!finish_at_.empty() && finish_at_.begin()->first <= now) {
      const std::string key = finish_at_.begin()->second;
      finish_at_.erase(finish_at_.begin());
      engine_->Finish(key, now);
      // QueuesPolicy(1, ...) names its one ClusterQueue cq-0.
      history_.Record("cq-0", shape_[key], runtime_ms_[key], now);
    }
  }

  void NoteStarts(int64_t now) {
    for (const auto& [key, w] : engine_->workloads()) {
      if (!w.admitted() || started_.contains(key)) continue;
      started_[key] = now;
      finish_at_.insert({now + runtime_ms_[key], key});
    }
  }

  void Forecast(const std::string& key, int64_t now) {
    const StartForecast f = RunForecast(TakeForecastSnapshot(
        *engine_, model_, now, arm_ == kHistory ? &history_ : nullptr));
    auto it = f.starts.find(key);
    forecast_[key] =
        it == f.starts.end() ? std::nullopt : it->second.expected_start_ms;
  }

  Outcome Score() const {
    Outcome out;
    for (const auto& [key, forecast] : forecast_) {
      ++out.waited;
      if (!forecast) {
        ++out.unknown;
        continue;
      }
      const int64_t started = started_.at(key);
      const double wait_s = (started - arrived_ms_.at(key)) / 1000.0;
      const double error_s = std::abs(started - *forecast) / 1000.0;
      out.errors_s.push_back(error_s);
      out.within += error_s <= (wait_s < 50 ? 5.0 : 0.1 * wait_s) ? 1 : 0;
    }
    return out;
  }

  const Arm arm_;
  std::vector<TraceTask> tasks_;
  std::vector<int64_t> arrival_ms_;
  ClusterModel model_;
  std::unique_ptr<QueueingEngine> engine_;
  std::mt19937_64 random_{2023};
  RuntimeLog history_;
  std::multimap<int64_t, std::string> finish_at_;
  std::map<std::string, int64_t> runtime_ms_, arrived_ms_, started_;
  std::map<std::string, std::string> shape_;
  std::map<std::string, std::optional<int64_t>> forecast_;
};

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * v.size()))];
}

// {arm, tasks}.
void BM_ForecastHonesty(benchmark::State& state) {
  const Arm arm = Arm(state.range(0));
  std::vector<TraceTask> tasks = ReadTasks(state.range(1));
  if (tasks.empty()) {
    state.SkipWithError(("no tasks in " + TracePath()).c_str());
    return;
  }
  Outcome outcome;
  for (auto _ : state) outcome = Replay(arm, tasks).Run();
  const double known = outcome.waited - outcome.unknown;
  state.SetLabel(arm == kKnown       ? "runtimes known"
                 : arm == kDeadlines ? "deadlines only"
                                     : "history only");
  state.counters["waited"] = outcome.waited;
  state.counters["tasks"] = double(tasks.size());
  state.counters["unknown_share"] =
      outcome.waited ? double(outcome.unknown) / outcome.waited : 0;
  state.counters["median_error_s"] = Quantile(outcome.errors_s, 0.5);
  state.counters["p90_error_s"] = Quantile(outcome.errors_s, 0.9);
  state.counters["within_share"] = known ? outcome.within / known : 0;
}

BENCHMARK(BM_ForecastHonesty)
    ->ArgsProduct({{kKnown, kDeadlines, kHistory}, {600}})
    ->Args({kKnown, 50})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace gpusched::bench

BENCHMARK_MAIN();
