# The stages of scripts/gpu_report.sh (sourced by it; see its header). Each
# stage_NAME runs in a subshell with set -e, its output going to
# logs/NAME.log; what it measures goes to raw/, which report.py reads.
# From gpu_report.sh: root here debs prefix work device torch_device
# standin deadline (the stage's end, in seconds since the epoch).

# Runs the program "$@", stopped when the stage's time is up (then exit 124).
bounded() {
  local left=$((deadline - $(date +%s)))
  if ((left <= 5)); then
    echo "gpu_report: no time left in this stage for: $*"
    return 124
  fi
  timeout -k 10 "$left" "$@"
}
time_left() { echo $((deadline - $(date +%s))); }

setup_done() { [[ -f $prefix/setup.done && -f $prefix/env.sh && -x $root/build/clrt-smi ]]; }
use_prefix() { source "$prefix/env.sh"; }

machine_facts() {
  echo "date $(date -u +%Y-%m-%dT%H:%MZ)"
  if command -v git >/dev/null && git -C "$root" rev-parse --short HEAD >/dev/null 2>&1; then
    local changes=
    git -C "$root" diff --quiet HEAD -- . ':!bench/results' || changes=" (with local changes)"
    echo "commit $(git -C "$root" rev-parse --short HEAD)$changes"
  elif [[ -f $debs/COMMIT.txt ]]; then
    echo "commit $(cat "$debs/COMMIT.txt") (when the packages were gathered)"
  fi
  echo "cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "cpu_flags $(grep -m1 '^flags' /proc/cpuinfo | grep -o -w -E 'avx2|avx512f' | tr '\n' ' ')"
  echo "cores $(nproc)"
  echo "memory_gib $(awk '/MemTotal/ {printf "%.0f", $2 / 1048576}' /proc/meminfo)"
  echo "os $( (. /etc/os-release && echo "$PRETTY_NAME") 2>/dev/null || echo '?'), Linux $(uname -r)"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
      --format=csv,noheader 2>&1 | sed 's/^/gpu /'
  fi
  echo "python $(python3 -c 'import sys; print(sys.executable, sys.version.split()[0])' 2>&1)"
  echo "torch $(python3 -c 'import torch as t; c = t.cuda.is_available()
print(t.__version__, "CUDA", t.version.cuda, "|", t.cuda.get_device_name(0) if c else "no CUDA device")' \
    2>&1 | tail -n 1)"
  echo "stand_in ${standin:-none}"
  echo "device $device"
  echo "torch_device $torch_device"
}

stage_setup() {
  rm -f "$prefix/setup.done"
  local rc=0
  bash "$here/setup.sh" "$debs" "$prefix" $standin || rc=$?
  # Kept for the report whatever setup's status (which decides below); a
  # setup that stopped early may not have written them.
  cp "$prefix/setup.txt" "$work/raw/setup.txt" 2>/dev/null || true
  cp "$prefix/manifest.txt" "$work/raw/manifest.txt" 2>/dev/null || true
  ((rc == 0 || rc == 3)) || return "$rc"
  machine_facts > "$work/raw/machine.txt"
  use_prefix
  local t0=$SECONDS
  local args
  mapfile -t args < "$prefix/cmake-args" # one option per line
  # A build folder made with another generator is made again.
  if [[ -f $root/build/CMakeCache.txt ]] &&
     ! grep -q -x -F "CMAKE_GENERATOR:INTERNAL=${args[1]}" "$root/build/CMakeCache.txt"; then
    rm -rf "$root/build"
  fi
  bounded cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${args[@]}"
  bounded cmake --build "$root/build" -j"$(nproc)"
  echo "build_seconds $((SECONDS - t0))" >> "$work/raw/setup.txt"
  touch "$prefix/setup.done"
  if ((rc == 3)); then
    echo "gpu_report: built, but no OpenCL library is registered: later stages will find no device"
    return 3
  fi
}

stage_smi() {
  use_prefix
  local rc=0
  bounded "$root/build/clrt-smi" --json > "$work/raw/smi.json" || rc=$?
  bounded "$root/build/clrt-smi" | tee "$work/raw/smi.txt" || true
  bounded clinfo -l > "$work/raw/clinfo.txt" 2>&1 || true
  bounded clinfo > "$work/logs/clinfo-full.txt" 2>&1 || true
  cat "$work/raw/clinfo.txt"
  return "$rc"
}

# The Fashion-MNIST files: Debian's folder, else the carried package's.
fashion_dir() {
  local d
  for d in /usr/share/datasets/fashion-mnist "$prefix/root/usr/share/datasets/fashion-mnist"; do
    if [[ -e $d/train-images-idx3-ubyte.gz ]]; then
      echo "$d"
      return
    fi
  done
}

# Runs "$@" where the test suite finds Fashion-MNIST at Debian's path: as it
# is when the path exists (or nothing better can be done), else in a private
# mount namespace whose /usr/share has the prefix's laid over it (the
# machine's own / is left alone).
with_test_data() {
  local carried=$prefix/root/usr/share
  if [[ -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ||
        ! -d $carried/datasets/fashion-mnist || ${overlay_ok:-1} == 0 ]]; then
    "$@"
    return
  fi
  # shellcheck disable=SC2016 # expanded by the inner shell
  unshare --mount --propagation private sh -c \
    'mount -t overlay overlay -o "lowerdir=$0:/usr/share" /usr/share && exec "$@"' "$carried" "$@"
}

stage_tests() {
  use_prefix
  local ndev venv_python=0 system_loader=0 data rc=0 jobs
  ndev=$(POCL_DEVICES="pthread pthread" "$root/build/clrt-smi" --json 2>/dev/null |
           python3 -c 'import json, sys; print(len(json.load(sys.stdin)["devices"]))' || echo 0)
  # The Python checks run .venv/bin/python (tests/python/run_python.sh);
  # with no registry to fill it, it runs this machine's python3 when that
  # has the packages (a wrapper: python3 may itself be a virtual
  # environment's, which a copy or a link would not find).
  local want='import torch, torchvision, numpy, safetensors, tensorboard'
  if [[ ! -x $root/.venv/bin/python ]] && python3 -c "$want" 2>/dev/null; then
    mkdir -p "$root/.venv/bin"
    printf '#!/bin/sh\nexec %q "$@"\n' "$(command -v python3)" > "$root/.venv/bin/python"
    chmod +x "$root/.venv/bin/python"
  fi
  [[ -x $root/.venv/bin/python ]] && "$root/.venv/bin/python" -c "$want" 2>/dev/null &&
    venv_python=1
  ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so\.1 ' && system_loader=1
  ctest --test-dir "$root/build" --show-only=json-v1 > "$work/raw/tests-list.json"
  python3 "$here/tests_select.py" "$work/raw/tests-list.json" --devices "$ndev" \
    --venv-python "$venv_python" --system-loader "$system_loader" > "$work/raw/tests-excluded.txt"
  data="Debian's folder"
  if [[ ! -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]]; then
    data="missing"
    if [[ -d $prefix/root/usr/share/datasets/fashion-mnist ]]; then
      if with_test_data test -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz; then
        data="the carried package, laid over /usr/share in a private mount namespace"
      else
        overlay_ok=0
        data="carried, but no private mount namespace could be made (unshare, overlayfs):"
        data+=" the suites that read it fail"
      fi
    fi
  fi
  echo "fashion_mnist $data" > "$work/raw/tests-env.txt"
  echo "device $device" >> "$work/raw/tests-env.txt"
  echo "devices_for_multi $ndev" >> "$work/raw/tests-env.txt"
  jobs=$(nproc)
  ((jobs > 8)) && jobs=8
  local exclude
  exclude=$(awk '{print $1}' "$work/raw/tests-excluded.txt" | paste -sd'|')
  echo "gpu_report: the test suite on $device ($jobs at a time; Fashion-MNIST: $data)"
  sed 's/^/gpu_report: not run: /' "$work/raw/tests-excluded.txt"
  rm -f "$work/raw/tests.xml"
  CLRT_TEST_DEVICE=$device with_test_data timeout -k 10 "$(time_left)" \
    ctest --test-dir "$root/build" -LE oclgrind \
    ${exclude:+-E "^($exclude)\$"} -j "$jobs" --output-on-failure \
    --output-junit "$work/raw/tests.xml" || rc=$?
  ((rc != 124)) || return 124
  if [[ ! -s $work/raw/tests.xml ]]; then
    echo "gpu_report: ctest ran no test (exit $rc)"
    return 1
  fi
  return 0 # failed tests are results, not a failed stage
}

stage_peak() {
  use_prefix
  bounded "$root/build/clrt-bench" peak --device "$device" --json > "$work/raw/peak.json"
  python3 -m json.tool "$work/raw/peak.json" | tail -n 30
}

stage_bench() {
  use_prefix
  local cmd
  for cmd in matmul transfer launch logging; do
    echo "gpu_report: clrt-bench $cmd --device $device"
    local extra=()
    [[ $cmd == matmul ]] && extra=(--paths default)
    bounded "$root/build/clrt-bench" "$cmd" --device "$device" "${extra[@]}" --json \
      > "$work/raw/$cmd.json"
  done
}

stage_tune() {
  use_prefix
  local dir=$root/build/clblast-tuning f
  rm -rf "$dir"
  # 100 settings per tuner: about 5 minutes on PoCL (2 cores), so that the
  # stage fits its 10 minutes with the stand-in too.
  echo "gpu_report: clrt-smi --tune $device --tune-settings 100 --tune-dir $dir"
  bounded "$root/build/clrt-smi" --tune "$device" --tune-settings 100 --tune-dir "$dir" |
    tee "$work/raw/tune.txt"
  for f in "$dir"/*.json "$dir"/*.log; do
    [[ -e $f ]] && cp "$f" "$work/logs/"
  done
  return 0
}

# The CIFAR-10 and Fashion-MNIST folders the comparisons read (written from
# a seed where the real files are not here).
train_data() {
  cifar=$root/bench/.data/cifar10-synthetic-seed1
  [[ -f $cifar/test_batch.bin ]] || python3 "$root/bench/make_cifar10.py" --seed 1 --out "$cifar"
  fashion=$(fashion_dir)
  if [[ -z $fashion ]]; then
    fashion=$root/bench/.data/fashion-mnist-synthetic-seed1
    [[ -f $fashion/t10k-labels-idx1-ubyte ]] ||
      python3 "$root/bench/make_fashion_mnist.py" --seed 1 --out "$fashion"
  fi
}

check_torch() {
  python3 -c "import torch, numpy
d = '$torch_device'
assert d == 'cpu' or torch.cuda.is_available(), 'PyTorch sees no CUDA device'
print('gpu_report: PyTorch', torch.__version__, 'on', torch.cuda.get_device_name(0) if d != 'cpu' else 'the CPU')"
}

compare() { # compare.py with the stage's devices and data, then "$@"
  bounded python3 "$root/bench/compare.py" --python python3 --device "$device" \
    --torch-device "$torch_device" --cifar-dir "$cifar" --fashion-dir "$fashion" "$@"
}

stage_train() {
  use_prefix
  check_torch
  train_data
  compare --rounds 3 --epochs 2 --json-out "$work/raw/compare.json"
}

stage_resnet() {
  use_prefix
  if ! "$root/build/clrt-cnn" --help 2>&1 | grep -q resnet18; then
    echo "clrt-cnn has no --model resnet18 yet: ResNet-18 skipped" | tee "$work/raw/resnet-skipped.txt"
    return 0
  fi
  rm -f "$work/raw/resnet-skipped.txt"
  check_torch
  train_data
  # A stand-in trains on 2 CPU cores, where an epoch of 1280 images takes
  # about 30 s a side: the GPU's size would take half an hour.
  local limit=10240 rounds=2
  [[ -z $standin ]] || limit=1280 rounds=1
  compare --only resnet18 --rounds "$rounds" --epochs 2 --limit "$limit" \
    --json-out "$work/raw/compare_resnet18.json"
}
