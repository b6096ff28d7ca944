#!/usr/bin/env bash
# Runs an interop check in the interop venv: run.sh SOURCE_DIR SCRIPT ARGS... Exits 77 (skipped)
# where the venv has not been made (scripts/setup-interop.sh).
set -euo pipefail
source_dir=$1
shift
venv=${RASPC_INTEROP_VENV:-$source_dir/.interop-venv}
if [ ! -x "$venv/bin/python" ]; then
  echo "skipped: no interop venv at $venv (make it with scripts/setup-interop.sh)"
  exit 77
fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec "$venv/bin/python" "$@"
