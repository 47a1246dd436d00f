#!/usr/bin/env python3
"""Writes a large generated scenario for `gpusched simulate` (scale runs).

Usage: bench/gen_scenario.py OUT_DIR --nodes 1000 --queues 30 --workloads 15000
Nodes are 8-GPU DGX-like nodes; every ClusterQueue shares one cohort with an
equal nominal share; workloads are gangs of 1-4 pods x 1-8 GPUs with three
priorities, arriving one per second, each finishing 600 s after arrival.
Deterministic for a seed.
"""
import argparse
import os
import random


def write_nodes(path, count):
    with open(path, "w") as out:
        out.write("apiVersion: v1\nkind: List\nitems:\n")
        for i in range(count):
            out.write(
                f"- {{apiVersion: v1, kind: Node, metadata: {{name: n{i}, labels: "
                f"{{nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3, gpusched.io/rack: r{i // 16}}}}}, "
                f"status: {{allocatable: {{cpu: '224', memory: 2Ti, pods: '110', nvidia.com/gpu: '8'}}}}}}\n")


def write_policy(path, queues, gpus_each):
    docs = ["apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: h100}\n"]
    for q in range(queues):
        docs.append(
            f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {{name: cq{q}}}\n"
            f"spec:\n  cohort: all\n  preemption: {{withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}}\n"
            f"  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: h100\n"
            f"      resources:\n      - {{name: nvidia.com/gpu, nominalQuota: {gpus_each}}}\n")
        docs.append(
            f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {{name: q, namespace: ns{q}}}\n"
            f"spec: {{clusterQueue: cq{q}}}\n")
    with open(path, "w") as out:
        out.write("---\n".join(docs))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--queues", type=int, default=30)
    parser.add_argument("--workloads", type=int, default=15000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rnd = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    write_nodes(os.path.join(args.out, "nodes.yaml"), args.nodes)
    write_policy(os.path.join(args.out, "policy.yaml"), args.queues, args.nodes * 8 // args.queues)
    with open(os.path.join(args.out, "scenario.yaml"), "w") as out:
        out.write("apiVersion: gpusched.io/v1alpha1\nkind: Scenario\nnodes: nodes.yaml\n"
                  "policy: policy.yaml\nevents:\n")
        for w in range(args.workloads):
            q, pods, gpus = w % args.queues, rnd.randint(1, 4), rnd.choice([1, 2, 4, 8])
            prio = rnd.choice([0, 100, 1000])
            out.write(f"- at: {w}s\n  create:\n")
            for p in range(pods):
                out.write(
                    f"  - {{apiVersion: v1, kind: Pod, metadata: {{name: w{w}-{p}, namespace: ns{q}, "
                    f"labels: {{kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/pod-group-name: w{w}}}, "
                    f"annotations: {{kueue.x-k8s.io/pod-group-total-count: '{pods}'}}}}, "
                    f"spec: {{priority: {prio}, containers: [{{name: c, resources: "
                    f"{{limits: {{nvidia.com/gpu: '{gpus}'}}}}}}]}}}}\n")
            out.write(f"- at: {w + 600}s\n  finish: [ns{q}/w{w}]\n")


if __name__ == "__main__":
    main()
