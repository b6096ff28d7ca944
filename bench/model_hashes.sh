#!/bin/bash
# Byte-identical models before and after a change to the compiler (issue 40's acceptance):
#
#   bench/model_hashes.sh BASE [NEW]
#
# compiles every program of programs/ in both modes at maximum lengths 5, 8, 16 and 64 (without
# verification: the model file is what is compared) with two raspc binaries and compares the
# SHA-256 of every model file, and the first line of every refusal. BASE and NEW are raspc
# binaries or commits of this repository; a commit is checked out into a temporary worktree and
# its `raspc` target built there (Release, as the build does by default; several minutes on two
# cores). NEW defaults to build/raspc. Prints one line per compile that differs and a summary;
# exits 1 when any differs. From the repository root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: bench/model_hashes.sh BASE [NEW] (raspc binaries or commits)" >&2; exit 1; }
work=$(mktemp -d)
worktrees=()
cleanup() {
  for w in "${worktrees[@]}"; do git -C "$root" worktree remove --force "$w" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# A raspc binary for BASE or NEW: the file itself, or a build of the commit.
binary_of() {
  local what=$1 tag=$2
  if [ -x "$what" ] && [ -f "$what" ]; then realpath "$what"; return; fi
  local commit
  commit=$(git -C "$root" rev-parse --verify "$what^{commit}" 2>/dev/null) ||
    { echo "model_hashes.sh: $what is neither a raspc binary nor a commit" >&2; exit 1; }
  local tree="$work/$tag-tree"
  git -C "$root" worktree add --detach "$tree" "$commit" >/dev/null 2>&1
  worktrees+=("$tree")
  echo "model_hashes.sh: building raspc at ${commit:0:12} in $tree" >&2
  cmake -S "$tree" -B "$tree/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$work/$tag-configure.log" 2>&1 ||
    { cat "$work/$tag-configure.log" >&2; exit 1; }
  cmake --build "$tree/build" --target raspc >"$work/$tag-build.log" 2>&1 || { tail -40 "$work/$tag-build.log" >&2; exit 1; }
  echo "$tree/build/raspc"
}

base=$(binary_of "$1" base)
new=$(binary_of "${2:-$root/build/raspc}" new)

# One line per compile: "program mode length sha256" or "program mode length refused: first line".
hashes() {
  local raspc=$1 out=$2
  for program in "$root"/programs/*.rasp; do
    local name
    name=$(basename "$program" .rasp)
    for mode in bidirectional causal; do
      local flag=""
      [ "$mode" = causal ] && flag=--causal
      for len in 5 8 16 64; do
        local model="$work/model.safetensors"
        rm -f "$model"
        if (cd "$root" && "$raspc" compile "programs/$name.rasp" --max-len "$len" $flag --no-verify -o "$model") \
             >"$work/log" 2>&1; then
          echo "$name $mode $len $(sha256sum "$model" | cut -d' ' -f1)"
        else
          echo "$name $mode $len refused: $(grep -m1 . "$work/log")"
        fi
      done
    done
  done >"$out"
}

hashes "$base" "$work/base.txt"
hashes "$new" "$work/new.txt"
total=$(wc -l <"$work/base.txt")
models=$(grep -vc refused "$work/base.txt" || true)
if diff <(cat "$work/base.txt") <(cat "$work/new.txt") >"$work/diff"; then
  echo "model_hashes.sh: $total compiles ($models models, $((total - models)) refusals), all identical"
else
  grep '^[<>]' "$work/diff"
  echo "model_hashes.sh: of $total compiles, $(grep -c '^<' "$work/diff") differ" >&2
  exit 1
fi
