#!/usr/bin/env python3
"""Unpacks Debian packages into a folder without dpkg (a GPU machine may
have none, and must not have its own package database touched), and lists
what each one holds, for scripts/gpu_report/setup.sh.

  undeb.py DEST PKG.deb...   unpacks each package's data into DEST and
                             prints one line per file or link it holds:
                             "PACKAGE PATH" (PATH relative to DEST)

A .deb is an ar archive holding debian-binary, control.tar.* and
data.tar.* (Debian 12 compresses it with xz, which Python reads).

Nothing is written outside DEST (issue 36: a data.tar holding
../../../../../tmp/x wrote /tmp/x). Each member is checked before anything
of its package is extracted: its path, resolved through the links already
in DEST, must stay in DEST; a link's target too (an absolute target, as
zlib1g-dev's libz.so has, names a path of the package's own root: it
becomes a relative link within DEST); devices and FIFOs are refused, and
set-user/group-ID bits dropped. Python's "data" extraction filter, where
this Python has one (3.12, and 3.8.17 / 3.9.17 / 3.10.12 / 3.11.4 on), then
checks the same again as the package is extracted.

A package that is truncated or corrupt, or holds a member that would leave
DEST, ends the run with exit status 1 and one line on stderr naming the
package and the problem; no traceback."""
import io
import lzma
import os
import sys
import tarfile
import zlib


class BadPackage(Exception):
    """A package that cannot be unpacked safely, and why."""


def ar_members(path):
    """(name, bytes) of each member of an ar archive."""
    with open(path, "rb") as f:
        if f.read(8) != b"!<arch>\n":
            raise BadPackage("not a Debian package (no ar archive header)")
        while True:
            head = f.read(60)
            if not head:
                return
            if len(head) < 60 or head[58:60] != b"`\n":
                raise BadPackage(f"truncated or corrupt: a member header at byte {f.tell() - len(head)} "
                                 f"is {'cut off' if len(head) < 60 else 'malformed'}")
            name = head[:16].decode(errors="replace").strip().rstrip("/")
            try:
                size = int(head[48:58].decode().strip())
            except ValueError:
                raise BadPackage(f"corrupt: member {name!r} has no size") from None
            data = f.read(size)
            if len(data) < size:
                raise BadPackage(f"truncated: member {name!r} holds {len(data)} of its {size} bytes")
            if size % 2:
                f.read(1)
            yield name, data


def package_name(path):
    base = os.path.basename(path)
    return base.split("_", 1)[0]


def inside(dest, path):
    """path, resolved through the links in dest, is dest or below it."""
    real = os.path.realpath(path)
    return os.path.commonpath([dest, real]) == dest


def check_member(m, dest):
    """Refuses a member that would be written, or link, outside dest
    (resolved, as it exists now); absolute link targets become relative
    ones within dest. Returns the member as it is to be extracted."""
    name = m.name
    target = os.path.join(dest, name)
    if os.path.isabs(name) or not inside(dest, target):
        raise BadPackage(f"member {name!r} would be written outside {dest}")
    if m.ischr() or m.isblk() or m.isfifo() or not (m.isfile() or m.isdir() or m.issym() or m.islnk()):
        raise BadPackage(f"member {name!r} is a device, FIFO or other special file")
    if m.issym():
        link = m.linkname
        if os.path.isabs(link):  # a path of the package's root: relative, within dest
            link = os.path.relpath(os.path.join(dest, link.lstrip("/")),
                                   os.path.dirname(os.path.normpath(target)))
            m.linkname = link
        if not inside(dest, os.path.join(os.path.dirname(os.path.normpath(target)), link)):
            raise BadPackage(f"link {name!r} -> {m.linkname!r} points outside {dest}")
    elif m.islnk():
        if os.path.isabs(m.linkname) or not inside(dest, os.path.join(dest, m.linkname)):
            raise BadPackage(f"hard link {name!r} -> {m.linkname!r} points outside {dest}")
    m.mode &= 0o1777  # no set-user/group-ID bits
    if m.isdir():
        m.mode |= 0o700  # later members go in
    return m


def unpack(deb, dest):
    """Extracts deb's data into dest; returns the member paths."""
    for name, data in ar_members(deb):
        if not name.startswith("data.tar"):
            continue
        try:
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                members = [m for m in tar.getmembers() if m.name not in (".", "./")]
                done = []
                kwargs = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
                for m in members:  # one at a time: each checked against the links before it
                    m = check_member(m, dest)
                    try:
                        tar.extract(m, dest, **kwargs)
                    except OSError as e:
                        raise BadPackage(f"member {m.name!r} could not be written: {e}") from None
                    done.append(m)
                return [os.path.normpath(m.name) for m in done if not m.isdir()]
        except getattr(tarfile, "FilterError", ()) as e:
            raise BadPackage(f"Python's data filter refused a member: {e}") from None
        except (EOFError, tarfile.TarError, lzma.LZMAError, zlib.error) as e:
            what = type(e).__name__
            raise BadPackage(f"its {name} is truncated or corrupt ({what}: {e})") from None
    raise BadPackage("has no data archive (data.tar.*)")


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    dest = os.path.realpath(sys.argv[1])
    os.makedirs(dest, exist_ok=True)
    for deb in sys.argv[2:]:
        try:
            paths = unpack(deb, dest)
        except BadPackage as e:
            print(f"undeb: {deb} ({package_name(deb)}): {e}", file=sys.stderr)
            return 1
        except OSError as e:
            print(f"undeb: {deb} ({package_name(deb)}): {e.strerror or e}", file=sys.stderr)
            return 1
        for path in paths:
            print(package_name(deb), path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
