"""clrt-cnn --logdir read by TensorBoard's EventAccumulator: every training
step's loss under Train/Loss at steps 0, 1, ... (their batch-weighted mean
is the epoch's printed training loss), and per epoch the printed figures.
   python check_cnn_logdir.py CLRT_CNN WORK_DIR
"""
import os
import re
import shutil
import subprocess
import sys

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

cnn, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
limit, batch, epochs = 1024, 100, 2
out = subprocess.run([cnn, "--limit", str(limit), "--batch-size", str(batch), "--epochs",
                      str(epochs), "--device", "cpu", "--logdir", work],
                     check=True, capture_output=True, text=True).stdout
printed = re.findall(r"epoch +(\d+) .*loss ([0-9.]+) +train acc ([0-9.]+) +test acc ([0-9.]+)"
                     r" .* ([0-9]+) samples/s", out)
assert len(printed) == epochs, out
ea = EventAccumulator(work)
ea.Reload()
tags = set(ea.Tags()["scalars"])
assert tags == {"Train/Loss", "Epoch/Train loss", "Epoch/Train accuracy", "Epoch/Test loss",
                "Epoch/Test accuracy", "Epoch/Samples per second"}, tags
steps = ea.Scalars("Train/Loss")
per = -(-limit // batch)
assert [e.step for e in steps] == list(range(epochs * per)), [e.step for e in steps]
sizes = [batch] * (per - 1) + [limit - batch * (per - 1)]
for e, loss, acc, test_acc, speed in printed:
    e = int(e)
    values = [s.value for s in steps[(e - 1) * per:e * per]]
    mean = sum(v * n for v, n in zip(values, sizes)) / limit
    assert abs(mean - float(loss)) < 1e-4, (e, mean, loss)
    for tag, want, tol in (("Epoch/Train loss", loss, 5e-5), ("Epoch/Train accuracy", acc, 5e-5),
                           ("Epoch/Test accuracy", test_acc, 5e-5),
                           ("Epoch/Samples per second", speed, 0.5)):
        got = [s for s in ea.Scalars(tag) if s.step == e]
        assert len(got) == 1 and abs(got[0].value - float(want)) <= tol, (tag, e, got, want)
print(f"Train/Loss: {len(steps)} steps; per epoch {len(tags) - 1} tags matching the printout")
