#!/usr/bin/env bash
# Every kernel clrt's GPU path builds, built for NVIDIA's GPUs, without one:
#  1. runs clrt on PoCL posing as an NVIDIA H100 and H200
#     (tests/nvptx/gpu_pose.c: an OpenCL layer giving NVIDIA's device
#     queries) with CLRT_PROGRAM_LOG set: the shipped models' training and
#     evaluation steps (tests/nvptx/gpu_path.c) with every candidate algorithm measured,
#     clrt-bench peak, then the kernel suites at small size (those in CI's
#     Oclgrind pass, test_conv's every-algorithm sweep included); the log
#     names every program,
#     option set and work-group shape the GPU path built and launched;
#  2. compiles each program with clang-15's nvptx64 target against libclc's
#     nvptx64--nvidiacl builtins (one PTX for sm_70 and up), assembles it
#     with ptxas for sm_70, sm_80 and sm_90, and checks every kernel: no
#     build error, no spill, every launched work-group within what its
#     registers allow, local memory within 48 KiB (scripts/nvptx_check.py);
#  3. writes the table, one file per architecture, to bench/results/nvptx/
#     (sm_XX.tsv, summary.json) and renders it into BENCHMARKS.md.
# Exit status 0 only when every kernel passes (and, with --strict, the
# default under CI, when the saved table listed exactly the programs,
# kernels and launch sizes built now: commit the table this script wrote).
#
#   scripts/nvptx.sh [--out DIR] [--archs sm_70,sm_80,sm_90] [--cards h100,h200]
#                    [--strict] [--no-render] [--jobs N]
#   scripts/nvptx.sh --log FILE [--log FILE...] --out DIR [--kernel-dir DIR] ...
#       check the programs of given logs instead of running clrt (the
#       fixtures in tests/nvptx/fixtures do), families read from DIR
#
# Tools: clang-15 and libclc-15 (installed when missing), ptxas from the
# CUDA toolkit ($PTXAS, else $CUDA_PATH/bin/ptxas, else /usr/local/cuda):
# without it the script says so and fails. CUDA 13 dropped Volta: for an
# architecture its ptxas does not know (sm_70) the script uses ptxas from
# NVIDIA's CUDA 12.9 compiler package on PyPI (nvidia-cuda-nvcc-cu12,
# installed once into ~/.cache/clrt-tools). About 3 minutes on 2 cores; run it
# under flock /tmp/clrt-cpu.lock on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

out= archs=sm_70,sm_80,sm_90 cards=h100,h200 render=1 jobs=2
strict=${CI:+1} kernel_dir=$root/clkernels logs=()
usage() {
  sed -n '/^#   scripts\/nvptx.sh/,/^#       fixtures in/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
while (($#)); do
  case $1 in
    --out) out=$2; shift 2 ;;
    --archs) archs=$2; shift 2 ;;
    --cards) cards=$2; shift 2 ;;
    --strict) strict=1; shift ;;
    --no-render) render=; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    --log) logs+=("$(realpath "$2")"); shift 2 ;;
    --kernel-dir) kernel_dir=$(realpath "$2"); shift 2 ;;
    *) usage ;;
  esac
done
say() { echo "nvptx: $*" >&2; }
if [[ -z $out ]]; then
  ((${#logs[@]} == 0)) || { say "--log needs --out: the saved table is the runs' own"; exit 2; }
  out=bench/results/nvptx
fi
start=$(date +%s)
work=$(mktemp -d /tmp/clrt-nvptx.XXXXXX)
trap 'rm -rf "$work"' EXIT

# --- tools ---------------------------------------------------------------
scripts/install_packages.sh clang-15 libclc-15
clang=$(command -v clang-15)
libclc=/usr/lib/clc/nvptx64--nvidiacl.bc
[[ -f $libclc ]] || { say "libclc-15 installed no $libclc"; exit 1; }
ptxas=${PTXAS:-${CUDA_PATH:-/usr/local/cuda}/bin/ptxas}
if [[ ! -x $ptxas ]]; then
  say "no ptxas at $ptxas: the CUDA toolkit is missing (install it in /usr/local/cuda," \
    "or set CUDA_PATH or PTXAS); no kernel was checked"
  exit 1
fi

# ptxas from NVIDIA's CUDA 12.9 compiler wheel, for the architectures
# CUDA 13 dropped; installed once with the project's Python environment.
cuda12_version=12.9.86
cuda12_ptxas() {
  local dir=${XDG_CACHE_HOME:-$HOME/.cache}/clrt-tools/cuda-nvcc-$cuda12_version
  if [[ ! -x $dir/nvidia/cuda_nvcc/bin/ptxas ]]; then
    say "installing ptxas $cuda12_version (PyPI nvidia-cuda-nvcc-cu12) into $dir" \
      "for the architectures CUDA 13 dropped"
    "$(scripts/setup_python.sh)" -m pip install -q --disable-pip-version-check --no-deps \
      --target "$dir" "nvidia-cuda-nvcc-cu12==$cuda12_version" >&2
  fi
  echo "$dir/nvidia/cuda_nvcc/bin/ptxas"
}
knows_arch() { [[ $("$1" --help 2>/dev/null) == *"'$2'"* ]]; }
arch_args=() tool_notes=("clang=$("$clang" --version | head -1)" "libclc=$(dpkg-query -W -f='${Version}' libclc-15)")
for arch in ${archs//,/ }; do
  p=$ptxas
  knows_arch "$p" "$arch" || p=$(cuda12_ptxas)
  knows_arch "$p" "$arch" || { say "no ptxas here knows $arch"; exit 1; }
  arch_args+=(--arch "$arch=$p")
  tool_notes+=("ptxas_$arch=$("$p" --version | grep -o 'release.*')")
done

# --- 1. what the GPU path builds ---------------------------------------
# The kernel suites that run kernels (as in CI's Oclgrind pass), each
# process logging on its own.
suites=(test_tensor test_elementwise test_elementwise_unary test_elementwise_cast test_reduce
  test_gemm test_shape_ops test_conv test_pool test_pool_padded test_pool_adaptive test_dropout
  test_loss test_optim test_nn test_nn_lenet test_batchnorm test_residual test_gradcheck
  test_nn_ops test_embedding_layernorm test_transformer test_onnx_ops test_onnx)
run_logged() { # NAME CMD...: one run on the posed card, logging builds to NAME.log
  local name=$1
  shift
  if ! CLRT_PROGRAM_LOG=$work/logs/$name.log "$@" >"$work/runs/$name.out" 2>&1; then
    say "FAIL the run $name failed on the posed GPU (the GPU path itself broke):"
    tail -20 "$work/runs/$name.out" >&2
    return 1
  fi
}
pose() { # CARD: the environment that makes PoCL's device that card
  export OCL_ICD_VENDORS=$root/build/tests/nvptx/vendors-pocl
  export OPENCL_LAYERS=$root/build/tests/nvptx/libclrt_gpu_pose.so
  export CLRT_POSE_GPU=$1 POCL_DEVICES=pthread POCL_MAX_WORK_GROUP_SIZE=1024
}
posed_model() { # CARD: the model name clrt sees
  (pose "$1" && build/clrt-smi --json) |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["devices"][0]["model"])'
}
collect() { # CARD (in a subshell: it changes the environment)
  local b=$root/build/tests
  unset "${!CLRT_@}" # the defaults, whatever the caller set
  pose "$1"
  export CLRT_CACHE_DIR=$work/cache-$1 CLRT_KERNEL_WERROR=1 CLRT_POISON=1
  # Every pass measured (CLRT_CONV_MEASURE_MACS=1, with time for all of
  # them: CLRT_MEASURE_SECONDS) builds every candidate
  # algorithm of every layer: the GPU's own kernels, then the CPU-style
  # ones (the direct convolutions, row pooling) a GPU runs when told to
  # (CLRT_KERNEL_STYLE=cpu). A forced CLRT_CONV_ALGO fails where its
  # algorithm does not apply, so it cannot walk a whole model.
  run_logged "$1-models" "$b/nvptx/gpu_path" gpu:0
  CLRT_CONV_MEASURE_MACS=1 CLRT_MEASURE_SECONDS=86400 \
    run_logged "$1-models-measured" "$b/nvptx/gpu_path" gpu:0
  CLRT_CONV_MEASURE_MACS=1 CLRT_MEASURE_SECONDS=86400 CLRT_KERNEL_STYLE=cpu \
    run_logged "$1-models-cpu-style" "$b/nvptx/gpu_path" gpu:0
  run_logged "$1-peak" "$root/build/clrt-bench" peak --device gpu:0 --kib 256 --items 4096 \
    --launches 10 --repeats 1 --min-ms 1
  for s in "${suites[@]}"; do
    CLRT_TEST_DEVICE=gpu:0 CLRT_TEST_SIZE=small CLRT_TEST_SEED=1 CK_EXCLUDE_TAGS=may_skip \
      run_logged "$1-$s" "$b/$s"
  done
}
device_args=() families=()
for card in ${cards//,/ }; do
  [[ $card == h100 || $card == h200 ]] || { say "unknown card '$card' (h100, h200)"; exit 2; }
done
if ((${#logs[@]} == 0)); then
  [[ -f build/CMakeCache.txt ]] || scripts/setup.sh >&2
  cmake --build build -j"$jobs" --target clrt_gpu_pose gpu_path clrt-bench clrt-smi \
    "${suites[@]}" >/dev/null
  mkdir -p "$work/logs" "$work/runs"
  for card in ${cards//,/ }; do
    say "running the models, clrt-bench peak and the kernel suites on PoCL posing as $card"
    t=$(date +%s)
    (collect "$card")
    say "$card: $(($(date +%s) - t)) s"
    device_args+=(--device "$(posed_model "$card")")
  done
  logs=("$work"/logs/*.log)
  families=(--all-families)
  tool_notes+=("cards=$cards")
fi
say "${#logs[@]} logs after $(($(date +%s) - start)) s; building their programs for ${archs}"

# --- 2. and 3. build, check, save ----------------------------------------
mkdir -p "$out"
rc=0
python3 scripts/nvptx_check.py "${logs[@]}" --out "$out" --kernel-dir "$kernel_dir" \
  --common "$root/clkernels/common.cl" --clang "$clang" --libclc "$libclc" --jobs "$jobs" \
  "${arch_args[@]}" "${device_args[@]}" "${families[@]}" ${strict:+--strict} \
  "${tool_notes[@]/#/--tools-note=}" || rc=$?
if [[ -n $render && $out == bench/results/nvptx ]]; then
  bench/benchmarks.sh --render bench/results/cpu
fi
say "$( ((rc == 0)) && echo "every kernel passes" || echo "FAILED") ($(($(date +%s) - start)) s);" \
  "the table: $out"
exit "$rc"
