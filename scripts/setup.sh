#!/usr/bin/env bash
# Installs what raspc needs from Debian's packages (when missing) and builds it in ./build: every
# target, or only those named (./scripts/setup.sh raspc builds the command line alone, as demo.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."
# libgmp-dev: exact numbers of any size (language/value.hpp). python3-dev, pybind11-dev, python3-pytest: the Python module and its tests; clang-14 and
# libclang-rt-14-dev: the libFuzzer build of fuzz/ (ctest -L fuzz); chromium: the test that opens
# raspc view's pages (ctest -L view); python3-nbclient, python3-ipykernel, jupyter-nbconvert: the tests
# that execute docs/tutorial.ipynb and open it, rendered, in Chromium (ctest -L python, ctest -L view);
# python3-tqdm: raspc.compile's progress bar (and its test).
packages=(build-essential cmake ninja-build libeigen3-dev catch2 libcli11-dev nlohmann-json3-dev libgmp-dev python3 python3-numpy
          python3-dev pybind11-dev python3-pytest clang-14 libclang-rt-14-dev chromium
          python3-nbclient python3-ipykernel jupyter-nbconvert python3-tqdm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi
jobs=$(nproc)
# Ninja for a new build folder: it starts a target's compiles before the libraries it links are
# built, which keeps both cores busy (make waits target by target). A folder already configured
# keeps its generator.
generator=()
[[ -e build/CMakeCache.txt ]] || ! command -v ninja >/dev/null || generator=(-G Ninja)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${generator[@]}"
targets=()
for target in "$@"; do targets+=(--target "$target"); done
cmake --build build -j"$jobs" "${targets[@]}"
