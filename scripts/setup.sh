#!/usr/bin/env bash
# Installs what raspc needs from Debian's packages (when missing) and builds it in ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
# python3-dev, pybind11-dev, python3-pytest: the Python module and its tests; clang-14 and
# libclang-rt-14-dev: the libFuzzer build of fuzz/ (ctest -L fuzz); chromium: the test that opens
# raspc view's pages (ctest -L view).
packages=(build-essential cmake libeigen3-dev catch2 libcli11-dev nlohmann-json3-dev python3 python3-numpy
          python3-dev pybind11-dev python3-pytest clang-14 libclang-rt-14-dev chromium)
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
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs"
