"""clrt-cnn --plot: the SVG parses as XML, has the four series (train/test
loss and accuracy) with one point per epoch, axes with tick labels and a
legend, and the accuracy points sit where the printed figures put them.
   python check_cnn_plot.py CLRT_CNN WORK_DIR
"""
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

cnn, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
svg_path = os.path.join(work, "curves.svg")
epochs = 3
out = subprocess.run([cnn, "--limit", "1024", "--batch-size", "128", "--epochs", str(epochs),
                      "--device", "cpu", "--plot", svg_path],
                     check=True, capture_output=True, text=True).stdout
printed = re.findall(r"train acc ([0-9.]+) +test acc ([0-9.]+)", out)
assert len(printed) == epochs, out
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(svg_path).getroot()
series = {g.get("data-name"): g for g in root.iter("{http://www.w3.org/2000/svg}g")
          if g.get("class") == "series"}
assert set(series) == {"train loss", "test loss", "train acc", "test acc"}, set(series)
texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
for want in ("loss", "accuracy", "epoch", "1", "2", "3", "0.2", "train acc"):
    assert want in texts, (want, texts)
top, bottom = 30.0, 300.0 - 45.0  # the plot area of a panel (plot.c: T, H - B)
for name, column in (("train acc", 0), ("test acc", 1)):
    pts = series[name].find("s:polyline", ns).get("points").split()
    assert len(pts) == epochs, (name, pts)
    xs = [float(p.split(",")[0]) for p in pts]
    assert xs == sorted(xs) and len(set(xs)) == epochs, xs
    for p, row in zip(pts, printed):
        y = float(p.split(",")[1])
        value = 1 - (y - top) / (bottom - top)
        assert abs(value - float(row[column])) < 2e-3, (name, value, row)
for name in ("train loss", "test loss"):
    assert len(series[name].find("s:polyline", ns).get("points").split()) == epochs
print(f"{svg_path}: 4 series x {epochs} epochs, accuracy points match the printout")

# --batch-sweep --plot: one bar per batch size, its value the printed speed.
bars_path = os.path.join(work, "bars.svg")
out = subprocess.run([cnn, "--limit", "512", "--batch-sweep", "64,128", "--device", "cpu",
                      "--plot", bars_path], check=True, capture_output=True, text=True).stdout
speeds = re.findall(r"^(\d+) +[0-9.]+ +([0-9]+) ", out, re.M)
assert len(speeds) == 2, out
bars = [r for r in ET.parse(bars_path).getroot().iter("{http://www.w3.org/2000/svg}rect")
        if r.get("class") == "bar"]
assert [b.get("data-label") for b in bars] == ["batch 64", "batch 128"], bars
for b, (batch, speed) in zip(bars, speeds):
    assert abs(float(b.get("data-value")) - float(speed)) <= 0.5, (b.attrib, speed)
    assert float(b.get("height")) > 0
print(f"{bars_path}: {len(bars)} bars matching the printed samples/s")
