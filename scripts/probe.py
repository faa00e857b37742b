#!/usr/bin/env python3
"""Replays issue 25's list of defects (and issue 36's, numbered 36.N) against
the library and its programs and says, for each probe, whether it is clean
or still a defect.

Each probe is one reproduction from the issue (its item number first):
saves over what is not a regular file, output paths checked late, resumes
that are not checked for consistency, MPI ranks with different options,
FIFOs and oversized files where a file is read, misuse of the API,
CLRT_KERNEL_DIR. It drives build/clrt-cnn, build/tests/probe/probe_api (one
API misuse per subcommand) and mpirun, with build/tests/probe/
librename_hook.so preloaded where a process must die at a rename. Python's
standard library only; runs offline after scripts/setup.sh.

  scripts/probe.py [--build build] [--only WORD|ITEM] [--list] [--keep]

Prints one line per probe and then "probes N, clean C, defects D"
(skipped probes, e.g. those that need root or mpirun, are counted apart).
Exit status 0 when there is no defect, 1 otherwise. Run it under the CPU
lock on a shared machine: flock /tmp/clrt-cpu.lock scripts/probe.py
"""
import argparse
import json
import os
import re
import resource
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMON = ["--device", "cpu", "--limit", "1024", "--test-limit", "256"]
EPOCH_LINE = re.compile(r"epoch +(\d+) +lr [0-9.]+ +loss [0-9.]+ +train acc [0-9.]+ +test acc "
                        r"[0-9.]+")
PROBES = []


class Skip(Exception):
    """The probe cannot run here (no root, no mpirun)."""


def probe(item, name):
    def register(fn):
        PROBES.append((item, name, fn))
        return fn
    return register


class Result:
    def __init__(self, rc, out, err, seconds, maxrss_mib, timed_out):
        self.rc, self.out, self.err = rc, out, err
        self.seconds, self.maxrss_mib, self.timed_out = seconds, maxrss_mib, timed_out

    @property
    def text(self):
        return self.out + self.err

    def epochs(self):
        """The epoch summary lines printed, as {epoch: line}."""
        return {int(m.group(1)): m.group(0) for m in EPOCH_LINE.finditer(self.out)}

    def why(self):
        tail = self.err.strip().splitlines()[-1:] or self.out.strip().splitlines()[-1:] or [""]
        state = "timed out" if self.timed_out else f"exit {self.rc}"
        return f"{state}: {tail[0][:160]}"


def run(cmd, env=None, timeout=60, fsize=None, cwd=None, address_space=None):
    """Runs cmd in its own session; kills the session at the timeout.
    fsize: an RLIMIT_FSIZE in bytes (a full disk), SIGXFSZ ignored so
    writes fail with EFBIG instead of killing the process. address_space:
    an RLIMIT_AS in bytes (`ulimit -v`)."""
    full_env = dict(os.environ)
    full_env.update(env or {})

    def limit():
        if fsize is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        if address_space is not None:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    out_f = tempfile.TemporaryFile()
    err_f = tempfile.TemporaryFile()
    start = time.monotonic()
    p = subprocess.Popen(cmd, env=full_env, stdout=out_f, stderr=err_f, stdin=subprocess.DEVNULL,
                         start_new_session=True, preexec_fn=limit, cwd=cwd)
    timed_out = False
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - start > timeout:
            timed_out = True
            os.killpg(p.pid, signal.SIGKILL)
            pid, status, usage = os.wait4(p.pid, 0)
            break
        time.sleep(0.01)
    p.returncode = os.waitstatus_to_exitcode(status)
    if timed_out:  # mpirun's children may linger in the session
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    seconds = time.monotonic() - start
    out_f.seek(0)
    err_f.seek(0)
    out = out_f.read().decode(errors="replace")
    err = err_f.read().decode(errors="replace")
    return Result(p.returncode, out, err, seconds, usage.ru_maxrss / 1024, timed_out)


class Ctx:
    def __init__(self, build, work):
        self.build, self.work = build, work
        self.cnn = os.path.join(build, "clrt-cnn")
        self.api = os.path.join(build, "tests", "probe", "probe_api")
        self.hook = os.path.join(build, "tests", "probe", "libprobe_rename_hook.so")
        self.n = 0
        self.env = {"CLRT_CACHE_DIR": os.path.join(work, "cache")}
        self._straight = {}

    def dir(self):
        """A fresh folder for one probe."""
        self.n += 1
        d = os.path.join(self.work, f"p{self.n}")
        os.makedirs(d)
        return d

    def cnn_run(self, *args, env=None, **kw):
        e = dict(self.env)
        e.update(env or {})
        return run([self.cnn, *COMMON, *args], env=e, **kw)

    def api_run(self, name, env=None, **kw):
        e = dict(self.env)
        e.update(env or {})
        return run([self.api, name], env=e, **kw)

    def killed_at_rename(self, n, after, suffix, *args):
        """clrt-cnn killed at the n-th rename onto a path ending in suffix."""
        env = {"LD_PRELOAD": self.hook, "PROBE_RENAME_SUFFIX": suffix,
               "PROBE_KILL_AFTER_RENAME" if after else "PROBE_KILL_BEFORE_RENAME": str(n)}
        return self.cnn_run(*args, env=env)

    def straight(self, *args):
        """The epoch lines of an uninterrupted run with these options (cached)."""
        if args not in self._straight:
            r = self.cnn_run(*args)
            if r.rc != 0:
                raise RuntimeError(f"clrt-cnn {' '.join(args)}: {r.why()}")
            self._straight[args] = r.epochs()
        return self._straight[args]


def is_kind(path, test):
    try:
        return test(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def refused_before_training(r, words):
    """None when r failed before its first epoch with a message naming one
    of words; else why not."""
    if r.timed_out or r.rc == 0:
        return f"not refused ({r.why()})"
    if r.epochs():
        return f"refused only after training ({r.why()})"
    if not any(w in r.err for w in words):
        return f"refused without naming {words[0]} ({r.why()})"
    return None


def fails_cleanly(r, words=None, limit=None):
    if r.timed_out:
        return f"still running after {r.seconds:.0f} s"
    if r.rc == 0:
        return "exit 0"
    if r.rc < 0:
        return f"killed by signal {-r.rc}"
    if words and not any(w in r.err for w in words):
        return f"the error does not name {words[0]} ({r.why()})"
    return None


# --- 1. Data destroyed or lost --------------------------------------------

def warm(c):
    """Kernels compiled and cached (clrt's and PoCL's caches) before a run
    whose file size limit would also stop the compiler writing them."""
    baseline_rss(c)


def mknod_char(path):
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 7))  # a /dev/full of our own
    except PermissionError:
        raise Skip("mknod needs root")


@probe(1, "save over a character device")
def save_over_chardev(c):
    d = c.dir()
    x = os.path.join(d, "x")
    mknod_char(x)
    r = c.cnn_run("--epochs", "1", "--save", x)
    if not is_kind(x, stat.S_ISCHR):
        return f"the device node was replaced ({r.why()})"
    return fails_cleanly(r)


@probe(1, "save over a FIFO")
def save_over_fifo(c):
    x = os.path.join(c.dir(), "x")
    os.mkfifo(x)
    r = c.cnn_run("--epochs", "1", "--save", x, timeout=60)
    if not is_kind(x, stat.S_ISFIFO):
        return f"the FIFO was replaced ({r.why()})"
    return fails_cleanly(r)


@probe(1, "save over a symlink")
def save_over_symlink(c):
    d = c.dir()
    target, x = os.path.join(d, "precious"), os.path.join(d, "x")
    with open(target, "w") as f:
        f.write("precious\n")
    os.symlink(target, x)
    r = c.cnn_run("--epochs", "1", "--save", x)
    if not is_kind(x, stat.S_ISLNK):
        return f"the symlink was replaced ({r.why()})"
    if open(target).read() != "precious\n":
        return "the symlink's target was overwritten"
    return fails_cleanly(r)


@probe(1, "optimizer save over a FIFO")
def optim_save_over_fifo(c):
    x = os.path.join(c.dir(), "x")
    os.mkfifo(x + ".optim")
    r = c.cnn_run("--epochs", "1", "--save", x)
    if not is_kind(x + ".optim", stat.S_ISFIFO):
        return f"the FIFO at x.optim was replaced ({r.why()})"
    return fails_cleanly(r)


@probe(1, "CLRT_TRACE over a character device")
def trace_over_chardev(c):
    x = os.path.join(c.dir(), "x")
    mknod_char(x)
    r = c.cnn_run("--epochs", "1", env={"CLRT_TRACE": x})
    if not is_kind(x, stat.S_ISCHR):
        return f"the device node was replaced ({r.why()})"
    return fails_cleanly(r)


@probe(1, "save on a full disk")
def save_full_disk(c):
    x = os.path.join(c.dir(), "x")
    warm(c)
    r = c.cnn_run("--epochs", "1", "--save", x, fsize=65536)
    if os.path.exists(x):
        return "a cut-off file was left at the path"
    return fails_cleanly(r)


@probe(1, "clrt_tensor_print to a full device")
def print_full(c):
    return api_probe(c, "print-full")


# --- 2. Output paths checked too late --------------------------------------

@probe(2, "--save into a missing folder")
def save_missing_folder(c):
    r = c.cnn_run("--epochs", "2", "--save", os.path.join(c.dir(), "no", "x"))
    return refused_before_training(r, ["--save", "no/x"])


@probe(2, "--save ''")
def save_empty(c):
    r = c.cnn_run("--epochs", "2", "--save", "")
    return refused_before_training(r, ["--save"])


@probe(2, "--plot into a missing folder")
def plot_missing_folder(c):
    r = c.cnn_run("--epochs", "2", "--plot", os.path.join(c.dir(), "no", "x.svg"))
    return refused_before_training(r, ["--plot", "no/x.svg"])


@probe(2, "--plot on a full disk")
def plot_full_disk(c):
    x = os.path.join(c.dir(), "x.svg")
    warm(c)
    r = c.cnn_run("--epochs", "1", "--plot", x, fsize=1024)
    if os.path.exists(x):
        return f"a {os.path.getsize(x)}-byte file was left at the path ({r.why()})"
    return fails_cleanly(r, ["--plot", "x.svg"])


@probe(2, "CLRT_TRACE into a missing folder")
def trace_missing_folder(c):
    r = c.cnn_run("--epochs", "1", env={"CLRT_TRACE": os.path.join(c.dir(), "no", "t.json")})
    return refused_before_training(r, ["CLRT_TRACE"])


@probe(2, "CLRT_TRACE on a full disk")
def trace_full_disk(c):
    x = os.path.join(c.dir(), "t.json")
    warm(c)
    r = c.cnn_run("--epochs", "1", env={"CLRT_TRACE": x}, fsize=4096)
    if os.path.exists(x):
        return f"a {os.path.getsize(x)}-byte file was left at the path ({r.why()})"
    return fails_cleanly(r, ["CLRT_TRACE", "t.json"])


@probe(2, "--logdir over a file")
def logdir_over_file(c):
    x = os.path.join(c.dir(), "f")
    open(x, "w").close()
    return refused_before_training(c.cnn_run("--epochs", "2", "--logdir", x), ["logdir", x])


# --- 3. Resume not checked for consistency ---------------------------------

CONST = ("--schedule", "constant")


def saved(c, *args):
    """A checkpoint p saved by clrt-cnn with args; its path."""
    p = os.path.join(c.dir(), "p")
    r = c.cnn_run(*args, "--save", p)
    if r.rc != 0:
        raise RuntimeError(f"--save {' '.join(args)}: {r.why()}")
    return p


@probe(3, "a model file of epoch 3 with a .optim of epoch 2")
def resume_mixed_pair(c):
    p = saved(c, *CONST, "--epochs", "2")
    shutil.copy(p + ".optim", p + ".optim-2")
    r = c.cnn_run(*CONST, "--epochs", "3", "--resume", p, "--save", p)
    if r.rc != 0:
        raise RuntimeError(f"resume to epoch 3: {r.why()}")
    os.replace(p + ".optim-2", p + ".optim")
    return fails_cleanly(c.cnn_run(*CONST, "--epochs", "4", "--resume", p), ["optim"])


@probe(3, "--resume with another --batch-size")
def resume_other_batch(c):
    p = saved(c, *CONST, "--epochs", "2")  # 8 steps of 256; 8 steps of 128 = 1 epoch
    r = c.cnn_run(*CONST, "--epochs", "3", "--batch-size", "128", "--resume", p)
    return fails_cleanly(r, ["batch"])


@probe(3, "--resume with another --limit")
def resume_other_limit(c):
    p = saved(c, *CONST, "--epochs", "2")  # 8 steps of 1024 samples = 1 epoch of 2048
    args = [a if a != "1024" else "2048" for a in COMMON]
    r = run([c.cnn, *args, *CONST, "--epochs", "3", "--resume", p], env=c.env)
    return fails_cleanly(r, ["limit", "training samples", "samples"])


@probe(3, "cosine schedule: --epochs 2 --save, then --epochs 3 --resume")
def resume_cosine_extend(c):
    p = saved(c, "--epochs", "2")
    r = c.cnn_run("--epochs", "3", "--resume", p)
    if r.rc != 0 and not r.timed_out and "epochs" in r.err:
        return None  # refused, saying why
    straight = c.straight("--epochs", "3")
    if r.rc == 0 and r.epochs().get(3) == straight.get(3):
        return None
    return (f"epoch 3 after resuming: '{r.epochs().get(3)}', uninterrupted: '{straight.get(3)}'"
            if r.rc == 0 else r.why())


@probe(3, "cosine schedule: a 3-epoch run killed after epoch 2's save, resumed")
def resume_cosine_killed(c):
    p = os.path.join(c.dir(), "p")
    c.killed_at_rename(2, True, ".optim", "--epochs", "3", "--save", p)
    r = c.cnn_run("--epochs", "3", "--resume", p)
    straight = c.straight("--epochs", "3")
    if r.rc != 0:
        return r.why()
    if sorted(r.epochs()) != [3] or r.epochs()[3] != straight[3]:
        return f"resumed '{r.epochs()}', uninterrupted epoch 3: '{straight[3]}'"
    return None


def safetensors_edit(path, edit):
    """Rewrites a safetensors file's header through edit(header_dict)."""
    with open(path, "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    edit(header)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + blob[8 + n:])


@probe(3, "a crafted .optim step count of 2^33")
def resume_step_overflow(c):
    p = saved(c, *CONST, "--epochs", "1")

    def big_step(h):
        h["__metadata__"]["step"] = str(1 << 33)
    safetensors_edit(p + ".optim", big_step)
    return fails_cleanly(c.cnn_run(*CONST, "--epochs", "3", "--resume", p, timeout=30))


@probe(3, "a negative start epoch (clrt_train_config)")
def start_epoch_negative(c):
    return api_probe(c, "start-epoch-negative")


@probe(3, "a kill between the two renames of a save, then --resume")
def kill_between_renames(c):
    p = saved(c, *CONST, "--epochs", "1")
    # The second save's second rename: one file of epoch 2, one of epoch 1.
    c.killed_at_rename(2, False, "", *CONST, "--epochs", "2", "--resume", p, "--save", p)
    r = c.cnn_run(*CONST, "--epochs", "3", "--resume", p)
    straight = c.straight(*CONST, "--epochs", "3")
    got = r.epochs()
    if r.rc != 0:
        return f"the pair left does not load ({r.why()})"
    if not got or any(straight.get(e) != line for e, line in got.items()):
        return f"resumed as {sorted(got)} with other figures than an uninterrupted run"
    return None


@probe(3, "temporary files left by a killed save are cleaned up")
def stale_temporaries(c):
    p = saved(c, *CONST, "--epochs", "1")
    c.killed_at_rename(1, False, "", *CONST, "--epochs", "2", "--resume", p, "--save", p)
    left = [f for f in os.listdir(os.path.dirname(p)) if ".tmp" in f]
    if not left:
        return "the killed save left no temporary file to clean (probe broken)"
    r = c.cnn_run(*CONST, "--epochs", "2", "--resume", p, "--save", p)
    if r.rc != 0:
        return r.why()
    still = [f for f in os.listdir(os.path.dirname(p)) if ".tmp" in f]
    return f"still there after the next save: {still}" if still else None


# --- 4. MPI ranks with different options -----------------------------------

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def mpi_pair(c, a, b, timeout=90):
    if not shutil.which("mpirun"):
        raise Skip("no mpirun")
    base = [c.cnn, "--distributed", "--device", "cpu", "--limit", "1024", "--test-limit", "256"]
    cmd = ["mpirun", "-np", "1", *base, *a, ":", "-np", "1", *base, *b]
    env = dict(c.env)
    env.update(MPI_ENV)
    return run(cmd, env=env, timeout=timeout)


def mpi_refused(c, a, b, words):
    r = mpi_pair(c, a, b)
    if r.timed_out:
        return f"hangs (still running after {r.seconds:.0f} s)"
    if r.rc == 0:
        return "exit 0: the ranks trained apart"
    return None if any(w in r.err for w in words) else f"refused without naming it ({r.why()})"


@probe(4, "MPI: the same options on both ranks train")
def mpi_same(c):
    r = mpi_pair(c, ["--epochs", "1"], ["--epochs", "1"])
    return None if r.rc == 0 else r.why()


@probe(4, "MPI: --epochs 2 on rank 0, 3 on rank 1")
def mpi_epochs(c):
    return mpi_refused(c, ["--epochs", "2"], ["--epochs", "3"], ["epochs"])


@probe(4, "MPI: another --lr on rank 1")
def mpi_lr(c):
    return mpi_refused(c, ["--epochs", "1"], ["--epochs", "1", "--lr", "0.2"], ["lr"])


@probe(4, "MPI: another --optimizer on rank 1")
def mpi_optimizer(c):
    return mpi_refused(c, ["--epochs", "1"], ["--epochs", "1", "--optimizer", "adam"],
                       ["optimizer"])


@probe(4, "MPI: another --schedule on rank 1")
def mpi_schedule(c):
    return mpi_refused(c, ["--epochs", "2"], ["--epochs", "2", "--schedule", "constant"],
                       ["schedule"])


@probe(4, "MPI: --save given only on rank 1")
def mpi_save_rank1(c):
    p = os.path.join(c.dir(), "p")
    return mpi_refused(c, ["--epochs", "1"], ["--epochs", "1", "--save", p], ["save"])


# --- 5. FIFOs where a file is read -----------------------------------------

@probe(5, "--resume from a FIFO (model file)")
def resume_fifo_model(c):
    p = os.path.join(c.dir(), "p")
    os.mkfifo(p)
    return fails_cleanly(c.cnn_run("--epochs", "2", "--resume", p, timeout=30))


@probe(5, "--resume with a FIFO as the .optim file")
def resume_fifo_optim(c):
    p = saved(c, *CONST, "--epochs", "1")
    os.remove(p + ".optim")
    os.mkfifo(p + ".optim")
    return fails_cleanly(c.cnn_run(*CONST, "--epochs", "2", "--resume", p, timeout=30))


@probe(5, "CLRT_KERNEL_DIR with a FIFO as a .cl file")
def kernel_dir_fifo(c):
    d = c.dir()
    os.mkfifo(os.path.join(d, "common.cl"))
    r = c.cnn_run("--epochs", "1", env={"CLRT_KERNEL_DIR": d, "CLRT_CACHE": "0"}, timeout=30)
    return f"still running after {r.seconds:.0f} s" if r.timed_out else None


@probe(5, "a FIFO in the data folder")
def data_fifo(c):
    d = c.dir()
    os.mkfifo(os.path.join(d, "train-images-idx3-ubyte"))
    r = run([c.cnn, "--device", "cpu", "--epochs", "1", "--data-dir", d], env=c.env, timeout=30)
    return fails_cleanly(r)


# --- 6. Oversized files read whole ------------------------------------------

BIG = 1 << 30


def baseline_rss(c):
    if not hasattr(c, "_rss"):
        c._rss = c.cnn_run("--epochs", "1").maxrss_mib
    return c._rss


@probe(6, "a 1 GiB sparse checkpoint")
def big_checkpoint(c):
    p = saved(c, *CONST, "--epochs", "1")
    os.truncate(p, BIG)
    r = c.cnn_run(*CONST, "--epochs", "2", "--resume", p, timeout=60)
    grew = r.maxrss_mib - baseline_rss(c)
    if grew > 256:
        return f"{grew:.0f} MiB more memory than a plain run ({r.why()})"
    return fails_cleanly(r)


@probe(6, "a 1 GiB sparse .optim file")
def big_optim(c):
    p = saved(c, *CONST, "--epochs", "1")
    os.truncate(p + ".optim", BIG)
    r = c.cnn_run(*CONST, "--epochs", "2", "--resume", p, timeout=60)
    grew = r.maxrss_mib - baseline_rss(c)
    if grew > 256:
        return f"{grew:.0f} MiB more memory than a plain run ({r.why()})"
    return fails_cleanly(r)


@probe(6, "a 1 GiB sparse .cl file in CLRT_KERNEL_DIR")
def big_kernel_file(c):
    d = c.dir()
    with open(os.path.join(d, "common.cl"), "wb") as f:
        f.truncate(BIG)
    r = c.cnn_run("--epochs", "1", env={"CLRT_KERNEL_DIR": d, "CLRT_CACHE": "0"}, timeout=60)
    grew = r.maxrss_mib - baseline_rss(c)
    if grew > 256:
        return f"{grew:.0f} MiB more memory than a plain run ({r.why()})"
    return f"still running after {r.seconds:.0f} s" if r.timed_out else None


# --- 7, 8. Crashes and silent wrong answers from the API -------------------

def api_probe(c, name, env=None, timeout=60):
    r = c.api_run(name, env=env, timeout=timeout)
    if r.timed_out:
        return "timed out"
    if r.rc < 0:
        return f"crashed (signal {-r.rc})"
    if r.rc != 0:
        lines = [l for l in r.out.splitlines() if l.startswith("defect")]
        return (lines[0][len("defect: "):] if lines else r.why())
    return None


for _item, _name, _desc in [
        (7, "shape-str-null-buf", "clrt_shape_str(2, s, NULL, 10)"),
        (7, "shape-str-null-shape", "clrt_shape_str(2, NULL, buf, 64)"),
        (7, "sequential-twice", "clrt_sequential with the same child twice"),
        (7, "sequential-owned", "clrt_sequential with a child another Sequential owns"),
        (8, "norm-large", "clrt_norm of [3e30, 4e30]"),
        (8, "count-correct-nan", "clrt_count_correct where the argmax is a NaN"),
        (8, "lenet-overflow", "clrt_lenet of samples {1, 2^33, 2^33}"),
        (8, "xent-loss-shape", "clrt_cross_entropy with a [1] loss tensor"),
        (8, "xent-ignored", "clrt_cross_entropy with every label out of range")]:
    probe(_item, _desc)(lambda c, n=_name: api_probe(c, n))


# --- 9. CLRT_KERNEL_DIR -----------------------------------------------------

def kernel_dir_run(c, d):
    r = c.cnn_run("--epochs", "1", env={"CLRT_KERNEL_DIR": d, "CLRT_CACHE": "0"})
    if r.rc != 0:
        return f"training failed ({r.why()})"
    warnings = [l for l in r.err.splitlines() if "CLRT_KERNEL_DIR" in l]
    return None if len(warnings) >= 1 else "no warning"


@probe(9, "CLRT_KERNEL_DIR at a folder that does not exist")
def kernel_dir_missing(c):
    return kernel_dir_run(c, os.path.join(c.dir(), "no"))


@probe(9, "CLRT_KERNEL_DIR at a folder without the .cl files")
def kernel_dir_empty(c):
    return kernel_dir_run(c, c.dir())


# --- issue 36 -----------------------------------------------------------------
# 36.4 a forced Winograd where it does not apply, 36.8 a residual block's
# broadcast identity, 36.6 loads quadratic in the number of tensors, 36.7 CLBlast parameters far
# beyond CLBlast's constraints, 36.9 names that are not UTF-8 (probe_api's
# subcommands, tests/probe/probe_api36.c); 36.10 to 36.13 the GPU report's
# scripts, through the checks of tests/gpu_report/check_gpu_report.py (they
# make their own packages; setup.sh needs a C compiler and CMake).

for _item, _name, _desc, _timeout in [
        ("36.6", "load-many-tensors", "a safetensors file of 160k tensors loads (was 60 s)", 60),
        ("36.6", "checkpoint-many-tensors",
         "a checkpoint of 40k parameters loads as --resume loads it (was 31.7 s)", 120),
        ("36.9", "child-name-not-utf8", "a child name that is not UTF-8 ('\\xff')", 60),
        ("36.9", "safetensors-nul-name", "a tensor name with \\u0000 in a file", 60)]:
    probe(_item, _desc)(lambda c, n=_name, t=_timeout: api_probe(c, n, timeout=t))


@probe("36.4", "CLRT_CONV_ALGO=winograd on a 5x5 and a stride-2 convolution")
def winograd_not_applicable(c):
    return api_probe(c, "winograd-not-applicable", env={"CLRT_CONV_ALGO": "winograd"})


@probe("36.8", "clrt_residual(clrt_conv2d(1, 4, 3, 1, 1), NULL): backward of the broadcast")
def residual_broadcast(c):
    return api_probe(c, "residual-broadcast")


@probe("36.7", "clrt_clblast_tuning_store and _override with MWG=4294967296")
def clblast_huge_mwg(c):
    # A cache folder of its own: a store that took the values would poison
    # the CLBlast GEMMs of later probes.
    return api_probe(c, "clblast-huge-mwg", env={"CLRT_CACHE_DIR": c.dir()})


def gpu_report_check(c, name):
    """One check of tests/gpu_report/check_gpu_report.py in a fresh folder:
    None when it passes, else its complaint."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "gpu_report"))
    import check_gpu_report as gr
    gr.VERBOSE = False
    if not shutil.which("cc") and not os.environ.get("CC"):
        raise Skip("setup.sh needs a C compiler")
    try:
        getattr(gr, name)(c.dir())
    except gr.Failed as e:
        return str(e).splitlines()[0][:300]
    return None


for _item, _check, _desc in [
        ("36.10", "check_setup_unset_ld_path", "gpu_report/setup.sh with LD_LIBRARY_PATH unset"),
        ("36.11", "check_setup_spaces", "gpu_report/setup.sh with a prefix holding spaces"),
        ("36.12", "check_undeb", "undeb.py with members and links leaving the prefix"),
        ("36.13", "check_undeb_truncated", "undeb.py with a truncated .deb"),
        ("36.13", "check_setup_errors", "gpu_report/setup.sh --debs /nonexistent, a broken .deb"),
        ("36.13", "check_report", "the report after setup failed: a reason, no 'None'")]:
    probe(_item, _desc)(lambda c, n=_check: gpu_report_check(c, n))


# --- Issue 36: numerics, the loss gradient, a batch near the memory limit ---

for _item, _name, _desc in [
        ("36.1", "bn-outlier", "batch norm of [256, 1, 64, 64] noise with an outlier 10 first, "
                               "in the middle, last: statistics, y, grad_x against float64"),
        ("36.2", "xent-ignored-grad", "cross-entropy gradient with labels {0, 1, -100, -100}: "
                                      "PyTorch's mean over valid rows (grad[0][0] -0.4550)"),
        ("36.3", "bn-huge", "batch norm at deviations 1e15, 1e18, 1e-15: grad_x and "
                            "running_var against float64")]:
    probe(_item, _desc)(lambda c, n=_name: api_probe(c, n))


@probe("36.5", "ResNet-18, batch 512, under ulimit -v 2.5 GiB")
def batch_over_address_space(c):
    # PoCL's CPU buffers are host memory: clrt must refuse the batch with
    # CLRT_ENOMEM naming the limit before PoCL's own allocation fails
    # (it aborted: "pocl_create_migration_commands: Assertion").
    r = c.cnn_run("--model", "resnet18", "--batch-size", "512", "--epochs", "1",
                  address_space=5 << 29, timeout=300)
    return fails_cleanly(r, ["RLIMIT_AS"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only", help="run the probes whose name contains this, or of this "
                                   "item (9, 36, 36.5)")
    ap.add_argument("--list", action="store_true", help="list the probes")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    a = ap.parse_args()
    chosen = [p for p in PROBES if not a.only or a.only in p[1] or str(p[0]) == a.only
              or str(p[0]).startswith(a.only + ".")]
    if a.list:
        for item, name, _ in chosen:
            print(f"{item}. {name}")
        return 0
    work = tempfile.mkdtemp(prefix="clrt-probe-")
    c = Ctx(os.path.abspath(a.build), work)
    counts = {"clean": 0, "defect": 0, "skipped": 0}
    start = time.monotonic()
    for item, name, fn in chosen:
        t0 = time.monotonic()
        try:
            why = fn(c)
            verdict = "clean" if why is None else "defect"
        except Skip as e:
            verdict, why = "skipped", str(e)
        except Exception as e:  # a probe that cannot set itself up
            verdict, why = "defect", f"probe failed: {e!r}"
        counts[verdict] += 1
        line = f"{verdict.upper():7} {item}. {name} ({time.monotonic() - t0:.1f} s)"
        print(line + (f": {why}" if why else ""), flush=True)
    probes = counts["clean"] + counts["defect"]
    print(f"probes {probes}, clean {counts['clean']}, defects {counts['defect']}"
          f"{', skipped %d' % counts['skipped'] if counts['skipped'] else ''}"
          f" ({time.monotonic() - start:.0f} s)")
    if a.keep:
        print(f"work folder: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if counts["defect"] else 0


if __name__ == "__main__":
    sys.exit(main())
