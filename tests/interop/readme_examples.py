"""Runs a README section's examples, so they cannot go stale: the ```sh blocks' commands (raspc
replaced by the binary under test), then every ```python block in order, each in a fresh
interpreter, in one temporary folder; a ```text block right after a python block is its exact
expected output. The section is "## Using a compiled model elsewhere" unless --section names
another heading; --pythonpath puts the built raspc package on the examples' path (exit 77,
skipped, where the module is not built there).

    python readme_examples.py README.md RASPC_BINARY PROGRAMS_DIR [--section HEADING] [--pythonpath DIR]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

SECTION = "## Using a compiled model elsewhere"
SKIPPED = 77


def blocks(readme, section):
    """The fenced blocks between the heading and the next heading of its level or above."""
    lines = open(readme, encoding="utf-8").read().splitlines(keepends=True)
    if section + "\n" not in lines:
        raise SystemExit(f"{readme}: no heading {section!r}")
    level = len(section) - len(section.lstrip("#"))
    body, fenced = [], False
    for line in lines[lines.index(section + "\n") + 1:]:
        heading = line.split(" ", 1)[0]
        if not fenced and heading and set(heading) == {"#"} and len(heading) <= level:
            break  # a heading, not a comment line inside a code block
        fenced ^= line.startswith("```")
        body.append(line)
    return re.findall(r"```(\w+)\n(.*?)```", "".join(body), re.S)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("readme")
    parser.add_argument("raspc")
    parser.add_argument("programs")
    parser.add_argument("--section", default=SECTION)
    parser.add_argument("--pythonpath")
    args = parser.parse_args()
    raspc, programs = os.path.abspath(args.raspc), os.path.abspath(args.programs)
    env = dict(os.environ)
    if args.pythonpath:
        package = os.path.join(args.pythonpath, "raspc")
        if not os.path.isdir(package) or not any(name.startswith("_raspc") for name in os.listdir(package)):
            print(f"skipped: the raspc module is not built in {package}")
            return SKIPPED
        env["PYTHONPATH"] = os.path.abspath(args.pythonpath) + os.pathsep + env.get("PYTHONPATH", "")
    found = blocks(args.readme, args.section)
    failures = 0
    with tempfile.TemporaryDirectory(prefix="raspc-readme-") as work:
        os.symlink(programs, os.path.join(work, "programs"))
        # trust_remote_code copies an export's model class into transformers' module cache: this one.
        env["HF_MODULES_CACHE"] = os.path.join(work, "hf-modules")
        for i, (kind, body) in enumerate(found):
            if kind == "sh":
                for line in body.strip().splitlines():
                    command = line.split()
                    assert command[0] == "raspc", line
                    r = subprocess.run([raspc] + command[1:], cwd=work, capture_output=True, text=True)
                    if r.returncode != 0:
                        print(f"FAILED: {line}\n{r.stderr}")
                        return 1
            elif kind == "python":
                r = subprocess.run([sys.executable, "-c", body], cwd=work, capture_output=True, text=True, env=env)
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
    sys.exit(main())
