#!/usr/bin/env bash
# A GPU report in one command, for a machine with NVIDIA's driver and a
# CUDA build of PyTorch but no package registry and no OpenCL loader
# (README: "A GPU report in one command").
#
# Here, on Debian 12 with apt (carry DIR and the checkout there, under 64 MiB):
#   scripts/gpu_report.sh gather [DIR] [--with-cmake] [--no-data] [--stand-in pocl|oclgrind]
# There, from the checkout's root:
#   scripts/gpu_report.sh [options] STAGE...
#     setup   unpack DIR into a private prefix, register NVIDIA's OpenCL library
#             in the prefix's own ICD folder, build clrt into build/
#     smi     clrt-smi (table and JSON) and clinfo -l
#     tests   the whole test suite on the device at full size (CLRT_TEST_DEVICE)
#     peak    clrt-bench peak: FMA peak, memory bandwidth, launch latency
#     bench   clrt-bench matmul (GEMM vs the host's OpenBLAS), transfer, launch, logging
#     tune    clrt-smi --tune: CLBlast's tuners on the device, the best
#             parameters stored for clrt, then SGEMM tuned vs CLBlast's own
#     train   LeNet and the seed CNN (and SGEMM, a small op, exercise 3) in clrt
#             and in PyTorch on CUDA (FP32, TF32 off), alternating rounds
#     resnet  ResNet-18 the same way, when clrt-cnn has --model resnet18
#     report  write the report again (every stage ends by writing it)
#     all     setup smi tests peak bench tune train resnet
#   Each stage finishes within --stage-seconds (default 570): what runs
#   longer is stopped and the stage marked "timed out". A stage after a
#   fresh start (a machine given back and lent again) runs setup first.
# Options:
#   --debs DIR        the gathered packages (default .gpu-debs)
#   --out DIR         the results: report.md, report.json, logs.tar.gz
#                     (default bench/results/gpu-report); the stages' state
#                     lives there too, so it can travel with the checkout
#   --prefix DIR      the private prefix (default $TMPDIR or /tmp, /clrt-gpu-prefix)
#   --device SPEC     clrt's device (default gpu:0; a PoCL stand-in: cpu)
#   --stand-in NAME   pocl or oclgrind instead of NVIDIA's library, and
#                     PyTorch on the CPU instead of CUDA: for testing this
#                     script where there is no GPU
#   --stage-seconds S the time limit of each stage
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
here=$root/scripts/gpu_report
cd "$root"
if [[ ${1:-} == gather ]]; then
  shift
  exec "$here/gather.sh" "$@"
fi

debs=.gpu-debs out=bench/results/gpu-report prefix=${TMPDIR:-/tmp}/clrt-gpu-prefix
standin= device= stage_s=570 stages=()
while (($#)); do
  case $1 in
    --debs) debs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --prefix) prefix=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    --stand-in) standin=$2; shift 2 ;;
    --stage-seconds) stage_s=$2; shift 2 ;;
    setup|smi|tests|peak|bench|tune|train|resnet|report) stages+=("$1"); shift ;;
    all) stages+=(setup smi tests peak bench tune train resnet); shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu_report: unknown argument '$1' (--help lists the stages)" >&2; exit 2 ;;
  esac
done
case $standin in ''|pocl|oclgrind) ;; *) echo "gpu_report: --stand-in pocl or oclgrind" >&2; exit 2 ;; esac
((${#stages[@]})) || { echo "gpu_report: name a stage, or all (--help)" >&2; exit 2; }
[[ -n $device ]] || device=$([[ $standin == pocl ]] && echo cpu || echo gpu:0)
torch_device=$([[ -n $standin ]] && echo cpu || echo cuda)
mkdir -p "$out" "$prefix"
out=$(cd "$out" && pwd)
prefix=$(cd "$prefix" && pwd)
work=$prefix/work
say() { echo "gpu_report: $*" >&2; }

# The stages' state (logs, raw results) comes back from the results folder
# when this machine has not seen it (a fresh machine, the checkout carried).
if [[ ! -d $work/raw && -f $out/logs.tar.gz ]]; then
  mkdir -p "$work"
  tar -xzf "$out/logs.tar.gz" -C "$work"
fi
mkdir -p "$work/logs" "$work/raw"
source "$here/stages.sh"

# Runs stage $1 within the time limit; its log goes to logs/$1.log.
run_stage() {
  local s=$1 start rc
  start=$(date +%s)
  deadline=$((start + stage_s))
  say "stage $s (at most ${stage_s} s; log: $work/logs/$s.log)"
  set +e
  (set -e; "stage_$s") > >(tee "$work/logs/$s.log" >&2) 2>&1
  rc=$?
  set -e
  sleep 0.2 # let tee finish
  local status=ok reason=
  ((rc == 124)) && status="timed out"
  ((rc != 0 && rc != 124)) && status="failed (exit $rc)"
  # Why, for the report: the last line the stage printed.
  ((rc != 0)) && reason=$(grep -v '^[[:space:]]*$' "$work/logs/$s.log" | tail -n 1 | cut -c1-300)
  printf 'status %s\nseconds %s\nfinished %s\n' "$status" "$(($(date +%s) - start))" \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$work/raw/stage-$s.txt"
  [[ -z $reason ]] || printf 'reason %s\n' "$reason" >> "$work/raw/stage-$s.txt"
  say "stage $s: $status in $(($(date +%s) - start)) s"
  write_report
  return 0
}

write_report() {
  python3 "$here/report.py" --work "$work" --out "$out" --repo "$root" ||
    say "could not write the report (python3 $here/report.py)"
  tar -czf "$out/logs.tar.gz" -C "$work" logs raw
}

for s in "${stages[@]}"; do
  if [[ $s == report ]]; then
    write_report
    continue
  fi
  if [[ $s != setup ]] && ! setup_done; then
    say "setup has not run on this machine: running it first"
    run_stage setup
  fi
  if [[ $s != setup ]] && ! setup_done; then
    say "setup failed (see the report): stage $s not run"
    exit 1
  fi
  run_stage "$s"
done
say "results in $out: $(cd "$out" && ls | tr '\n' ' ')"
