#!/usr/bin/env python3
"""Data-parallel scaling on this machine (run through bench/scaling.sh).

Trains LeNet on Fashion-MNIST with clrt-cnn three ways, one core per worker,
alternating in rounds so that a drifting load hits each alike:
  one    one PoCL device on one core (taskset, POCL_MAX_PTHREAD_COUNT=1,
         OPENBLAS_NUM_THREADS=1): the reference
  devs   two PoCL devices in one process (POCL_DEVICES="pthread pthread"),
         on two cores: PoCL's devices in one process share one pool of
         worker threads, so the pool gets two (POCL_MAX_PTHREAD_COUNT=2);
         OpenBLAS's threads as clrt sets them (one a GEMM once two devices
         run GEMMs), as a user's run gets them
  ranks  two MPI ranks (mpirun -np 2 --bind-to core: --bind-to), one device
         and one PoCL worker each: clrt-cnn --distributed
  pair   two independent one-core trainings at once (cores 0 and 1), their
         samples per second summed: what this machine's two cores give two
         jobs that share nothing (memory bandwidth and caches aside), the
         ceiling the parallel ways are held against (target: >= 90% of it)
Each run trains --epochs epochs on --limit images; the last epoch's training
pass is timed (the first builds kernels). Prints, per way, the median steps
per second, the speed-up over `one` (target: >= 1.7, 85% of 2), how far
each way's last loss and test accuracy are from `one`'s (the same training,
summed in another order),
and the time split per step: the host's gradient sums, the part of them
spent waiting for the devices' gradients and in MPI_Allreduce, the staging
waits (device compute), and the rest (host enqueueing and data)."""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

EPOCH = re.compile(r"epoch +(\d+) +lr [0-9.]+ +loss ([0-9.]+) +train acc ([0-9.]+) +test acc "
                   r"([0-9.]+) +([0-9.]+) s +([0-9.]+) samples/s")
SPLIT = re.compile(r"time split: data ([0-9.]+) s, staging waits ([0-9.]+) s, gradient sums "
                   r"([0-9.]+) s \(waiting for the devices ([0-9.]+) s, across processes "
                   r"([0-9.]+) s\)")
ONE_CORE = {"POCL_MAX_PTHREAD_COUNT": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
MPI_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def commands(a):
    cnn = [os.path.join(a.build, "clrt-cnn"), "--model", "lenet", "--epochs", str(a.epochs),
           "--limit", str(a.limit), "--test-limit", str(a.test_limit), "--batch-size",
           str(a.batch), "--seed", "1"]
    def on_core(core):
        return ["taskset", "-c", str(core)] + cnn + ["--device", "cpu"]

    ways = {
        "one": ([on_core(0)], ONE_CORE),
        # PoCL's pthread devices in one process share one pool of worker
        # threads: two workers for two devices is one core each.
        "devs": ([cnn + ["--devices", "cpu:0,cpu:1"]],
                 {"POCL_DEVICES": "pthread pthread", "POCL_MAX_PTHREAD_COUNT": "2"}),
        "ranks": ([["mpirun", "-np", "2", "--bind-to", a.bind_to] + cnn
                   + ["--distributed", "--device", "cpu"]], dict(ONE_CORE, **MPI_ROOT)),
        "pair": ([on_core(0), on_core(1)], ONE_CORE),
    }
    if not shutil.which("mpirun") or not a.mpi:
        del ways["ranks"]
    return ways


def start(cmd, extra):
    env = dict(os.environ, **extra)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        if name not in extra:  # devs: clrt's own choice, not the caller's
            env.pop(name, None)
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def finish(cmd, p):
    out, err = p.communicate()
    if p.returncode != 0:
        sys.exit(f"scaling: {' '.join(cmd)} failed ({p.returncode}):\n{out}{err}")
    return parse(out)


def run(cmds, extra):
    """One round of a way: its commands at once (pair's two trainings; one
    for the others), their rates summed and the slower one's time."""
    procs = [start(c, extra) for c in cmds]
    rs = [finish(c, p) for c, p in zip(cmds, procs)]
    if len(rs) == 1:
        return rs[0]
    return {"seconds": max(r["seconds"] for r in rs),
            "samples_per_s": sum(r["samples_per_s"] for r in rs),
            "results": rs[0]["results"], "split": None}


def parse(stdout):
    epochs = EPOCH.findall(stdout)
    splits = SPLIT.findall(stdout)
    last = epochs[-1]
    r = {"seconds": float(last[4]), "samples_per_s": float(last[5]),
         "results": tuple(last[1:4]), "split": None}
    if splits:
        r["split"] = [float(x) for x in splits[-1]]
    return r


def steps_of(a):
    return -(-a.limit // a.batch)


def report(a, rows):
    steps = steps_of(a)
    print(f"LeNet, Fashion-MNIST {a.limit} images, batch {a.batch}, {steps} steps per epoch; "
          f"epoch {a.epochs} timed; median of {a.rounds} alternating rounds\n")
    print(f"{'way':6} {'steps/s':>8} {'speed-up':>9} {'min..max':>13} {'max |d loss|':>13} "
          f"{'max |d test acc|':>17}")
    for way, rs in rows.items():
        sps = [r["samples_per_s"] / a.batch for r in rs]
        ups = sorted(r["samples_per_s"] / o["samples_per_s"] for r, o in zip(rs, rows["one"]))
        pairs = list(zip(rs, rows["one"]))
        dloss = max(abs(float(r["results"][0]) - float(o["results"][0])) for r, o in pairs)
        dacc = max(abs(float(r["results"][2]) - float(o["results"][2])) for r, o in pairs)
        print(f"{way:6} {statistics.median(sps):8.1f} {statistics.median(ups):8.2f}x "
              f"{ups[0]:6.2f}..{ups[-1]:.2f} {dloss:13.4f} {dacc:17.4f}")
    if "pair" in rows:
        print("\nagainst two independent one-core runs at once (pair), round by round "
              "(target: >= 90%):")
        for way in (w for w in rows if w in ("devs", "ranks")):
            fr = sorted(r["samples_per_s"] / p["samples_per_s"]
                        for r, p in zip(rows[way], rows["pair"]))
            print(f"{way:6} {statistics.median(fr):6.1%} of pair ({fr[0]:.1%}..{fr[-1]:.1%})")
    print("\ntime split per step, ms (medians): host gradient sums = their own work + waiting "
          "for the devices + across processes; staging waits are device compute")
    print(f"{'way':6} {'step':>7} {'sums':>7} {'own':>7} {'dev wait':>9} {'allreduce':>10} "
          f"{'staging':>8} {'data':>7}")
    for way, rs in rows.items():
        step = statistics.median(r["seconds"] for r in rs) / steps * 1e3
        sp = [r["split"] for r in rs if r["split"]]
        if not sp:
            print(f"{way:6} {step:7.2f}   (one device a run: no gradient sums)")
            continue
        own = [s[2] - s[3] - s[4] for s in sp]  # per round, then the median
        data, staging, sums, dev_wait, world = (statistics.median(s[i] for s in sp)
                                                for i in range(5))
        ms = 1e3 / steps
        print(f"{way:6} {step:7.2f} {sums * ms:7.2f} {statistics.median(own) * ms:7.2f} "
              f"{dev_wait * ms:9.2f} {world * ms:10.2f} {staging * ms:8.2f} {data * ms:7.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--limit", type=int, default=30720)
    ap.add_argument("--test-limit", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--no-mpi", dest="mpi", action="store_false")
    ap.add_argument("--bind-to", default="core", help="mpirun's binding of each rank")
    ap.add_argument("--json-out", help="also save every round's figures there")
    a = ap.parse_args()
    ways = commands(a)
    rows = {w: [] for w in ways}
    for i in range(a.rounds):
        order = list(ways) if i % 2 == 0 else list(reversed(ways))
        for w in order:
            rows[w].append(run(*ways[w]))
            print(f"round {i + 1} {w}: {rows[w][-1]['samples_per_s']:.0f} samples/s",
                  file=sys.stderr)
    report(a, rows)
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump({"args": vars(a), "steps_per_epoch": steps_of(a), "rounds": rows}, f,
                      indent=1)


if __name__ == "__main__":
    main()
