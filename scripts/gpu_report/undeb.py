#!/usr/bin/env python3
"""Unpacks Debian packages into a folder without dpkg (a GPU machine may
have none, and must not have its own package database touched), and lists
what each one holds, for scripts/gpu_report/setup.sh.

  undeb.py DEST PKG.deb...   unpacks each package's data into DEST and
                             prints one line per file or link it holds:
                             "PACKAGE PATH" (PATH relative to DEST)

A .deb is an ar archive holding debian-binary, control.tar.* and
data.tar.* (Debian 12 compresses it with xz, which Python reads). Links keep
their targets as packaged, absolute ones too: setup.sh points those that
name a file of the prefix into it."""
import os
import sys
import tarfile


def ar_members(path):
    """(name, bytes) of each member of an ar archive."""
    with open(path, "rb") as f:
        if f.read(8) != b"!<arch>\n":
            raise SystemExit(f"undeb: {path} is not a Debian package")
        while True:
            head = f.read(60)
            if len(head) < 60:
                return
            name = head[:16].decode().strip().rstrip("/")
            size = int(head[48:58].decode().strip())
            data = f.read(size)
            if size % 2:
                f.read(1)
            yield name, data


def package_name(path):
    base = os.path.basename(path)
    return base.split("_", 1)[0]


def unpack(deb, dest):
    """Extracts deb's data into dest; returns the member paths."""
    import io
    for name, data in ar_members(deb):
        if name.startswith("data.tar"):
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                members = [m for m in tar.getmembers() if m.name not in (".", "./")]
                kwargs = {"filter": "fully_trusted"} if hasattr(tarfile, "fully_trusted_filter") else {}
                tar.extractall(dest, members=members, **kwargs)
                return [os.path.normpath(m.name) for m in members if not m.isdir()]
    raise SystemExit(f"undeb: {deb} has no data archive")


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    dest = sys.argv[1]
    os.makedirs(dest, exist_ok=True)
    for deb in sys.argv[2:]:
        for path in unpack(deb, dest):
            print(package_name(deb), path)


if __name__ == "__main__":
    main()
