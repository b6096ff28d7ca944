"""Runs pytest on raspc's Python tests against the package in the build folder, for CTest.

    run_pytest.py PACKAGE_PARENT [--venv] TEST_FILE...

Exits 77 (skipped) when pytest, the built module or (with --venv) the interop venv is absent,
and turns pytest's "no tests collected" (5) into a failure, so a test file that lost its tests
never passes silently. pytest's cache is off: tests write only inside their own temp folders.
With --venv the tests run in the interop venv's Python ($RASPC_INTEROP_VENV, else
<repo>/.interop-venv), which must be the same Python version the module was built for.
"""

import os
import subprocess
import sys

SKIPPED = 77
NO_TESTS_COLLECTED = 5


def interop_python(repo):
    venv = os.environ.get("RASPC_INTEROP_VENV") or os.path.join(repo, ".interop-venv")
    python = os.path.join(venv, "bin", "python")
    return python if os.access(python, os.X_OK) else None


def main(argv):
    package_parent, rest = argv[1], argv[2:]
    use_venv = rest and rest[0] == "--venv"
    tests = rest[1:] if use_venv else rest
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    package = os.path.join(package_parent, "raspc")
    built = os.path.isdir(package) and any(name.startswith("_raspc") for name in os.listdir(package))
    if not built:
        print(f"skipped: the raspc module is not built in {package}")
        return SKIPPED
    python = sys.executable
    if use_venv:
        python = interop_python(repo)
        if python is None:
            print("skipped: no interop venv (set RASPC_INTEROP_VENV or run scripts/setup-interop.sh)")
            return SKIPPED
    probe = subprocess.run([python, "-c", "import pytest"], capture_output=True)
    if probe.returncode != 0:
        print(f"skipped: {python} has no pytest (Debian: python3-pytest)")
        return SKIPPED
    env = dict(os.environ)
    env["PYTHONPATH"] = package_parent + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", os.path.dirname(tests[0])]
    code = subprocess.run(command + tests, env=env).returncode
    if code == NO_TESTS_COLLECTED:
        print("error: pytest collected no tests")
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
