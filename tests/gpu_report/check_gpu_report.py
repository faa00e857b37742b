#!/usr/bin/env python3
"""The GPU report's scripts (scripts/gpu_report/) on packages made here,
without a GPU, root or a network (issue 36, items 10 to 13):

  undeb      members that would leave the prefix (../, absolute names,
             links and hard links pointing out, through a link) are
             refused and nothing lands outside; absolute link targets
             become links within the prefix; a truncated or corrupt .deb
             is one line naming the package, never a traceback
  setup      runs with LD_LIBRARY_PATH unset; a prefix with spaces gives an
             env.sh that bash sources and a clinfo wrapper that runs;
             --debs at a folder that is not there, and a broken package,
             are errors that say why, in setup.txt too
  report     after such a failure the report gives the reason, and no
             "found by None"

  check_gpu_report.py WORKDIR
Python's standard library only; prints "ok" or "FAIL" per check (each
check on files of its own), exits 1 when any failed."""
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GPU = os.path.join(ROOT, "scripts", "gpu_report")
UNDEB = os.path.join(GPU, "undeb.py")


class Failed(Exception):
    pass


def fail(msg):
    raise Failed(msg)


VERBOSE = True  # scripts/probe.py runs the checks quietly


def ok(msg):
    if VERBOSE:
        print(f"ok: {msg}", flush=True)


# --- packages --------------------------------------------------------------

def ar_member(name, data):
    head = f"{name:<16}{0:<12}{0:<6}{0:<6}{'100644':<8}{len(data):<10}`\n".encode()
    return head + data + (b"\n" if len(data) % 2 else b"")


def make_deb(path, members):
    """A .deb whose data.tar.xz holds members: (name, kind, payload) with
    kind "file" (payload: bytes), "dir", "sym" or "hard" (payload: target),
    "fifo"."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:xz") as tar:
        for name, kind, payload in members:
            t = tarfile.TarInfo(name)
            t.mode = 0o755 if kind in ("dir", "file") else 0o777
            if kind == "file":
                t.size = len(payload)
                tar.addfile(t, io.BytesIO(payload))
                continue
            t.type = {"dir": tarfile.DIRTYPE, "sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE,
                      "fifo": tarfile.FIFOTYPE}[kind]
            if kind in ("sym", "hard"):
                t.linkname = payload
            tar.addfile(t)
    control = io.BytesIO()
    with tarfile.open(fileobj=control, mode="w:xz"):
        pass
    with open(path, "wb") as f:
        f.write(b"!<arch>\n" + ar_member("debian-binary", b"2.0\n")
                + ar_member("control.tar.xz", control.getvalue())
                + ar_member("data.tar.xz", buf.getvalue()))


def run(cmd, env=None, unset=(), timeout=300):
    e = dict(os.environ)
    e.update(env or {})
    for k in unset:
        e.pop(k, None)
    return subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=timeout)


# --- undeb -----------------------------------------------------------------

def undeb(work, name, members):
    """Runs undeb.py on a package holding members into a fresh DEST beside an
    'outside' folder; returns (result, dest, outside)."""
    base = tempfile.mkdtemp(prefix=name + "-", dir=work)
    dest, outside = os.path.join(base, "dest"), os.path.join(base, "outside")
    os.makedirs(outside)
    deb = os.path.join(base, f"{name}_1.0_amd64.deb")
    make_deb(deb, members)
    return run([sys.executable, UNDEB, dest, deb]), dest, outside


def refused(work, name, members, needle, escape=None):
    r, dest, outside = undeb(work, name, members)
    if r.returncode != 1:
        fail(f"undeb took {name} (exit {r.returncode}; {r.stdout.strip()[:200]})")
    if "Traceback" in r.stderr or name not in r.stderr or needle not in r.stderr:
        fail(f"undeb's refusal of {name} does not name the package and '{needle}':\n{r.stderr}")
    if os.listdir(outside) or (escape and os.path.lexists(escape)):
        fail(f"{name}: something was written outside the prefix: {os.listdir(outside)}")
    ok(f"undeb refuses {name}: {r.stderr.strip()}")


def check_undeb(work):
    marker = os.path.join(tempfile.gettempdir(), f"clrt-undeb-escape-{os.getpid()}")
    up = "../../../../../../../../../.." + marker  # issue 36's member, to a marker of ours
    try:
        refused(work, "dotdot", [("./usr/bin/x", "file", b"x"), (up, "file", b"owned")], "outside",
                marker)
    finally:
        if os.path.lexists(marker):
            os.remove(marker)
    refused(work, "sibling", [("../outside/x", "file", b"owned")], "outside")
    refused(work, "absname", [("/" + os.path.join(work.lstrip("/"), "abs-x"), "file", b"x")],
            "outside", os.path.join(work, "abs-x"))
    refused(work, "symout", [("./lnk", "sym", "../outside")], "points outside")
    refused(work, "symabsout", [("./lnk", "sym", "/../../../../outside")], "points outside")
    refused(work, "through", [("./a", "sym", "."), ("./a/../../outside/x", "file", b"x")],
            "outside")
    refused(work, "hardout", [("./h", "hard", "../outside/y")], "outside")
    refused(work, "fifo", [("./f", "fifo", None)], "special file")

    # A package as Debian's are: files, a relative link, an absolute one.
    r, dest, _ = undeb(work, "good", [
        ("./usr", "dir", None), ("./usr/lib", "dir", None),
        ("./usr/lib/libz.so.1.2.13", "file", b"lib"),
        ("./usr/lib/libz.so.1", "sym", "libz.so.1.2.13"),
        ("./usr/lib/libz.so", "sym", "/usr/lib/libz.so.1.2.13"),
        ("./usr/bin/tool", "file", b"#!/bin/sh\n")])
    if r.returncode != 0:
        fail(f"undeb refused a good package: {r.stderr}")
    listed = sorted(r.stdout.split("\n")[:-1])
    want = sorted(f"good {p}" for p in ["usr/lib/libz.so.1.2.13", "usr/lib/libz.so.1",
                                         "usr/lib/libz.so", "usr/bin/tool"])
    if listed != want:
        fail(f"undeb listed {listed}, want {want}")
    link = os.path.join(dest, "usr/lib/libz.so")
    if os.path.isabs(os.readlink(link)) or os.path.realpath(link) != os.path.realpath(
            os.path.join(dest, "usr/lib/libz.so.1.2.13")):
        fail(f"the absolute link became {os.readlink(link)}, not a link within the prefix")
    ok("undeb unpacks a good package; an absolute link points within the prefix")


def check_undeb_truncated(work):
    """Truncated and corrupt packages: one line naming the package."""
    base = tempfile.mkdtemp(prefix="cut-", dir=work)
    deb = os.path.join(base, "libcut1_2.0_amd64.deb")
    make_deb(deb, [("./usr/lib/libcut.so", "file", os.urandom(50000))])
    size = os.path.getsize(deb)
    for cut in (size // 2, size - 40, 30):
        with open(deb, "rb") as f:
            blob = f.read()
        with open(deb + ".cut", "wb") as f:
            f.write(blob[:cut])
        r = run([sys.executable, UNDEB, os.path.join(base, "dest"), deb + ".cut"])
        lines = r.stderr.strip().splitlines()
        if r.returncode != 1 or "Traceback" in r.stderr or len(lines) != 1 or \
                "libcut1" not in lines[0] or "truncated" not in lines[0]:
            fail(f"a .deb cut at {cut} of {size} bytes: exit {r.returncode}, stderr:\n{r.stderr}")
    # The ar archive whole, its data.tar.xz cut short inside.
    with open(deb, "rb") as f:
        blob = f.read()
    at = blob.index(b"data.tar.xz")
    data = blob[at + 60:at + 60 + int(blob[at + 48:at + 58])]
    with open(deb + ".xz", "wb") as f:
        f.write(blob[:at] + ar_member("data.tar.xz", data[:len(data) // 2]))
    r = run([sys.executable, UNDEB, os.path.join(base, "dest"), deb + ".xz"])
    if r.returncode != 1 or "Traceback" in r.stderr or "libcut1" not in r.stderr or \
            "data.tar.xz is truncated or corrupt" not in r.stderr:
        fail(f"a .deb whose data.tar.xz is cut: exit {r.returncode}, stderr:\n{r.stderr}")
    with open(deb + ".junk", "wb") as f:
        f.write(b"this is not a package")
    r = run([sys.executable, UNDEB, os.path.join(base, "dest"), deb + ".junk"])
    if r.returncode != 1 or "Traceback" in r.stderr or "not a Debian package" not in r.stderr:
        fail(f"a file that is not a .deb: exit {r.returncode}, stderr:\n{r.stderr}")
    ok(f"undeb names truncated and corrupt packages: {lines[0]}")


# --- setup.sh --------------------------------------------------------------

def debs_folder(work, name, extra=()):
    """A packages folder: a clinfo that prints its arguments and its
    LD_LIBRARY_PATH, a run-time library (as ocl-icd-libopencl1's), a
    MANIFEST.txt; extra: more (name, members)."""
    d = os.path.join(work, name)
    os.makedirs(d)
    clinfo = b'#!/bin/sh\nprintf "arg:%s\\n" "$@"\necho "ld:$LD_LIBRARY_PATH"\n'
    make_deb(os.path.join(d, "clinfo_1.0_amd64.deb"),
             [("./usr", "dir", None), ("./usr/bin", "dir", None), ("./usr/bin/clinfo", "file", clinfo),
              ("./usr/lib", "dir", None), ("./usr/lib/x86_64-linux-gnu", "dir", None)])
    multi = "./usr/lib/x86_64-linux-gnu"
    make_deb(os.path.join(d, "ocl-icd-libopencl1_2.3.1-1_amd64.deb"),
             [("./usr", "dir", None), ("./usr/lib", "dir", None), (multi, "dir", None),
              (multi + "/libOpenCL.so.1.0.0", "file", b"\x7fELF"),
              (multi + "/libOpenCL.so.1", "sym", "libOpenCL.so.1.0.0")])
    for pkg, members in extra:
        make_deb(os.path.join(d, f"{pkg}_1.0_amd64.deb"), members)
    with open(os.path.join(d, "MANIFEST.txt"), "w") as f:
        f.write("clinfo 1.0 100\nocl-icd-libopencl1 2.3.1-1 100\n")
    return d


def setup(debs, prefix, **kw):
    return run(["bash", os.path.join(GPU, "setup.sh"), debs, prefix], **kw)


def setup_txt(prefix):
    with open(os.path.join(prefix, "setup.txt")) as f:
        return f.read()


def check_setup_unset_ld_path(work):
    """Item 10: LD_LIBRARY_PATH unset (set -u killed find_nvidia)."""
    debs = debs_folder(work, "debs-unset")
    prefix = os.path.join(work, "prefix-unset")
    r = setup(debs, prefix, unset=("LD_LIBRARY_PATH",))
    if r.returncode not in (0, 3) or "unbound variable" in r.stderr:
        fail(f"setup.sh without LD_LIBRARY_PATH: exit {r.returncode}\n{r.stderr[-2000:]}")
    if "opencl_library" not in setup_txt(prefix) or \
            not os.path.islink(os.path.join(prefix, "lib", "libOpenCL.so.1")):
        fail(f"setup.sh without LD_LIBRARY_PATH did not look for the OpenCL library:\n"
             f"{setup_txt(prefix)}")
    ok(f"setup.sh runs with LD_LIBRARY_PATH unset (exit {r.returncode})")


def check_setup_spaces(work):
    """Item 11: a prefix with spaces (and a quote)."""
    debs = debs_folder(work, "debs-spaces")
    prefix = os.path.join(work, "sp 2", "it's a prefix")
    r = setup(debs, prefix, env={"LD_LIBRARY_PATH": "/nonexistent/lib"})
    if r.returncode not in (0, 3):
        fail(f"setup.sh with a prefix with spaces: exit {r.returncode}\n{r.stderr[-2000:]}")
    env = run(["bash", "-c", 'set -eu; source "$1/env.sh"; printf "%s\\n" "$CLRT_GPU_PREFIX" '
               '"$OCL_ICD_VENDORS" "${LD_LIBRARY_PATH%%:*}" "${PATH%%:*}"', "-", prefix],
              env={"LD_LIBRARY_PATH": "/x"})
    want = [prefix, f"{prefix}/vendors", f"{prefix}/lib", f"{prefix}/bin"]
    if env.returncode != 0 or env.stdout.split("\n")[:4] != want:
        fail(f"env.sh under a prefix with spaces: exit {env.returncode}, got "
             f"{env.stdout.splitlines()}, want {want}\n{env.stderr}")
    ok("env.sh under a prefix with spaces sets each path whole")
    c = run([os.path.join(prefix, "bin", "clinfo"), "-l", "two words"], env={"LD_LIBRARY_PATH": "/x"})
    out = c.stdout.splitlines()
    if c.returncode != 0 or out[:2] != ["arg:-l", "arg:two words"] or \
            not out[2].startswith(f"ld:{prefix}/lib:") or not out[2].endswith(":/x"):
        fail(f"the clinfo wrapper under a prefix with spaces: exit {c.returncode}\n{c.stdout}{c.stderr}")
    ok("the clinfo wrapper under a prefix with spaces runs clinfo")


def check_setup_errors(work):
    """Item 13: --debs at a folder that is not there; a truncated package
    among good ones."""
    prefix = os.path.join(work, "prefix-nodebs")
    missing = os.path.join(work, "nonexistent")
    r = setup(missing, prefix)
    if r.returncode != 1 or "does not exist" not in r.stderr or missing not in setup_txt(prefix):
        fail(f"setup.sh --debs {missing}: exit {r.returncode}\n{r.stderr}\nsetup.txt: "
             f"{setup_txt(prefix) if os.path.exists(os.path.join(prefix, 'setup.txt')) else '-'}")
    ok("setup.sh says a packages folder is missing, in setup.txt too")
    bad = debs_folder(work, "debs-cut")
    deb = os.path.join(bad, "libbroken_2.0_amd64.deb")
    make_deb(deb, [("./usr/lib/libbroken.so", "file", os.urandom(40000))])
    with open(deb, "r+b") as f:
        f.truncate(os.path.getsize(deb) // 2)
    prefix = os.path.join(work, "prefix-cut")
    r = setup(bad, prefix)
    text = setup_txt(prefix)
    if r.returncode != 1 or "Traceback" in r.stderr or "libbroken" not in text or \
            "truncated" not in text:
        fail(f"setup.sh with a truncated package: exit {r.returncode}\n{r.stderr}\nsetup.txt: {text}")
    ok(f"setup.sh names a truncated package: {text.strip()}")


# --- the report --------------------------------------------------------------

def check_report(work):
    """gpu_report.sh setup with --debs at a missing folder: the report says
    why, in the stages table and in the machine section."""
    out, prefix = os.path.join(work, "report"), os.path.join(work, "report prefix")
    r = run([os.path.join(ROOT, "scripts", "gpu_report.sh"), "--debs",
             os.path.join(work, "nonexistent"), "--out", out, "--prefix", prefix,
             "--stage-seconds", "120", "setup"])
    path = os.path.join(out, "report.md")
    if not os.path.exists(path):
        fail(f"gpu_report.sh setup wrote no report (exit {r.returncode})\n{r.stderr[-2000:]}")
    with open(path) as f:
        md = f.read()
    setup_row = next((line for line in md.splitlines() if line.startswith("| setup |")), "")
    if "failed (exit 1)" not in setup_row or "does not exist" not in setup_row:
        fail(f"the report's setup row gives no reason: '{setup_row}'\n{md}")
    if "None" in md or "Setup error: the packages folder" not in md:
        fail(f"the report says 'None' or lacks the setup error:\n{md}")
    ok(f"the report gives setup's reason: {setup_row}")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    work = os.path.abspath(sys.argv[1])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failed = 0
    for check in (check_undeb, check_undeb_truncated, check_setup_unset_ld_path,
                  check_setup_spaces, check_setup_errors, check_report):
        try:
            check(work)
        except (Failed, OSError, subprocess.SubprocessError) as e:
            failed += 1
            print(f"FAIL: {check.__name__}: {e}", flush=True)
    if failed:
        sys.exit(f"check_gpu_report: {failed} checks failed")
    print("check_gpu_report: all checks passed")


if __name__ == "__main__":
    main()
