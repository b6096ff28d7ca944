#!/usr/bin/env bash
# Checks that `pip install .` works: installs the package into a throwaway venv (made from
# Debian's python3, seeing its numpy and pytest) and runs the API tests against the installed
# copy instead of the build folder. Needs the packages of scripts/setup.sh; pip fetches only
# the build backend (scikit-build-core) from PyPI. Not part of the test suite (it downloads).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install -q "$repo"
cd "$work"  # so that `import raspc` cannot find the source tree
"$work/venv/bin/python" -c 'import raspc, sys; assert raspc.__file__.startswith(sys.prefix), raspc.__file__'
RASPC_BINARY=${RASPC_BINARY:-$repo/build/raspc} RASPC_SOURCE_DIR="$repo" \
  "$work/venv/bin/python" -m pytest -q -p no:cacheprovider "$repo/tests/python/test_api.py"
