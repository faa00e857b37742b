"""clrt's profiler trace of one LeNet step, against an independent count.

trace_tool runs one training step under clrt_trace_start/stop and counts,
by interposing the OpenCL and CLBlast calls, every command the library
enqueued. The trace must be JSON as Chrome's trace-event format has it
(what Perfetto and chrome://tracing open); its compute-queue track must hold
exactly those commands, with non-negative durations that do not overlap (an
in-order queue runs one command at a time); the host track must show the
wait for the loss; and clrt_trace_top must agree with the trace.
   python check_trace.py TRACE_TOOL WORK_DIR
"""
import collections
import json
import os
import shutil
import subprocess
import sys

tool, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
trace_path, expect_path = os.path.join(work, "trace.json"), os.path.join(work, "expect.json")
subprocess.run([tool, trace_path, expect_path], check=True)
with open(trace_path) as f:
    trace = json.load(f)  # strict: a malformed file fails here
with open(expect_path) as f:
    expect = json.load(f)

events = trace["traceEvents"]
assert isinstance(events, list) and events, "traceEvents: a non-empty list"
tracks = {}
for e in events:
    assert e["ph"] in ("X", "M"), e
    assert isinstance(e["pid"], int) and isinstance(e["tid"], int) and isinstance(e["name"], str), e
    if e["ph"] == "M" and e["name"] == "thread_name":
        tracks[e["tid"]] = e["args"]["name"]
spans = [e for e in events if e["ph"] == "X"]
for e in spans:
    assert e["cat"] in ("kernel", "gemm", "copy", "native", "wait", "host"), e
    assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0, e
    assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
    assert e["tid"] in tracks, f"span on an unnamed track: {e}"
compute = [t for t, name in tracks.items() if name.endswith("compute queue")]
host = [t for t, name in tracks.items() if name == "host"]
assert len(compute) == 1 and len(host) == 1, tracks
queue = sorted((e for e in spans if e["tid"] == compute[0]), key=lambda e: e["ts"])

# Every command enqueued, and nothing else.
kernels = collections.Counter(e["name"] for e in queue if e["cat"] == "kernel")
assert kernels == collections.Counter(expect["kernels"]), (kernels, expect["kernels"])
native = sum(e["cat"] == "native" or e["name"] == "host_blas_sgemm" for e in queue)
assert native == expect["native"], (native, expect["native"])
clblast = sum(e["name"].startswith("clblast_") for e in queue)
assert clblast == expect["clblast"], (clblast, expect["clblast"])
copies = sum(e["cat"] == "copy" for e in queue)
assert copies == expect["copies"], (copies, expect["copies"])
assert sum(kernels.values()) >= 20, f"a LeNet step launches more kernels than {kernels}"

# One at a time: ts and dur are printed to the nanosecond, so allow 2 ns.
for a, b in zip(queue, queue[1:]):
    assert b["ts"] >= a["ts"] + a["dur"] - 0.002, f"{a} overlaps {b}"

# The loss read waits for the whole step: on the host clock its wait ends
# after the last command (the device clock is mapped with an estimate that
# is late, never early, by the enqueue time: allow 1 ms).
waits = [e for e in spans if e["tid"] == host[0] and e["cat"] == "wait"]
assert waits, "no host wait traced"
last = queue[-1]["ts"] + queue[-1]["dur"]
assert max(w["ts"] + w["dur"] for w in waits) >= last - 1000, (waits, queue[-1])

# clrt_trace_top: per name, the calls and summed durations of the trace:
# the queue's commands and the GEMMs an idle CPU device ran on the calling
# thread (gemm_host.c), which are the device's work on the host track.
host_gemms = [e for e in spans if e["tid"] == host[0] and e["cat"] == "gemm"]
totals = collections.defaultdict(lambda: [0, 0.0])
for e in queue + host_gemms:
    totals[e["name"]][0] += 1
    totals[e["name"]][1] += e["dur"] / 1000
assert len(expect["top"]) == len(totals), (expect["top"], dict(totals))
for a, b in zip(expect["top"], expect["top"][1:]):
    assert a["total_ms"] >= b["total_ms"], "top: most time first"
for op in expect["top"]:
    calls, ms = totals[op["name"]]
    assert op["calls"] == calls and abs(op["total_ms"] - ms) <= 1e-6 * calls + 1e-9, (op, calls, ms)

print(f"{len(spans)} spans on {len(tracks)} tracks: {len(queue)} commands of one step "
      f"({sum(kernels.values())} kernel launches, {native} native, {copies} copies, "
      f"{clblast} CLBlast), {len(host_gemms)} GEMMs on the calling thread, none overlapping; top: "
      + ", ".join(f"{op['name']} {op['total_ms']:.2f} ms" for op in expect["top"][:5]))
