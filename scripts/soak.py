#!/usr/bin/env python3
"""Soak benchmark (not in CI): runs clrt-cnn for many epochs on a subset of
Fashion-MNIST, samples the process's anonymous resident memory (RssAnon:
heaps and the CPU driver's buffers, where a leak shows; VmRSS also counts
the shared libraries' file-backed pages, which come and go with the host's
page cache) every 10 ms and its open file descriptors after every epoch
line it prints, and says whether both stay flat after the first WINDOW
epochs (kernels compiled, buffers grown):

- the same number of open descriptors every epoch;
- each epoch's peak anonymous RSS within 2%: its least-squares trend over the epochs
  after warm-up, extrapolated across them, and the change from the median
  of the first WINDOW epochs after warm-up to the median of the last
  WINDOW, each within 2% of the mean. (A single sample swings by several
  percent with its moment, as the C library trims and regrows the heaps of
  the device driver's threads; an epoch's peak repeats to within a page or
  so. A leak moves it.)

  scripts/soak.py [--epochs 100] [--limit 2048] [--device cpu] [--csv FILE]
                  [--build build] [-- more clrt-cnn options]

Exit status 0 when flat, 1 when not, 2 when clrt-cnn failed. Run it under
the CPU lock on a shared machine: flock /tmp/clrt-cpu.lock scripts/soak.py
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import threading
import time

WINDOW = 10
TOLERANCE = 0.02


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("RssAnon:"))


class PeakSampler(threading.Thread):
    """Samples a process's RSS every 10 ms; take() returns the peak since
    the last take()."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self.lock, self.done = pid, 0, threading.Lock(), False

    def run(self):
        while not self.done:
            try:
                r = rss_kib(self.pid)
            except (OSError, StopIteration):
                return
            with self.lock:
                self.peak = max(self.peak, r)
            time.sleep(0.01)

    def take(self):
        with self.lock:
            peak, self.peak = self.peak, 0
        return max(peak, rss_kib(self.pid))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--limit", type=int, default=2048)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--build", default="build")
    ap.add_argument("--csv", help="write epoch,peak_anon_rss_kib,fds,seconds here")
    ap.add_argument("extra", nargs="*", help="more clrt-cnn options (after --)")
    a = ap.parse_args()
    cmd = [os.path.join(a.build, "clrt-cnn"), "--epochs", str(a.epochs), "--limit",
           str(a.limit), "--device", a.device] + a.extra
    print("soak:", " ".join(cmd), flush=True)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, bufsize=1)
    sampler = PeakSampler(p.pid)
    sampler.start()
    rows, t0 = [], time.monotonic()
    for line in p.stdout:
        m = re.match(r"\S+\s+epoch\s+(\d+)\s", line)
        if not m or p.poll() is not None:
            continue
        peak, fds = sampler.take(), len(os.listdir(f"/proc/{p.pid}/fd"))
        rows.append((int(m.group(1)), peak, fds, time.monotonic() - t0))
        print(f"epoch {rows[-1][0]:4d}  peak anon rss {peak / 1024:7.1f} MiB  fds {fds:3d}", flush=True)
    sampler.done = True
    if p.wait() != 0 or len(rows) <= 2 * WINDOW:
        print(f"soak: clrt-cnn exited {p.returncode} after {len(rows)} epoch(s) (the verdict "
              f"needs more than {2 * WINDOW})", file=sys.stderr)
        return 2
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("epoch,peak_anon_rss_kib,fds,seconds\n")
            f.writelines(f"{e},{r},{d},{s:.2f}\n" for e, r, d, s in rows)
    rss = [r / 1024 for _, r, _, _ in rows]
    after = rss[WINDOW:]
    mean = statistics.fmean(after)
    xs = range(len(after))
    slope = statistics.linear_regression(xs, after).slope
    trend = slope * (len(after) - 1) / mean
    first, last = statistics.median(after[:WINDOW]), statistics.median(after[-WINDOW:])
    step = (last - first) / mean
    fds = sorted({d for _, _, d, _ in rows})
    print(f"soak: {len(rows)} epochs in {rows[-1][3]:.0f} s; peak anonymous RSS per epoch, MiB: "
          f"epoch 1 {rss[0]:.1f}, epochs {WINDOW + 1}-{len(rows)}: mean {mean:.1f}, range {min(after):.1f}.."
          f"{max(after):.1f}, trend {100 * trend:+.2f}%, median of the first {WINDOW} "
          f"{first:.1f} and of the last {WINDOW} {last:.1f} ({100 * step:+.2f}%; limit "
          f"{100 * TOLERANCE:.0f}%); open descriptors: {fds}")
    flat = abs(trend) <= TOLERANCE and abs(step) <= TOLERANCE and len(fds) == 1
    print("soak: flat" if flat else "soak: NOT flat")
    return 0 if flat else 1


if __name__ == "__main__":
    sys.exit(main())
