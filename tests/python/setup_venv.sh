#!/usr/bin/env bash
# Creates (once) the virtual environment the Python checks run in: Debian's
# Python with its python3-torch and numpy visible, plus the PyPI packages of
# tests/python/requirements.txt. Prints the Python to use on stdout.
#   tests/python/setup_venv.sh VENV_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=$1
req=$here/requirements.txt
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock" # tests run in parallel: one creates, the others wait
flock 9
if [[ -x $venv/bin/python ]] && cmp -s "$req" "$venv/requirements.installed"; then
  echo "$venv/bin/python"
  exit 0
fi
rm -rf "$venv"
/usr/bin/python3 -m venv --system-site-packages "$venv" >&2
"$venv/bin/pip" install -q --disable-pip-version-check -r "$req" >&2
cp "$req" "$venv/requirements.installed"
echo "$venv/bin/python"
