#!/usr/bin/env bash
# Tests scripts/gpu_report.sh end to end where there is no GPU, as root on
# Debian 12 with apt: a fresh Debian 12 root (debootstrap --variant=minbase)
# given only what a GPU machine is assumed to have (a C compiler, and a
# python3 virtual environment with PyTorch, numpy and CMake from PyPI, as
# the lent machines' python has them; PyTorch runs on the CPU there), the
# checkout copied in (tracked and untracked files git does not ignore, as
# the device tool sends them), the packages gathered here with a stand-in
# for NVIDIA's OpenCL library, then each stage in the root (chroot), one
# call per stage as on a borrowed machine. Nothing is installed on this
# machine but debootstrap.
#   scripts/gpu_report/standin_test.sh [--root DIR] [--stand-in pocl|oclgrind]
#                                      [--results DIR] [STAGE...]
# Defaults: --root /var/tmp/clrt-standin-root (made once, reused),
# --stand-in pocl, --results /var/tmp/clrt-standin-results, stages: all.
# Each stage runs under flock /tmp/clrt-cpu.lock (a shared machine).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
rootfs=/var/tmp/clrt-standin-root standin=pocl results=/var/tmp/clrt-standin-results stages=()
while (($#)); do
  case $1 in
    --root) rootfs=$2; shift 2 ;;
    --stand-in) standin=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    -*) echo "standin_test: unknown option $1" >&2; exit 2 ;;
    *) stages+=("$1"); shift ;;
  esac
done
((${#stages[@]})) || stages=(setup smi tests peak bench tune train resnet)
say() { echo "standin_test: $*" >&2; }
[[ $(id -u) -eq 0 ]] || { say "run as root (debootstrap, chroot)"; exit 1; }

"$repo/scripts/install_packages.sh" debootstrap
if [[ ! -e $rootfs/.bootstrapped ]]; then
  say "making a Debian 12 root in $rootfs (minutes)"
  debootstrap --variant=minbase bookworm "$rootfs" >&2
  touch "$rootfs/.bootstrapped"
fi

mounts=(proc sys dev dev/pts)
mount_all() {
  local m
  # The root a mount of its own, as / is on a machine: so that a private
  # mount namespace can be made in it (the tests stage's data overlay).
  if ! mountpoint -q "$rootfs"; then
    mount --bind "$rootfs" "$rootfs"
    mount --make-private "$rootfs"
  fi
  for m in "${mounts[@]}"; do
    mountpoint -q "$rootfs/$m" || mount --bind "/$m" "$rootfs/$m"
  done
  cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
}
umount_all() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    if mountpoint -q "$rootfs/${mounts[i]}"; then umount "$rootfs/${mounts[i]}"; fi
  done
  if mountpoint -q "$rootfs"; then umount "$rootfs"; fi
  return 0
}
trap umount_all EXIT
mount_all
in_root() { chroot "$rootfs" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
              PATH=/opt/torch/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
              ${PIP_CERT:+PIP_CERT=/etc/ssl/certs/pip-cert.crt} bash -c "$1"; }

# What the GPU machine is assumed to have: a C compiler, python3 with torch.
if [[ ! -x $rootfs/opt/torch/bin/python3 ]]; then
  say "installing a C compiler, python3 and (pip) torch, numpy and cmake into the root"
  if [[ -n ${PIP_CERT:-} ]]; then # a certificate pip needs here, it needs there
    mkdir -p "$rootfs/etc/ssl/certs"
    cp "$PIP_CERT" "$rootfs/etc/ssl/certs/pip-cert.crt"
  fi
  in_root "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
             --no-install-recommends gcc libc6-dev python3 python3-venv ca-certificates >/dev/null"
  in_root "python3 -m venv /opt/torch && pip install -q torch numpy 'cmake>=3.25,<4'"
fi
in_root 'for p in cmake pkg-config pkgconf ocl-icd-libopencl1 libclblast1 libopenblas0-pthread check; do
           dpkg-query -W -f="\${Status}" $p 2>/dev/null | grep -q "install ok" && echo "standin_test: $p is installed in the root" >&2; done; true'

# The checkout as the device tool sends it, and the packages gathered here.
say "copying the checkout into $rootfs/work/clrt"
rm -rf "$rootfs/work/clrt"
mkdir -p "$rootfs/work/clrt"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
   tar --null -T - -cf -) | tar -xf - -C "$rootfs/work/clrt"
if [[ -d $results/gpu-report ]]; then # an earlier run's state travels with the checkout
  mkdir -p "$rootfs/work/clrt/bench/results"
  cp -r "$results/gpu-report" "$rootfs/work/clrt/bench/results/"
fi
"$repo/scripts/gpu_report.sh" gather "$rootfs/work/clrt/.gpu-debs" --stand-in "$standin"

for s in "${stages[@]}"; do
  say "stage $s"
  flock /tmp/clrt-cpu.lock chroot "$rootfs" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/opt/torch/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -c "cd /work/clrt && scripts/gpu_report.sh --stand-in $standin $s" || say "stage $s: exit $?"
done
mkdir -p "$results"
rm -rf "$results/gpu-report"
cp -r "$rootfs/work/clrt/bench/results/gpu-report" "$results/"
say "report: $results/gpu-report/report.md"
