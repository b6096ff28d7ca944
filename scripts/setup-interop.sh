#!/usr/bin/env bash
# Makes the Python venv that the `interop` tests (ctest -L interop) run in: the peers raspc's
# exports must load into, unmodified, at pinned versions. Never needed by the C++ build or the
# default suite; those tests exit 77 (skipped) where the venv is absent.
#
#   ./scripts/setup-interop.sh            # makes .interop-venv/ and .interop-venv-tl2/ in the repository root
#   RASPC_INTEROP_VENV=/path ./scripts/setup-interop.sh   # (the second is then /path-tl2)
#
# TransformerLens 2.x (HookedTransformer) and 4.x (TransformerBridge) cannot share a venv, and the
# TransformerLens loader raspc ships supports both, so the 2.x one gets a venv of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${RASPC_INTEROP_VENV:-$PWD/.interop-venv}
venv_tl2=$venv-tl2
if ! /usr/bin/python3 -c 'import ensurepip, venv' 2>/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
fi
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
[ -x "$venv_tl2/bin/python" ] || /usr/bin/python3 -m venv "$venv_tl2"
"$venv/bin/pip" install -q --upgrade pip
# The CPU wheel index is not reachable here, so torch comes from PyPI as it is.
"$venv/bin/pip" install -q \
  torch==2.15.0 \
  transformers==5.23.0 \
  transformer-lens==4.3.0 \
  gguf==0.19.0 \
  safetensors==0.8.0 \
  tracr-pypi==1.0.0 \
  datasets==5.2.0 \
  pyarrow==26.0.1 \
  accelerate==1.16.0 \
  pytest
# TL 2.18 needs transformers 4 and numpy 1; datasets 3+ and pyarrow 18+ need numpy 2.
"$venv_tl2/bin/pip" install -q --upgrade pip
"$venv_tl2/bin/pip" install -q \
  torch==2.15.0 \
  transformer-lens==2.18.0 \
  transformers==4.57.6 \
  numpy==1.26.4 \
  datasets==2.21.0 \
  pyarrow==17.0.0 \
  safetensors==0.8.0
"$venv/bin/python" -c 'import torch, transformers, transformer_lens, gguf, safetensors, datasets, accelerate; print("interop venv ready:", "'"$venv"'", "torch", torch.__version__, "transformers", transformers.__version__)'
