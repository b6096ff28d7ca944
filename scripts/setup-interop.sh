#!/usr/bin/env bash
# Makes the Python venv that the `interop` tests (ctest -L interop) run in: the peers raspc's
# exports must load into, unmodified, at pinned versions. Never needed by the C++ build or the
# default suite; those tests exit 77 (skipped) where the venv is absent.
#
#   ./scripts/setup-interop.sh            # makes .interop-venv/ in the repository root
#   RASPC_INTEROP_VENV=/path ./scripts/setup-interop.sh
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${RASPC_INTEROP_VENV:-$PWD/.interop-venv}
if ! /usr/bin/python3 -c 'import ensurepip, venv' 2>/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
fi
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
# The CPU wheel index is not reachable here, so torch comes from PyPI as it is.
"$venv/bin/pip" install -q \
  torch==2.15.0 \
  transformers==5.23.0 \
  transformer-lens==4.3.0 \
  gguf==0.19.0 \
  safetensors==0.8.0 \
  tracr-pypi==1.0.0 \
  pytest
"$venv/bin/python" -c 'import torch, transformers, transformer_lens, gguf, safetensors; print("interop venv ready:", "'"$venv"'", "torch", torch.__version__, "transformers", transformers.__version__)'
