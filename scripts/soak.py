#!/usr/bin/env python3
"""Soak benchmark (not in CI): runs clrt-cnn for many epochs on a subset of
Fashion-MNIST, samples the process's resident memory (VmRSS) and open file
descriptors after every epoch line it prints, and says whether both stay
flat: the RSS of every later epoch within 2% of the highest RSS of the first
WINDOW epochs (kernels compiled, buffers grown: memory handed back to the
system is fine, growth is not), and the same number of open descriptors
every epoch.

  scripts/soak.py [--epochs 100] [--limit 2048] [--device cpu] [--csv FILE]
                  [--build build] [-- more clrt-cnn options]

Exit status 0 when flat, 1 when not, 2 when clrt-cnn failed. Run it under
the CPU lock on a shared machine: flock /tmp/clrt-cpu.lock scripts/soak.py
"""
import argparse
import os
import re
import subprocess
import sys
import time

WINDOW = 10
TOLERANCE = 0.02


def sample(pid):
    with open(f"/proc/{pid}/status") as f:
        rss_kib = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    return rss_kib, fds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--limit", type=int, default=2048)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--build", default="build")
    ap.add_argument("--csv", help="write epoch,rss_kib,fds,seconds here")
    ap.add_argument("extra", nargs="*", help="more clrt-cnn options (after --)")
    a = ap.parse_args()
    cmd = [os.path.join(a.build, "clrt-cnn"), "--epochs", str(a.epochs), "--limit",
           str(a.limit), "--device", a.device] + a.extra
    print("soak:", " ".join(cmd), flush=True)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, bufsize=1)
    rows, t0 = [], time.monotonic()
    for line in p.stdout:
        m = re.match(r"\S+\s+epoch\s+(\d+)\s", line)
        if not m or p.poll() is not None:
            continue
        rss, fds = sample(p.pid)
        rows.append((int(m.group(1)), rss, fds, time.monotonic() - t0))
        print(f"epoch {rows[-1][0]:4d}  rss {rss / 1024:8.1f} MiB  fds {fds:3d}", flush=True)
    if p.wait() != 0 or len(rows) <= WINDOW:
        print(f"soak: clrt-cnn exited {p.returncode} after {len(rows)} epoch(s)", file=sys.stderr)
        return 2
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("epoch,rss_kib,fds,seconds\n")
            f.writelines(f"{e},{r},{d},{s:.2f}\n" for e, r, d, s in rows)
    rss = [r for _, r, _, _ in rows]
    peak, later = max(rss[:WINDOW]), max(rss[WINDOW:])
    growth = (later - peak) / peak
    fds = sorted({d for _, _, d, _ in rows})
    mib = lambda k: f"{k / 1024:.1f}"
    print(f"soak: {len(rows)} epochs in {rows[-1][3]:.0f} s; RSS MiB: epoch 1 {mib(rss[0])}, "
          f"peak of epochs 1-{WINDOW} {mib(peak)}, peak of epochs {WINDOW + 1}-{len(rows)} "
          f"{mib(later)} ({100 * growth:+.2f}%, limit +{100 * TOLERANCE:.0f}%), "
          f"lowest {mib(min(rss))}, last {mib(rss[-1])}; open descriptors: {fds}")
    flat = growth <= TOLERANCE and len(fds) == 1
    print("soak: flat" if flat else "soak: NOT flat")
    return 0 if flat else 1


if __name__ == "__main__":
    sys.exit(main())
