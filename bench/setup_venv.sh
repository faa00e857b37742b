#!/usr/bin/env bash
# The Python bench/ compares clrt with: the project's environment
# (scripts/setup_python.sh: PyTorch and numpy pinned in
# scripts/requirements.txt), made on first use. Prints the Python to use.
exec "$(dirname "$0")/../scripts/setup_python.sh"
