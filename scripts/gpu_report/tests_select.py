#!/usr/bin/env python3
"""Which tests of the suite cannot run on this machine, and why, for the
tests stage of scripts/gpu_report.sh: prints "NAME reason" per test to
leave out (ctest -E), from ctest's own list of tests.

  tests_select.py TESTS.json --devices N --venv-python 0|1 --system-loader 0|1
    TESTS.json     ctest --show-only=json-v1
    --devices      OpenCL devices clrt sees as a multi-device suite would
                   (POCL_DEVICES="pthread pthread"); below 2, the suites
                   that need two devices are left out
    --venv-python  whether the project's Python (.venv/bin/python, which
                   the stage points at python3 when that has the packages of
                   scripts/requirements.txt) is there
    --system-loader  whether the system's linker finds an OpenCL loader
                   (libOpenCL.so.1) without LD_LIBRARY_PATH"""
import argparse
import json


def properties(test):
    return {p["name"]: p["value"] for p in test.get("properties", [])}


def reason(test, devices, venv_python, system_loader):
    name, command = test["name"], " ".join(test.get("command", []))
    labels = properties(test).get("LABELS", [])
    if "oclgrind" in labels:
        return None  # never run here (ctest -LE oclgrind)
    if name.endswith("_multi") and devices < 2:
        return f"needs two OpenCL devices ({devices} here)"
    if "run_install_test.cmake" in command and not system_loader:
        return ("runs the installed programs without LD_LIBRARY_PATH, and this machine's OpenCL "
                "loader is the private prefix's")
    if "run_python.sh" in command and not venv_python:
        return ("needs a python3 with torch, torchvision, numpy, safetensors and tensorboard "
                "(the tests' Python environment, .venv)")
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tests")
    ap.add_argument("--devices", type=int, required=True)
    ap.add_argument("--venv-python", type=int, required=True)
    ap.add_argument("--system-loader", type=int, required=True)
    a = ap.parse_args()
    with open(a.tests) as f:
        tests = json.load(f)["tests"]
    for t in tests:
        why = reason(t, a.devices, a.venv_python, a.system_loader)
        if why:
            print(t["name"], why)


if __name__ == "__main__":
    main()
