#!/usr/bin/env bash
# Creates (once) the Python environment of the tests and benchmarks: a
# virtual environment in .venv (ignored by git) with the PyPI packages
# pinned in scripts/requirements.txt. The set-up of the test command runs
# it, so the suite itself never needs the network. Quick when .venv is
# there and matches the pins. Prints the Python to use on stdout.
#   scripts/setup_python.sh
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$PWD/.venv
req=scripts/requirements.txt
exec 9>"$venv.lock" # parallel callers: one creates, the others wait
flock 9
if [[ -x $venv/bin/python ]] && cmp -s "$req" "$venv/requirements.installed"; then
  echo "$venv/bin/python"
  exit 0
fi
base=/usr/bin/python3 # Debian's, whatever PATH says
if ! "$base" -c "import venv, ensurepip" 2>/dev/null; then
  scripts/install_packages.sh python3-venv >&2
fi
echo "setup_python: installing $(grep -v '^#' "$req" | tr '\n' ' ')into .venv (PyTorch is large: minutes)" >&2
rm -rf "$venv"
"$base" -m venv "$venv" >&2
"$venv/bin/pip" install -q --disable-pip-version-check -r "$req" >&2
"$venv/bin/python" -c "import torch, torchvision, numpy, safetensors, tensorboard" >&2
cp "$req" "$venv/requirements.installed"
echo "$venv/bin/python"
