#!/usr/bin/env bash
# Regenerates BENCHMARKS.md: runs clrt-bench's exercises (matmul, transfer,
# launch, logging, multi; --json), the device's limits (clrt-bench peak),
# bench/scaling.sh and bench/compare.sh on this machine,
# saves the raw results in a folder, then renders the file from them
# (bench/benchmarks.py). BENCHMARKS.md is never edited by hand.
#   bench/benchmarks.sh [--out DIR] [--rounds R] [--epochs E] [--matmul-sizes N,N,...]
#   bench/benchmarks.sh --render DIR [--gpu DIR]   only render saved results
# The results behind the committed BENCHMARKS.md are in bench/results/cpu
# (bench/benchmarks.sh --render bench/results/cpu renders it again).
# --gpu DIR: a GPU machine's results (scripts/gpu_report.sh's folder, whose
# report.md becomes a section of its own; or a folder this script saved there).
# --matmul-sizes: clrt-bench matmul's sizes (default its own, 16..4096;
# n = 4096 through CLBlast on PoCL alone takes minutes).
# Takes 15 to 30 minutes with the defaults (3 minutes with --rounds 2
# --epochs 1 --matmul-sizes 16,32,64,128,256,512,1024). Run it alone on
# the machine; on a shared one under flock /tmp/clrt-cpu.lock.
set -euo pipefail
cd "$(dirname "$0")/.."
invocation="bench/benchmarks.sh $*"
out=/tmp/clrt-benchmarks.$$ rounds=3 epochs=2 render= gpu= mm_sizes=
while (($#)); do
  case $1 in
    --out) out=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --render) render=$2; shift 2 ;;
    --gpu) gpu=$2; shift 2 ;;
    --matmul-sizes) mm_sizes=$2; shift 2 ;;
    *) echo "usage: bench/benchmarks.sh [--out DIR] [--rounds R] [--epochs E] [--matmul-sizes N,N,...] | --render DIR [--gpu DIR]" >&2; exit 2 ;;
  esac
done

render_md() {
  python3 bench/benchmarks.py "$1" ${gpu:+--gpu "$gpu"} > BENCHMARKS.md.tmp
  mv BENCHMARKS.md.tmp BENCHMARKS.md
  echo "benchmarks: wrote BENCHMARKS.md from $1" >&2
}
if [[ -n $render ]]; then
  render_md "$render"
  exit 0
fi

[[ -x build/clrt-bench ]] || scripts/setup.sh >&2
mkdir -p "$out"
# Every published figure comes from this one run: results of earlier runs
# (a matmul_forced.json this run does not make, notes on partial runs)
# must not survive beside it.
find "$out" -maxdepth 1 -type f \( -name '*.json' -o -name '*.txt' \) -delete
say() { echo "benchmarks: $*" >&2; }

# The machine, as the renderer prints it. The commit is read before anything
# is written: the results and BENCHMARKS.md are tracked files themselves.
commit="$(git rev-parse --short HEAD)"
git diff --quiet HEAD -- . ':!bench/results' ':!BENCHMARKS.md' || commit+=" (with local changes)"
{
  echo "date $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "invocation $invocation"
  echo "commit $commit"
  echo "cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "cpu_model $(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')"
  echo "cpu_flags $(grep -m1 '^flags' /proc/cpuinfo | grep -o -w -E 'avx2|avx512f' | tr '\n' ' ')"
  echo "cores $(nproc)"
  echo "memory_gib $(awk '/MemTotal/ {printf "%.0f", $2 / 1048576}' /proc/meminfo)"
  echo "os $(. /etc/os-release && echo "$PRETTY_NAME"), Linux $(uname -r)"
  echo "compiler $(cc --version | head -1)"
  for p in pocl-opencl-icd libopenblas0-pthread libclblast1 ocl-icd-libopencl1; do
    echo "package $p $(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || echo -)"
  done
  build/clrt-smi 2>/dev/null | sed 's/^/smi /'
} > "$out/machine.txt"

say "clrt-bench matmul (every device and path, ${mm_sizes:-16..4096: about 10 minutes})"
build/clrt-bench matmul ${mm_sizes:+--sizes "$mm_sizes"} --json > "$out/matmul.json"
# OpenBLAS picks its kernels by CPU model; on a model it does not know it
# falls back to generic ones. Then measure again with the kernels for the
# CPU's instruction set forced, so both figures are on record.
core=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['openblas_core'])" "$out/matmul.json")
forced=
if [[ $core =~ ^(Prescott|Core2|Penryn|Dunnington|Nehalem|Katmai|Banias)$ ]]; then
  grep -q -w avx512f /proc/cpuinfo && forced=SkylakeX
  [[ -z $forced ]] && grep -q -w avx2 /proc/cpuinfo && forced=Haswell
fi
if [[ -n $forced ]]; then
  say "OpenBLAS chose $core kernels; again with OPENBLAS_CORETYPE=$forced (host-blas, up to 1024)"
  OPENBLAS_CORETYPE=$forced build/clrt-bench matmul --device cpu --paths host-blas \
    --sizes 16,32,64,128,256,512,1024 --json > "$out/matmul_forced.json"
fi
say "host-blas with one PoCL worker thread (evidence for the small sizes)"
OPENBLAS_CORETYPE=${forced:-$core} POCL_MAX_PTHREAD_COUNT=1 build/clrt-bench matmul --device cpu \
  --paths host-blas --sizes 16,64,128,256 --json > "$out/matmul_pocl1.json"
say "clrt-bench peak (the CPU device's FMA peak, bandwidth and launch latency: the"
say "denominator of every share of peak in BENCHMARKS.md)"
build/clrt-bench peak --device cpu --json > "$out/peak.json"
say "clrt-bench transfer (two PoCL devices, so that to() crosses devices)"
POCL_DEVICES="pthread pthread" build/clrt-bench transfer --device cpu:0 --json > "$out/transfer.json"
say "clrt-bench launch and logging"
build/clrt-bench launch --device cpu --json > "$out/launch.json"
build/clrt-bench logging --device cpu --json > "$out/logging.json"
# Exercise 4 on PoCL's two CPU devices, which share this host's cores: as
# they come (clrt gives each product one OpenBLAS thread once both devices
# run GEMMs), each product on OpenBLAS's whole pool (set in the environment,
# which clrt leaves as it is), and one PoCL worker thread (which every PoCL
# CPU device shares).
say "clrt-bench multi (exercise 4, two PoCL devices; three thread settings)"
two="pthread pthread"
env -u OPENBLAS_NUM_THREADS POCL_DEVICES="$two" build/clrt-bench multi --json > "$out/multi.json"
POCL_DEVICES=$two OPENBLAS_NUM_THREADS=$(nproc) build/clrt-bench multi --json > "$out/multi_pool.json"
env -u OPENBLAS_NUM_THREADS POCL_DEVICES="$two" POCL_MAX_PTHREAD_COUNT=1 build/clrt-bench multi \
  --json > "$out/multi_1worker.json"
say "bench/scaling.sh ($rounds rounds: one device, two devices, two ranks, two runs at once)"
bench/scaling.sh --rounds "$rounds" --json-out "$out/scaling.json" > "$out/scaling.txt"
say "bench/compare.sh ($rounds rounds of $epochs epochs)"
bench/compare.sh --rounds "$rounds" --epochs "$epochs" --json-out "$out/compare.json" \
  | tee "$out/compare.txt" >&2
render_md "$out"
say "raw results kept in $out"
