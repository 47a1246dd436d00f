// Filter for a queued pod while the admission loop holds a backlog: the
// loop runs on its own thread and filter only reads its published verdicts,
// so filter's latency must not grow with the number of pending workloads
// (issue E §5: p99 with 10,000 pending no worse than with none). The
// backlog is single-GPU workloads in a queue whose quota they exceed; the
// probe pod waits in the same queue, and filter answers every candidate
// with the queue's reason.
//
// BM_FilterUnqueuedPodDuringPasses (issue G §1): filter for a pod outside
// every queue, on the A-latency shape (extender_bench's cluster, 500
// candidates a request), while the loop runs a pass every 100 ms over the
// backlog, against the same with no queue and no loop. A pass must not
// hold the extender's lock while it plans, so the filter's CPU (thread CPU
// time, CLOCK_THREAD_CPUTIME_ID: what the request costs the server) and
// wall p99 stay those of the arm without passes.
//
// The two arms run in one process, in alternating phases, on the same
// requests: on this shared 2-core VM two runs of one arm differ by up to
// 20 % in p99 (the host's load drifts), more than the 1.1x the target
// allows, and alternating puts both arms under the same drift.
#include <time.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "api/codec/pod_admission_state.h"
#include "api/controller/admission_loop.h"
#include "bench/lib/cluster_generator.h"
#include "bench/lib/latency.h"
#include "benchmark/benchmark.h"
#include "scheduler/extender_service.h"

namespace gpusched::bench {
namespace {

// One ClusterQueue of 8 GPUs (the backlog waits for quota), one flavor.
Policy SmallQueue() {
  Policy policy;
  policy.flavors = {ResourceFlavor{.name = "any"}};
  ClusterQueue cq{.name = "team"};
  cq.resource_groups.push_back(ResourceGroup{
      .covered_resources = {"nvidia.com/gpu", "cpu", "memory"},
      .flavors = {FlavorQuotas{
          .flavor = "any",
          .resources = {{.name = "nvidia.com/gpu", .nominal = 8},
                        {.name = "cpu", .nominal = int64_t{1} << 30},
                        {.name = "memory", .nominal = int64_t{1} << 50}}}}});
  policy.cluster_queues.push_back(std::move(cq));
  policy.local_queues.push_back(LocalQueue{"team-ns", "q", "team"});
  return policy;
}

Pod QueuedPod(const std::string& name, int gpus) {
  Pod pod = MakeGpuPod(name, gpus);
  pod.meta.namespace_name = "team-ns";
  pod.meta.uid = "uid-" + name;
  pod.meta.labels = {{"kueue.x-k8s.io/queue-name", "q"}};
  ReadPodAdmissionState(pod);  // as api/codec does for a pod it reads
  return pod;
}

// The loop and service with `pending` waiting workloads (after 8 GPUs'
// worth were admitted), settled: every input went through a pass. The
// probe sorts last in the queue (equal creation times go by name), so it
// waits.
struct Backlog {
  std::unique_ptr<AdmissionLoop> loop;
  std::unique_ptr<ExtenderService> service;
  std::vector<std::string> candidates;
  ~Backlog() { loop->Stop(); }
};

std::unique_ptr<Backlog> MakeBacklog(int pending, int nodes, int candidates) {
  auto b = std::make_unique<Backlog>();
  b->loop = *AdmissionLoop::Create(SmallQueue());
  b->service =
      std::make_unique<ExtenderService>(ServiceOptions{.gate = b->loop.get()});
  GeneratedCluster cluster = GenerateCluster(nodes, 0.0, 5);
  std::vector<std::string> names = NamesOf(cluster.nodes);
  b->service->UpsertNodes(std::move(cluster.nodes));
  b->candidates = CandidateSets(names, candidates, 1, 9).front();
  b->loop->Start(*b->service, nullptr);
  for (int i = 0; i < 8 + pending; ++i) {
    b->loop->PodUpserted(QueuedPod("w" + std::to_string(i), 1));
  }
  b->loop->PodUpserted(QueuedPod("zz-probe", 1));
  b->loop->WaitIdle();
  return b;
}

void BM_FilterQueuedPodWithBacklog(benchmark::State& state) {
  const int pending = state.range(0), nodes = state.range(1);
  std::unique_ptr<Backlog> b = MakeBacklog(pending, nodes, state.range(2));
  const Pod probe = QueuedPod("zz-probe", 1);
  Latencies latencies;
  size_t failed = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    FilterOutcome outcome = b->service->Filter(probe, b->candidates);
    latencies.Add(std::chrono::steady_clock::now() - start);
    failed = outcome.failed.size() + outcome.unresolvable.size();
    benchmark::DoNotOptimize(outcome);
  }
  latencies.Publish(state);
  // Every candidate refused with the queue's reason: the probe waits.
  state.counters["refused"] = static_cast<double>(failed);
  state.counters["pending"] = pending;
}

// {pending workloads, nodes, candidates per filter}; /50/ is CI's size.
BENCHMARK(BM_FilterQueuedPodWithBacklog)
    ->Args({0, 5000, 500})
    ->Args({10000, 5000, 500})
    ->Args({50, 50, 50})
    ->Unit(benchmark::kMicrosecond);

// The filter thread's CPU time: what the call cost the server, without
// the time it waited for the model's lock or for a core.
std::chrono::nanoseconds ThreadCpuTime() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

// The extender on extender_bench's cluster (40 % of the GPUs in use) and,
// with `pending` > 0, the loop with that backlog and a pod update every
// 100 ms (each update wakes a pass over the whole backlog).
class PassesUnderWay {
 public:
  PassesUnderWay(bool with_loop, int pending, int nodes, int candidates) {
    if (with_loop) loop_ = *AdmissionLoop::Create(SmallQueue());
    service_ =
        std::make_unique<ExtenderService>(ServiceOptions{.gate = loop_.get()});
    GeneratedCluster cluster = GenerateCluster(nodes, 0.4, 42);
    candidates_ = CandidateSets(NamesOf(cluster.nodes), candidates, 16, 7);
    service_->UpsertNodes(std::move(cluster.nodes));
    service_->AddRunningPods(cluster.running);
    if (!with_loop) return;
    loop_->Start(*service_, nullptr);
    for (int i = 0; i < 8 + pending; ++i) {
      loop_->PodUpserted(QueuedPod("w" + std::to_string(i), 1));
    }
    loop_->WaitIdle();
    ticker_ = std::jthread(
        [this, pending](std::stop_token stop) { Tick(stop, pending); });
  }
  ~PassesUnderWay() {
    ticker_.request_stop();
    if (ticker_.joinable()) ticker_.join();
    if (loop_ != nullptr) loop_->Stop();
  }

  ExtenderService& service() { return *service_; }
  const std::vector<std::string>& candidates(size_t i) const {
    return candidates_[i % candidates_.size()];
  }
  uint64_t passes() const { return loop_ == nullptr ? 0 : loop_->passes(); }
  // Stopping returns once no pass is under way.
  void SetTicking(bool on) {
    ticking_ = on;
    if (!on && loop_ != nullptr) loop_->WaitIdle();
  }

 private:
  // A changed annotation on a pending pod: an input, so a pass.
  void Tick(std::stop_token stop, int pending) {
    std::mutex mu;
    std::condition_variable_any cv;
    for (int i = 0; !stop.stop_requested(); ++i) {
      std::unique_lock lock(mu);
      if (cv.wait_for(lock, stop, std::chrono::milliseconds(100),
                      [] { return false; })) {
        break;
      }
      if (!ticking_) continue;
      Pod pod = QueuedPod("w" + std::to_string(8 + i % pending), 1);
      pod.meta.annotations["bench/tick"] = std::to_string(i);
      loop_->PodUpserted(std::move(pod));
    }
  }

  std::unique_ptr<AdmissionLoop> loop_;
  std::unique_ptr<ExtenderService> service_;
  std::vector<std::vector<std::string>> candidates_;
  std::atomic<bool> ticking_{true};
  std::jthread ticker_;
};

// One arm's filters: wall and thread-CPU time of each.
struct ArmSamples {
  Latencies wall, cpu;
  size_t next = 0;

  void Filter(PassesUnderWay& fixture, const std::vector<Pod>& pods) {
    const Pod& pod = pods[next % pods.size()];
    const std::vector<std::string>& names = fixture.candidates(next++);
    const auto cpu_start = ThreadCpuTime();
    const auto start = std::chrono::steady_clock::now();
    FilterOutcome outcome = fixture.service().Filter(pod, names);
    wall.Add(std::chrono::steady_clock::now() - start);
    cpu.Add(ThreadCpuTime() - cpu_start);
    benchmark::DoNotOptimize(outcome);
  }
};

void BM_FilterUnqueuedPodDuringPasses(benchmark::State& state) {
  const int pending = state.range(0);
  const auto phase = std::chrono::milliseconds(state.range(3));
  PassesUnderWay quiet(false, 0, state.range(1), state.range(2));
  PassesUnderWay busy(true, pending, state.range(1), state.range(2));
  const std::vector<Pod> pods = PendingPodMix();
  ArmSamples no_queue, with_passes;
  uint64_t passes = 0, busy_since = 0;
  bool busy_phase = true;  // the first switch starts a quiet phase
  auto phase_end = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (std::chrono::steady_clock::now() >= phase_end) {
      state.PauseTiming();
      if (busy_phase) passes += busy.passes() - busy_since;
      busy_phase = !busy_phase;
      busy.SetTicking(busy_phase);  // off: waits out a pass under way
      busy_since = busy.passes();
      phase_end = std::chrono::steady_clock::now() + phase;
      state.ResumeTiming();
    }
    if (busy_phase) {
      with_passes.Filter(busy, pods);
    } else {
      no_queue.Filter(quiet, pods);
    }
  }
  if (busy_phase) passes += busy.passes() - busy_since;
  busy.SetTicking(false);
  no_queue.wall.Publish(state, "noq_");
  no_queue.cpu.Publish(state, "noq_cpu_");
  with_passes.wall.Publish(state);
  with_passes.cpu.Publish(state, "cpu_");
  state.counters["cpu_p99_ratio"] =
      with_passes.cpu.At(0.99) / no_queue.cpu.At(0.99);
  state.counters["p99_ratio"] =
      with_passes.wall.At(0.99) / no_queue.wall.At(0.99);
  state.counters["passes"] = static_cast<double>(passes);
  state.counters["pending"] = pending;
}

// {pending workloads, nodes, candidates per filter, phase ms}: 10,000
// pending on the A-latency shape, half-second phases (five passes each);
// /50/ is CI's size. Run the big one for 20 s or more
// (--benchmark_min_time=20): twenty phases of each arm.
BENCHMARK(BM_FilterUnqueuedPodDuringPasses)
    ->Args({10000, 5000, 500, 500})
    ->Args({50, 50, 50, 2})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace gpusched::bench

BENCHMARK_MAIN();
