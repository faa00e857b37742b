#!/usr/bin/env bash
# Installs the Debian packages named on the command line that are missing:
# as root, or through passwordless sudo; otherwise prints the apt-get line
# to run and fails. Quick when everything is there.
#   scripts/install_packages.sh pkg...
set -euo pipefail

missing=()
for p in "$@"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
((${#missing[@]})) || exit 0

export DEBIAN_FRONTEND=noninteractive
if [[ $(id -u) -eq 0 ]]; then
  echo "setup: installing ${missing[*]}"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  echo "setup: installing ${missing[*]} (sudo)"
  sudo -n apt-get update -qq
  sudo -n DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
else
  echo "setup: these Debian packages are missing: ${missing[*]}" >&2
  echo "setup: run as root:  apt-get install ${missing[*]}" >&2
  exit 1
fi
