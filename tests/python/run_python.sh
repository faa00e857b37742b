#!/bin/sh
# Runs a Python check with the project's Python environment, or says how to
# make it: the test command's set-up does (scripts/setup_python.sh), and
# the suite never installs anything itself.
#   run_python.sh PYTHON SCRIPT ARGS...
py=$1
shift
if [ ! -x "$py" ]; then
  echo "no Python environment at $py: run scripts/setup_python.sh (scripts/test.sh does)" >&2
  exit 1
fi
exec "$py" "$@"
