#!/usr/bin/env bash
# Tunes CLBlast's two SGEMM kernels (Xgemm, XgemmDirect) for one OpenCL
# device with CLBlast's own tuners (Debian's clblast-utils), then times SGEMM
# through clrt with CLBlast's parameters against the tuned ones
# (clrt-bench clblast). The tuners write clblast_*.json files into
# build/clblast-tuning; pass their best_parameters to clrt_clblast_override
# to use them (README: On GPU hosts).
#   scripts/clblast_tune.sh PLATFORM DEVICE SPEC [SIZE] [FRACTION]
# PLATFORM and DEVICE are OpenCL indices as the tuners count them (clinfo
# -l lists them), SPEC the same device as clrt names it (clrt-smi); SIZE is
# the tuned product's m = n = k (default 256); FRACTION is the tuners'
# -fraction, which DIVIDES their random search spaces (1000: a thousandth of
# Xgemm's 120800 random settings; below 1 it multiplies them). Each tuner
# also tries a fixed set (578 settings for Xgemm: minutes on PoCL). On PoCL
# here: 0 0 cpu.
# Wrap it in the CPU lock on a shared machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
platform=${1:?usage: scripts/clblast_tune.sh PLATFORM DEVICE SPEC [SIZE] [FRACTION]}
device=${2:?usage: scripts/clblast_tune.sh PLATFORM DEVICE SPEC [SIZE] [FRACTION]}
spec=${3:?usage: scripts/clblast_tune.sh PLATFORM DEVICE SPEC [SIZE] [FRACTION]}
size=${4:-256}
fraction=${5:-1000}
# The tuners: on PATH already (scripts/gpu_report.sh carries them), else Debian's.
command -v clblast_tuner_xgemm >/dev/null || "$root/scripts/install_packages.sh" clblast-utils
[[ -x $root/build/clrt-bench ]] || "$root/scripts/setup.sh"
out=$root/build/clblast-tuning
mkdir -p "$out"
cd "$out"
rm -f clblast_xgemm_*_32.json
args=(-platform "$platform" -device "$device" -precision 32 -m "$size" -n "$size" -k "$size"
      -fraction "$fraction" -runs 2)
clblast_tuner_xgemm "${args[@]}" >xgemm.log
clblast_tuner_xgemm_direct "${args[@]}" >xgemm_direct.log

# The fastest of a tuner's phases (each writes its own file).
fastest() {
  for f in "$@"; do
    printf '%s %s\n' "$(sed -n 's/.*"best_time": "\([^"]*\)".*/\1/p' "$f")" "$f"
  done | sort -g | head -n 1 | cut -d' ' -f2
}
xgemm=$(fastest clblast_xgemm_[0-9]*_32.json)
direct=$(fastest clblast_xgemm_direct_*_32.json)
for f in "$xgemm" "$direct"; do
  echo "$f: $(sed -n 's/.*"best_parameters": "\([^"]*\)".*/\1/p' "$f")"
done
"$root/build/clrt-bench" clblast --device "$spec" --tuned "$out/$xgemm" --tuned "$out/$direct" \
  --sizes 64,128,256,512,1024
