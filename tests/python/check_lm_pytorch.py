"""clrt-lm against the same recipe in PyTorch (bench/lm_compare.py) on a
small model: the same text, vocabulary, split, initial weights (through the
state names) and data order; every epoch's training and validation bits per
character within 1e-3 (relative) of PyTorch's, in float32 on both sides.
   python check_lm_pytorch.py CLRT_LM TEXT WORK_DIR
"""
import json
import os
import subprocess
import sys

lm, text, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
out = os.path.join(work, "compare.json")
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
subprocess.run([sys.executable, os.path.join(root, "bench", "lm_compare.py"), "--clrt-lm", lm,
                "--text", text, "--max-chars", "20000", "--epochs", "3", "--block", "32",
                "--d-model", "32", "--heads", "4", "--layers", "2", "--dim-ff", "64",
                "--batch-size", "16", "--seed", "5", "--json-out", out], check=True)
r = json.load(open(out))
ours, theirs = r["clrt"]["epochs"], r["pytorch"]["epochs"]
assert len(ours) == len(theirs) == 3, (ours, theirs)
for e, (a, b) in enumerate(zip(ours, theirs)):
    for what, x, y in [("train", a[0], b[0]), ("validation", a[1], b[1])]:
        err = abs(x - y) / y
        print(f"epoch {e + 1} {what}: clrt {x:.4f}, PyTorch {y:.4f} bits/char ({err:.1e})")
        assert err <= 1e-3, f"epoch {e + 1} {what}: clrt {x}, PyTorch {y}"
print("clrt-lm matches PyTorch")
