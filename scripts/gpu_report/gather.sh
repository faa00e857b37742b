#!/usr/bin/env bash
# The gather stage of scripts/gpu_report.sh, run on a Debian 12 machine with
# apt: downloads into DIR the packages (packages.sh) that clrt needs to be
# built, tested and measured on a GPU machine with NVIDIA's driver but no
# package registry and no OpenCL loader. Carry DIR there; nothing here is
# installed.
#   scripts/gpu_report.sh gather [DIR] [--with-cmake] [--no-data] [--stand-in pocl|oclgrind]
# DIR: default .gpu-debs (ignored by git). --with-cmake: also CMake, as
# PyPI's self-contained cmake wheel (28 MB; for a host without CMake 3.25;
# then the Fashion-MNIST package is left out to stay under 64 MiB).
# --no-data: leave out Fashion-MNIST (30 MB). --stand-in NAME: also PoCL's
# or Oclgrind's packages and the libraries they need, into DIR/stand-in/NAME,
# for testing the script where there is no GPU (never needed on one).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$here/packages.sh"
dir=.gpu-debs with_cmake=0 data=1 standin=
while (($#)); do
  case $1 in
    --with-cmake) with_cmake=1; shift ;;
    --no-data) data=0; shift ;;
    --stand-in) standin=${2:?--stand-in needs pocl or oclgrind}; shift 2 ;;
    -*) echo "gather: unknown option $1" >&2; exit 2 ;;
    *) dir=$1; shift ;;
  esac
done
case $standin in ''|pocl|oclgrind) ;; *) echo "gather: --stand-in pocl or oclgrind" >&2; exit 2 ;; esac
say() { echo "gather: $*" >&2; }
command -v apt-get >/dev/null || { say "needs apt-get (a Debian 12 machine)"; exit 1; }
((with_cmake)) && data=0

# The packages "$@" need, recursively (Depends, Pre-Depends), as names.
closure() {
  apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances "$@" 2>/dev/null | grep -v '^[ <]' | sort -u
}

# Downloads packages "$@" into the current folder; fails naming any missing.
download() {
  local p failed=()
  for p in "$@"; do
    apt-get download -qq -o APT::Sandbox::User=root "$p" >/dev/null 2>&1 || failed+=("$p")
  done
  ((${#failed[@]} == 0)) || { say "could not download: ${failed[*]}"; return 1; }
}

# A stand-in's packages: its named packages and what they need beyond the
# baseline host (a C compiler, python3), without the skipped ones.
standin_set() {
  local -n names=standin_$1 skip=standin_$1_skip
  local direct
  direct=$(apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks \
             --no-replaces --no-enhances "${names[@]}" 2>/dev/null |
           awk '/^ *(Pre)?Depends: [^<]/ {print $2}' | sort -u)
  for s in "${names[@]}" "${skip[@]}"; do direct=$(grep -v -x -F "$s" <<<"$direct" || true); done
  comm -23 <({ printf '%s\n' "${names[@]}"; closure $direct; } | sort -u) \
           <(closure "${baseline_packages[@]}")
}

apt-get update -qq >/dev/null 2>&1 || say "apt-get update failed; using the package lists as they are"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
rm -f "$dir"/*.deb "$dir"/*.whl "$dir/MANIFEST.txt"
pkgs=("${runtime_packages[@]}" "${build_packages[@]}" "${tool_packages[@]}")
((data)) && pkgs+=("${data_packages[@]}")
say "downloading ${#pkgs[@]} packages into $dir"
(cd "$dir" && download "${pkgs[@]}")
if ((with_cmake)); then
  say "downloading CMake (PyPI's cmake wheel, self-contained)"
  python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
    --implementation py --python-version 3 'cmake>=3.25,<4' -d "$dir" >&2
fi
if [[ -n $standin ]]; then
  rm -rf "$dir/stand-in/$standin"
  mkdir -p "$dir/stand-in/$standin"
  mapfile -t extra < <(standin_set "$standin")
  say "downloading the $standin stand-in: ${#extra[@]} packages into $dir/stand-in/$standin"
  (cd "$dir/stand-in/$standin" && download "${extra[@]}")
fi

# What was gathered, for the report (setup.sh copies it into the prefix).
for f in "$dir"/*.deb; do
  printf '%s %s %s\n' "$(dpkg-deb -f "$f" Package)" "$(dpkg-deb -f "$f" Version)" \
    "$(stat -c %s "$f")"
done > "$dir/MANIFEST.txt"
for f in "$dir"/*.whl; do
  if [[ -e $f ]]; then printf '%s wheel %s\n' "$(basename "$f")" "$(stat -c %s "$f")"; fi
done >> "$dir/MANIFEST.txt"

# The checkout's commit, for a machine the checkout reaches without .git.
if git -C "$root" rev-parse --short HEAD >/dev/null 2>&1; then
  changes=
  git -C "$root" diff --quiet HEAD -- . ':!bench/results' || changes=" (with local changes)"
  echo "$(git -C "$root" rev-parse --short HEAD)$changes" > "$dir/COMMIT.txt"
fi

carried=$(find "$dir" -maxdepth 1 -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
tree=$(cd "$root" && git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
mib() { awk -v b="$1" 'BEGIN {printf "%.1f MiB", b / 1048576}'; }
say "$(wc -l < "$dir/MANIFEST.txt") files, $(mib "$carried") (stand-in folder not counted);" \
    "with the checkout's tracked files ($(mib "$tree")): $(mib $((carried + tree)))"
if ((carried + tree > 64 * 1048576)); then
  say "over 64 MiB: leave out the data (--no-data) or CMake"
  exit 1
fi
