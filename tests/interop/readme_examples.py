"""Runs the README's "Using a compiled model elsewhere" examples, so they cannot go stale:
the ```sh block's commands (raspc replaced by the binary under test), then every ```python block
in order, each in a fresh interpreter, in one temporary folder; a ```text block right after a
python block is its exact expected output.

    python readme_examples.py README.md RASPC_BINARY PROGRAMS_DIR
"""
import os
import re
import subprocess
import sys
import tempfile

SECTION = "## Using a compiled model elsewhere"


def blocks(readme):
    text = open(readme, encoding="utf-8").read()
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    section = text[start:end if end >= 0 else len(text)]
    return re.findall(r"```(\w+)\n(.*?)```", section, re.S)


def main(readme, raspc, programs):
    raspc, programs = os.path.abspath(raspc), os.path.abspath(programs)
    found = blocks(readme)
    failures = 0
    with tempfile.TemporaryDirectory(prefix="raspc-readme-") as work:
        os.symlink(programs, os.path.join(work, "programs"))
        for i, (kind, body) in enumerate(found):
            if kind == "sh":
                for line in body.strip().splitlines():
                    args = line.split()
                    assert args[0] == "raspc", line
                    r = subprocess.run([raspc] + args[1:], cwd=work, capture_output=True, text=True)
                    if r.returncode != 0:
                        print(f"FAILED: {line}\n{r.stderr}")
                        return 1
            elif kind == "python":
                r = subprocess.run([sys.executable, "-c", body], cwd=work, capture_output=True, text=True)
                expected = found[i + 1][1] if i + 1 < len(found) and found[i + 1][0] == "text" else None
                ok = r.returncode == 0 and (expected is None or r.stdout == expected)
                failures += not ok
                print(("ok" if ok else "FAILED") + f": python example {i}")
                if not ok:
                    print(f"--- stdout\n{r.stdout}--- expected\n{expected}--- stderr\n{r.stderr[-3000:]}")
    python_blocks = sum(1 for kind, _ in found if kind == "python")
    print(f"{python_blocks - failures} passed, {failures} failed")
    return 1 if failures or python_blocks == 0 else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
