"""clrt's TensorBoard event files against TensorBoard's own reader.

Random scalars (tags, steps, wall times, values) go through clrt's summary
writer (summary_tool); EventAccumulator must read back every tag, step,
wall time and float32 value exactly. Then one record's data CRC, and in a
second copy one record's length CRC, is flipped: the reader must stop at
that record (it keeps only the records before it), which proves the CRCs
are real.
   python check_summary.py SUMMARY_TOOL WORK_DIR
"""
import os
import random
import shutil
import struct
import subprocess
import sys

import numpy as np
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

tool, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
seed = int.from_bytes(os.urandom(6), "little")
print(f"seed {seed}")
rng = random.Random(seed)
tags = ["Train/Loss", "Test/Accuracy", "Train/Samples per second"]
want = {t: [] for t in tags}
lines = []
for step in range(rng.randint(20, 60)):
    for t in tags:
        if rng.random() < 0.7:
            wall = 1.7e9 + rng.uniform(0, 1e8)
            value = rng.uniform(-1e3, 1e3) * 10 ** rng.randint(-5, 5)
            lines.append(f"{t.replace(' ', '_')} {step} {wall.hex()} {value.hex()}")
            want[t].append((wall, step, float(np.float32(value))))
want = {t.replace(" ", "_"): v for t, v in want.items() if v}
logdir = os.path.join(work, "good")
subprocess.run([tool, logdir], input="\n".join(lines) + "\n", text=True, check=True)
files = os.listdir(logdir)
assert len(files) == 1 and files[0].startswith("events.out.tfevents."), files


def read(folder):
    ea = EventAccumulator(folder)
    ea.Reload()
    return {t: [(e.wall_time, e.step, e.value) for e in ea.Scalars(t)]
            for t in ea.Tags()["scalars"]}


got = read(logdir)
assert got == want, (got, want)
print(f"EventAccumulator read {len(lines)} scalars under {len(got)} tags exactly")

# Records: (offset, length); record 0 is the file version.
blob = open(os.path.join(logdir, files[0]), "rb").read()
records, at = [], 0
while at < len(blob):
    n = struct.unpack("<Q", blob[at:at + 8])[0]
    records.append((at, n))
    at += 12 + n + 4
assert at == len(blob) and len(records) == len(lines) + 1
for what, pick in (("data CRC", lambda a, n: a + 12 + n), ("length CRC", lambda a, n: a + 8)):
    k = rng.randint(1, len(lines))
    bad = bytearray(blob)
    bad[pick(*records[k])] ^= 1 << rng.randint(0, 7)
    folder = os.path.join(work, what.replace(" ", "-"))
    os.makedirs(folder)
    open(os.path.join(folder, files[0]), "wb").write(bad)
    kept = sum(len(v) for v in read(folder).values())
    assert kept == k - 1, (what, k, kept)
    print(f"a bad {what} in record {k}: the reader kept the {kept} records before it")
