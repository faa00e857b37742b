#!/usr/bin/env bash
# The setup stage's first half (scripts/gpu_report.sh setup), on the GPU
# machine: unpacks the packages gather.sh collected into a private prefix
# (never into /), finds NVIDIA's OpenCL library (or the stand-in's) and
# registers it in the prefix's own ICD folder, picks CMake, pkg-config and
# the C compiler, and writes PREFIX/env.sh (the environment every later
# stage sources) and PREFIX/setup.txt (what was found, for the report).
#   scripts/gpu_report/setup.sh DEBS PREFIX [pocl|oclgrind]
# Exits 1, saying why (on stderr and as an "error" line of setup.txt, which
# the report shows), when something the build needs is missing; a failure
# nobody foresaw still leaves an "error" line naming the exit status. Without
# NVIDIA's library it still prepares the build and says so (exit 3). Paths
# may hold spaces (the default prefix is under $TMPDIR): env.sh and the
# wrappers quote them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/packages.sh"
usage="usage: setup.sh DEBS PREFIX [pocl|oclgrind]"
debs=${1:?$usage}
prefix=${2:?$usage}
standin=${3:-}
say() { echo "setup: $*" >&2; }
fail() { say "$*"; echo "error $*" >> "$prefix/setup.txt"; exit 1; }
# An exit other than fail's, 0 and 3 (a command that failed under set -e, a
# variable unset under set -u): setup.txt says so, whatever the cause, with
# the command that failed where bash names it (ERR; set -u's message is on
# stderr only).
failed_at=
unforeseen() {
  local rc=$?
  if ((rc != 0 && rc != 3)) && ! grep -q '^error ' "$prefix/setup.txt" 2>/dev/null; then
    echo "error setup.sh stopped with exit status $rc before it finished${failed_at:+ (at $failed_at)}" \
         "(the end of its log says more)" >> "$prefix/setup.txt" 2>/dev/null || true
  fi
}
trap 'failed_at="line $LINENO: $BASH_COMMAND"' ERR

mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
: > "$prefix/setup.txt"
trap unforeseen EXIT
fact() { echo "$*" >> "$prefix/setup.txt"; }
[[ -d $debs ]] || fail "the packages folder '$debs' does not exist: gather them with" \
  "'scripts/gpu_report.sh gather DIR' on a Debian 12 machine and pass --debs DIR"
debs=$(cd "$debs" && pwd)
root=$prefix/root
multi=$root/usr/lib/x86_64-linux-gnu
rm -rf "$root" "$prefix/lib" "$prefix/bin" "$prefix/vendors" "$prefix/cmake-wheel"
mkdir -p "$root" "$prefix/lib" "$prefix/bin" "$prefix/vendors"

# --- unpack ------------------------------------------------------------------
shopt -s nullglob
packages=("$debs"/*.deb)
((${#packages[@]})) || fail "no .deb files in $debs (run scripts/gpu_report.sh gather there first)"
if [[ -n $standin ]]; then
  extra=("$debs/stand-in/$standin"/*.deb)
  ((${#extra[@]})) || fail "no stand-in packages in $debs/stand-in/$standin (gather --stand-in $standin)"
  packages+=("${extra[@]}")
fi
if ! python3 "$here/undeb.py" "$root" "${packages[@]}" > "$prefix/files.txt" 2> "$prefix/undeb.err"; then
  cat "$prefix/undeb.err" >&2
  fail "could not unpack the packages: $(tail -n 1 "$prefix/undeb.err")"
fi
cat "$prefix/undeb.err" >&2
say "unpacked ${#packages[@]} packages into $root"
cp "$debs/MANIFEST.txt" "$prefix/manifest.txt" ||
  fail "the bundle in $debs has no MANIFEST.txt (scripts/gpu_report/gather.sh writes one)"

# Links that name an absolute path (zlib1g-dev's libz.so) already point into
# the prefix: undeb.py makes them relative links within it.
# pkg-config and CMake package files name /usr: make them name the prefix
# (the prefix escaped for sed's replacement).
root_sed=$(printf '%s' "$root" | sed 's/[\\&#]/\\&/g')
find "$root" -name '*.pc' -exec sed -i -E "s#^([A-Za-z_]+)=/usr#\\1=$root_sed/usr#" {} +
find "$multi" -path '*/cmake/*' -name '*.cmake' \
  -exec sed -i -E "s#([\";])/usr/#\\1$root_sed/usr/#g" {} +

# Run-time libraries: links to the shared objects of the runtime packages
# (and the stand-in's), the only folder of the prefix on LD_LIBRARY_PATH.
runtime_re=$(printf '%s|' "${runtime_packages[@]}")
[[ -n $standin ]] && runtime_re+=$(basename -a "$debs/stand-in/$standin"/*.deb | cut -d_ -f1 |
                                  paste -sd'|')'|'
{ grep -E "^(${runtime_re%|}) " "$prefix/files.txt" || true; } | awk '{print $2}' |
  { grep -E '\.so(\.[0-9]+)*$' || true; } |
  while read -r f; do ln -sfn "$root/$f" "$prefix/lib/$(basename "$f")"; done

# Tools, through wrappers that find their libraries in the prefix. The
# paths are single-quoted for sh (a quote in them as '\'').
shq() { local q="'\\''"; printf "'%s'" "${1//\'/$q}"; }
wrap() { # wrap NAME PROGRAM
  # shellcheck disable=SC2016 # $LD_LIBRARY_PATH is the wrapper's to expand
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %s "$@"\n' \
    "$(shq "$prefix/lib:$multi")" "$(shq "$2")" > "$prefix/bin/$1"
  chmod +x "$prefix/bin/$1"
}
for tool in "$root"/usr/bin/clinfo "$root"/usr/bin/clblast_tuner_*; do wrap "$(basename "$tool")" "$tool"; done
wrap pkg-config "$root/usr/bin/pkgconf"
# Debian's pkgconf looks in /usr's folders by default; the stages give it ours.
pc_path=$multi/pkgconfig:$multi/openblas-pthread/pkgconfig:$root/usr/share/pkgconfig

# --- NVIDIA's OpenCL library (or the stand-in's) -------------------------------
find_nvidia() {
  local lib d
  lib=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so\.1 /{print $NF; exit}')
  if [[ -n $lib && -e $lib ]]; then echo "$lib ldconfig"; return; fi
  local ld_dirs=()
  # LD_LIBRARY_PATH's folders (it may be unset: issue 36), split at colons only.
  IFS=: read -r -a ld_dirs <<< "${LD_LIBRARY_PATH:-}"
  for d in /usr/lib/x86_64-linux-gnu /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib64 \
           /usr/lib /usr/lib/nvidia /usr/lib64/nvidia /usr/lib/x86_64-linux-gnu/nvidia/current \
           /usr/local/cuda/compat /usr/local/cuda/lib64 /usr/lib/wsl/lib \
           ${ld_dirs[@]+"${ld_dirs[@]}"}; do
    [[ -n $d ]] || continue
    if [[ -e $d/libnvidia-opencl.so.1 ]]; then echo "$d/libnvidia-opencl.so.1 folder"; return; fi
  done
  if [[ -r /etc/OpenCL/vendors/nvidia.icd ]]; then
    lib=$(head -n 1 /etc/OpenCL/vendors/nvidia.icd)
    [[ $lib == /* && -e $lib ]] && { echo "$lib /etc/OpenCL/vendors/nvidia.icd"; return; }
  fi
  lib=$(find /usr /opt /lib /lib64 -maxdepth 6 -name 'libnvidia-opencl.so.1' 2>/dev/null | head -n 1)
  [[ -n $lib ]] && echo "$lib search"
  return 0
}
case $standin in
  pocl) opencl="$multi/libpocl.so.2 stand-in" ;;
  oclgrind) opencl="$root/usr/lib/oclgrind/liboclgrind-rt-icd.so stand-in" ;;
  *) opencl=$(find_nvidia) ;;
esac
if [[ -n $opencl ]]; then
  lib=${opencl% *}
  echo "$lib" > "$prefix/vendors/${standin:-nvidia}.icd"
  fact "opencl_library $lib"
  fact "opencl_found_by ${opencl##* }"
  fact "opencl_resolved $(readlink -f "$lib")"
  say "OpenCL library: $lib (found by ${opencl##* }), registered in $prefix/vendors"
else
  fact "opencl_library none"
  say "NVIDIA's OpenCL library (libnvidia-opencl.so.1) is not on this machine: searched"
  say "ldconfig -p, the driver's usual folders, /etc/OpenCL/vendors and /usr, /opt"
fi
[[ -n $standin ]] && fact "stand_in $standin"

# --- the build's tools -----------------------------------------------------------
cc=${CC:-$(command -v cc || command -v gcc || true)}
[[ -n $cc ]] || fail "no C compiler (cc, gcc) on PATH"
printf '#include <stdio.h>\n#include <math.h>\nint main(void) { printf("%%f", sqrt(2.0)); return 0; }\n' \
  > "$prefix/cc-check.c"
"$cc" "$prefix/cc-check.c" -o "$prefix/cc-check" -lm 2>"$prefix/cc-check.log" ||
  fail "the C compiler $cc cannot build a program with <stdio.h> and <math.h>: $(head -3 "$prefix/cc-check.log")"
fact "compiler $("$cc" --version | head -n 1)"

cmake_ok() { # a cmake of version 3.25 or later
  local v
  v=$("$1" --version 2>/dev/null | awk 'NR == 1 {print $3}') || return 1
  [[ -n $v ]] && printf '3.25\n%s\n' "$v" | sort -V -C
}
cmake_bin=
# Candidates, each probed (`|| true`: a missing one is an empty string, which
# the loops below skip); none that works is a failure with its reason.
py_bin=$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))' 2>/dev/null || true)
py_cmake=$(python3 -c 'import cmake, os; print(os.path.join(cmake.CMAKE_BIN_DIR, "cmake"))' \
             2>/dev/null || true)
for c in "$(command -v cmake || true)" "$py_bin/cmake" "$py_cmake"; do
  if [[ -n $c && -x $c ]] && cmake_ok "$c"; then cmake_bin=$c; break; fi
done
wheel=("$debs"/cmake-*.whl)
if [[ -z $cmake_bin && ${#wheel[@]} -gt 0 ]]; then
  python3 -m zipfile -e "${wheel[0]}" "$prefix/cmake-wheel"
  chmod +x "$prefix/cmake-wheel/cmake/data/bin/"*
  cmake_bin=$prefix/cmake-wheel/cmake/data/bin/cmake
fi
[[ -n $cmake_bin ]] || fail "no CMake 3.25 or later here: gather with --with-cmake to carry one"
for t in cmake ctest; do ln -sfn "$(dirname "$cmake_bin")/$t" "$prefix/bin/$t"; done
fact "cmake $cmake_bin ($("$cmake_bin" --version | head -n 1))"

# The build tool: Ninja where there is one (the lent machines' python has
# it), else make, else the carried make.
py_ninja=$(python3 -c 'import ninja, os; print(os.path.join(ninja.BIN_DIR, "ninja"))' 2>/dev/null ||
           true)
generator=()
for n in "$(command -v ninja || true)" "$py_bin/ninja" "$py_ninja"; do
  if [[ -n $n && -x $n ]] && "$n" --version >/dev/null 2>&1; then
    generator=(-G Ninja "-DCMAKE_MAKE_PROGRAM=$n")
    break
  fi
done
if ((${#generator[@]} == 0)); then
  make_bin=$(command -v make || echo "$root/usr/bin/make")
  [[ -x $make_bin ]] || fail "no build tool: neither ninja nor make here, nor make in $debs"
  generator=(-G "Unix Makefiles" "-DCMAKE_MAKE_PROGRAM=$make_bin")
fi
fact "build_tool ${generator[*]}"

# --- the environment of every later stage ------------------------------------------
# Sourced by bash: each path quoted with printf %q, so that spaces survive.
# shellcheck disable=SC2016 # the variables in single quotes are env.sh's to expand
{
  echo "# Written by scripts/gpu_report/setup.sh: the private prefix's environment."
  printf 'export CLRT_GPU_PREFIX=%q\n' "$prefix"
  printf 'export OCL_ICD_VENDORS=%q\n' "$prefix/vendors"
  echo 'unset OCL_ICD_FILENAMES'
  printf 'export LD_LIBRARY_PATH=%q${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\n' "$prefix/lib"
  printf 'export PATH=%q:$PATH\n' "$prefix/bin"
  printf 'export PKG_CONFIG_PATH=%q${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}\n' "$pc_path"
  printf 'export CMAKE_PREFIX_PATH=%q${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}\n' "$root/usr"
  printf 'export CC=%q\n' "$cc"
} > "$prefix/env.sh"
printf '%s\n' "${generator[@]}" > "$prefix/cmake-args"
cat >> "$prefix/cmake-args" <<ARGS
-DOpenCL_INCLUDE_DIR=$root/usr/include
-DOpenCL_LIBRARY=$multi/libOpenCL.so
-DCLBlast_DIR=$multi/cmake/CLBlast
-DZLIB_INCLUDE_DIR=$root/usr/include
-DZLIB_LIBRARY=$multi/libz.so
-DPKG_CONFIG_EXECUTABLE=$prefix/bin/pkg-config
-DCLRT_MPI=OFF
ARGS
say "wrote $prefix/env.sh"
[[ -n $opencl ]] || exit 3
