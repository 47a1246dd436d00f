#!/usr/bin/env python3
"""Writes a large generated scenario for `gpusched simulate` (scale runs).

Usage:
  bench/gen_scenario.py OUT_DIR --shape kueue-baseline   # 15,000 workloads, 30 CQs
  bench/gen_scenario.py OUT_DIR --shape kueue-large      # 50,000 workloads, 1,000 CQs
  bench/gen_scenario.py OUT_DIR --cohorts 2 --queues-per-cohort 3 --per-queue 50

The shapes follow Kueue's performance tests (test/performance/scheduler:
cohorts x ClusterQueues x workloads; small, medium and large classes with
rising priority and runtime; nominal quota per queue with a borrowing
limit; preemption of lower priorities), in GPUs instead of CPUs:
  small  = 1 pod x 1 GPU,            priority 50,  runs 20 s
  medium = gang of 2 pods x 2 GPUs,  priority 100, runs 50 s
  large  = gang of 2 pods x 8 GPUs,  priority 200, runs 100 s
  (Kueue: 1 CPU / 200 ms, 5 CPU / 500 ms, 20 CPU / 1 s.)
Each queue has a nominal quota of 16 GPUs and may borrow 64 more from its
cohort; the cluster has exactly the GPUs the quotas sum to (8-GPU nodes in
zones, blocks and racks), so quota and capacity both bind. Workloads of a
queue arrive one per second, classes mixed at random; each runs its
class runtime once admitted (annotation simulation.gpusched.io/runtime). Deterministic for a seed.
"""
import argparse
import os
import random

SHAPES = {
    "kueue-baseline": dict(cohorts=5, queues_per_cohort=6, per_queue=500),
    "kueue-large": dict(cohorts=10, queues_per_cohort=100, per_queue=50),
}
# name: (pods, GPUs per pod, priority, runtime seconds, share of workloads)
CLASSES = [
    ("small", 1, 1, 50, 20, 0.70),
    ("medium", 2, 2, 100, 50, 0.20),
    ("large", 2, 8, 200, 100, 0.10),
]
NOMINAL_GPUS = 16
BORROWING_LIMIT = 64


def write_nodes(path, count):
    with open(path, "w") as out:
        out.write("apiVersion: v1\nkind: List\nitems:\n")
        for i in range(count):
            out.write(
                f"- {{apiVersion: v1, kind: Node, metadata: {{name: n{i}, labels: "
                f"{{nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3, kubernetes.io/hostname: n{i}, "
                f"topology.kubernetes.io/zone: z{i // 512}, gpusched.io/block: b{i // 64}, "
                f"gpusched.io/rack: r{i // 16}}}}}, "
                f"status: {{allocatable: {{cpu: '224', memory: 2Ti, pods: '110', nvidia.com/gpu: '8'}}}}}}\n")


def queue_name(c, q):
    return f"c{c}-q{q}"


def write_policy(path, cohorts, queues_per_cohort):
    docs = ["apiVersion: gpusched.io/v1alpha1\nkind: SchedulerConfig\nmetadata: {name: config}\n"
            "spec:\n  topologyLevels: [topology.kubernetes.io/zone, gpusched.io/block, "
            "gpusched.io/rack, kubernetes.io/hostname]\n",
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: h100}\n"
            "spec:\n  nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n"]
    for c in range(cohorts):
        for q in range(queues_per_cohort):
            name = queue_name(c, q)
            docs.append(
                f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {{name: {name}}}\n"
                f"spec:\n  cohort: cohort-{c}\n"
                f"  preemption: {{withinClusterQueue: LowerPriority, reclaimWithinCohort: LowerPriority}}\n"
                f"  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: h100\n"
                f"      resources:\n      - {{name: nvidia.com/gpu, nominalQuota: {NOMINAL_GPUS}, "
                f"borrowingLimit: {BORROWING_LIMIT}}}\n")
            docs.append(
                f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {{name: q, namespace: {name}}}\n"
                f"spec: {{clusterQueue: {name}}}\n")
    with open(path, "w") as out:
        out.write("---\n".join(docs))


def pick_class(rnd):
    roll, acc = rnd.random(), 0.0
    for cls in CLASSES:
        acc += cls[5]
        if roll < acc:
            return cls
    return CLASSES[-1]


def workload_pods(name, ns, cls):
    _, pods, gpus, prio, runtime, _ = cls
    annotations = f"simulation.gpusched.io/runtime: '{runtime}s'"
    labels = "kueue.x-k8s.io/queue-name: q"
    if pods > 1:
        labels += f", kueue.x-k8s.io/pod-group-name: {name}"
        annotations += f", kueue.x-k8s.io/pod-group-total-count: '{pods}'"
    return [
        f"  - {{apiVersion: v1, kind: Pod, metadata: {{name: {name}-{p}, namespace: {ns}, "
        f"labels: {{{labels}}}, annotations: {{{annotations}}}}}, "
        f"spec: {{priority: {prio}, containers: [{{name: c, resources: "
        f"{{limits: {{nvidia.com/gpu: '{gpus}'}}}}}}]}}}}\n"
        for p in range(pods)]


def write_scenario(path, cohorts, queues_per_cohort, per_queue, rnd):
    """One workload per queue per simulated second, round-robin; each runs
    its class runtime once admitted (simulation.gpusched.io/runtime)."""
    queues = [(c, q) for c in range(cohorts) for q in range(queues_per_cohort)]
    with open(path, "w") as out:
        out.write("apiVersion: gpusched.io/v1alpha1\nkind: Scenario\nnodes: nodes.yaml\n"
                  "policy: policy.yaml\nevents:\n")
        for i in range(per_queue):
            out.write(f"- at: {i}s\n  create:\n")
            for c, q in queues:
                cls = pick_class(rnd)
                out.writelines(workload_pods(f"{cls[0]}-{i}", queue_name(c, q), cls))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--shape", choices=sorted(SHAPES))
    parser.add_argument("--cohorts", type=int, default=2)
    parser.add_argument("--queues-per-cohort", type=int, default=3)
    parser.add_argument("--per-queue", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    shape = SHAPES[args.shape] if args.shape else dict(
        cohorts=args.cohorts, queues_per_cohort=args.queues_per_cohort, per_queue=args.per_queue)
    rnd = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    queues = shape["cohorts"] * shape["queues_per_cohort"]
    write_nodes(os.path.join(args.out, "nodes.yaml"), queues * NOMINAL_GPUS // 8)
    write_policy(os.path.join(args.out, "policy.yaml"), shape["cohorts"], shape["queues_per_cohort"])
    write_scenario(os.path.join(args.out, "scenario.yaml"), shape["cohorts"],
                   shape["queues_per_cohort"], shape["per_queue"], rnd)


if __name__ == "__main__":
    main()
