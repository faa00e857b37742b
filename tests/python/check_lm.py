"""clrt-lm end to end on a small model: bad input refused with a clear
error (a missing, empty or binary text, a prompt outside the vocabulary, a
block longer than the checkpoint's, --sample without --checkpoint, a
resumed run whose recipe differs, a FIFO); a folder read as its files
in name order without fortune's .dat indexes; a run saved after 2 epochs and resumed
to 3 ends exactly where a 3-epoch run does; TensorBoard events written; a
sample that continues the prompt with the text's characters; on two PoCL
devices the same losses within 1e-3 (sums in another order).
   python check_lm.py CLRT_LM TEXT WORK_DIR
"""
import glob
import os
import re
import shutil
import subprocess
import sys

lm, text, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
SMALL = ["--text", text, "--max-chars", "12000", "--block", "16", "--d-model", "32",
         "--heads", "2", "--layers", "1", "--batch-size", "16", "--seed", "7"]


def run(args, env=None, ok=True):
    p = subprocess.run([lm] + args, capture_output=True, text=True,
                       env={**os.environ, **(env or {})})
    if ok and p.returncode != 0:
        sys.exit(f"clrt-lm {' '.join(args)} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    return p


def refused(args, *words, code=None):
    p = run(args, ok=False)
    assert p.returncode != 0, f"clrt-lm {' '.join(args)} succeeded:\n{p.stdout}"
    assert code is None or p.returncode == code, f"exit {p.returncode}, not {code}: {p.stderr}"
    for w in words:
        assert w in p.stderr, f"clrt-lm {' '.join(args)}: '{w}' not in:\n{p.stderr}"
    print(f"refused: {p.stderr.strip().splitlines()[0]}")


def losses(out):
    return [(float(a), float(b)) for a, b in
            re.findall(r"train ([0-9.]+) bits/char\s+validation ([0-9.]+) bits/char", out)]


def path(name):
    return os.path.join(work, name)


# Bad input.
open(path("empty.txt"), "w").close()
with open(path("binary.bin"), "wb") as f:
    f.write(bytes(range(256)) * 8)
refused(["--text", path("missing.txt")], "cannot open", "missing.txt")
refused(["--text", path("empty.txt")], "is empty")
refused(["--text", path("binary.bin")], "is not text", "NUL")
os.mkfifo(path("fifo"))
refused(["--text", path("fifo")], "not a regular file")
# A folder: its files in name order, fortune's binary .dat indexes left out.
os.makedirs(path("texts"))
for name, body in [("b.txt", b"second part\n" * 40), ("a.txt", b"first part\n" * 40),
                   ("a.txt.dat", bytes(range(256)))]:
    with open(os.path.join(path("texts"), name), "wb") as f:
        f.write(body)
folder = run(["--text", path("texts"), "--epochs", "0", "--block", "8", "--d-model", "8",
              "--heads", "1", "--layers", "1"])
assert f"{40 * 23} characters" in folder.stdout, folder.stdout
refused(["--sample", "10"], "needs --checkpoint", code=2)
refused(["--epochs", "x"], "--epochs", code=2)
refused(SMALL + ["--heads", "3"], "nhead 3")

# Training, saving, resuming: 2 epochs saved, resumed to 3, end exactly
# where 3 straight epochs do (a constant rate: the cosine spans the epochs
# planned, so a resumed cosine run must plan the same number).
CONST = SMALL + ["--schedule", "constant"]
three = run(CONST + ["--epochs", "3", "--logdir", path("logs"), "--save", path("ck.safetensors")])
again = run(CONST + ["--epochs", "3"])
assert losses(three.stdout) == losses(again.stdout), "two runs from one seed differ"
run(CONST + ["--epochs", "2", "--save", path("two.safetensors")])
resumed = run(CONST + ["--epochs", "3", "--resume", path("two.safetensors")])
assert losses(resumed.stdout) == losses(three.stdout)[2:], (resumed.stdout, three.stdout)
print("3 epochs:", losses(three.stdout), "resumed:", losses(resumed.stdout))
refused(CONST + ["--epochs", "3", "--lr", "0.01", "--resume", path("two.safetensors")],
        "--resume", "lr")
refused(SMALL + ["--epochs", "3", "--resume", path("two.safetensors")], "--resume", "schedule")
assert glob.glob(os.path.join(path("logs"), "events.out.tfevents.*")), "no TensorBoard events"

# Sampling.
sample = run(["--sample", "40", "--checkpoint", path("ck.safetensors"), "--prompt", "The ",
              "--seed", "3"])
body = sample.stdout.rstrip("\n")
assert body.startswith("The ") and len(body) == 44, f"sample: {body!r}"
vocab = set(open(text, "rb").read()[:12000].decode("latin-1"))
assert set(body) <= vocab, f"sample has characters outside the text: {set(body) - vocab}"
print(f"sample: {body!r}")
refused(["--sample", "5", "--checkpoint", path("ck.safetensors"), "--prompt", "caf\u00e9 \u2603"],
        "--prompt", "not in the model's vocabulary")
refused(["--sample", "5", "--checkpoint", path("ck.safetensors"), "--block", "17"],
        "longer than the checkpoint's block 16")
refused(["--sample", "5", "--checkpoint", path("missing.safetensors")], "--checkpoint")

# Two devices: the same training within rounding.
pair = run(CONST + ["--epochs", "3", "--devices", "cpu:0,cpu:1"],
           env={"POCL_DEVICES": "pthread pthread"})
one, both = losses(three.stdout), losses(pair.stdout)
assert len(both) == 3, pair.stdout
for (a, b), (c, d) in zip(one, both):
    assert abs(a - c) <= 1e-3 * a and abs(b - d) <= 1e-3 * b, f"one device {one}, two {both}"
print("two devices:", both)
print("clrt-lm checks passed")
