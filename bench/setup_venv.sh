#!/usr/bin/env bash
# Sets up the Python that bench/ compares clrt with: a virtual environment
# in bench/.venv (ignored by git) with PyTorch and numpy from PyPI at the
# versions pinned in bench/requirements.txt. Only when pip cannot install
# them does it fall back to Debian's python3-torch, and says so.
# Prints the Python to use on stdout; everything else goes to stderr.
#   bench/setup_venv.sh            (quick once the venv is there)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=bench/.venv
req=bench/requirements.txt
say() { echo "setup_venv: $*" >&2; }

has_torch() { "$1" -c "import torch, numpy" 2>/dev/null; }

if [[ -x $venv/bin/python ]] && has_torch "$venv/bin/python" &&
   cmp -s "$req" "$venv/requirements.installed"; then
  echo "$PWD/$venv/bin/python"
  exit 0
fi

base=python3
[[ -x /usr/bin/python3 ]] && base=/usr/bin/python3  # Debian's, whatever PATH says
if ! "$base" -c "import venv, ensurepip" 2>/dev/null; then
  scripts/install_packages.sh python3-venv >&2
fi
say "installing $(grep -v '^#' "$req" | tr '\n' ' ')into $venv (PyTorch is large: minutes)"
if "$base" -m venv "$venv" >&2 && "$venv/bin/pip" install -q -r "$req" >&2 &&
   has_torch "$venv/bin/python"; then
  cp "$req" "$venv/requirements.installed"
  echo "$PWD/$venv/bin/python"
  exit 0
fi

say "pip could not install PyTorch; falling back to Debian's python3-torch (an older"
say "release, without the oneDNN build PyPI ships: the comparison is weaker)"
scripts/install_packages.sh python3-torch python3-numpy >&2
if has_torch /usr/bin/python3; then
  echo /usr/bin/python3
  exit 0
fi
say "no PyTorch available"
exit 1
