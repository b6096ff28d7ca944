#!/usr/bin/env bash
# Runs an interop check in the interop venv: run.sh SOURCE_DIR SCRIPT ARGS... Exits 77 (skipped)
# where the venv has not been made (scripts/setup-interop.sh). RASPC_INTEROP_VENV_VARIANT=-tl2
# picks the TransformerLens 2.x venv beside it.
set -euo pipefail
source_dir=$1
shift
venv=${RASPC_INTEROP_VENV:-$source_dir/.interop-venv}${RASPC_INTEROP_VENV_VARIANT:-}
if [ ! -x "$venv/bin/python" ]; then
  echo "skipped: no interop venv at $venv (make it with scripts/setup-interop.sh)"
  exit 77
fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec "$venv/bin/python" "$@"
