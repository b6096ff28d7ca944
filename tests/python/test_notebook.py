#!/usr/bin/env python3
"""docs/tutorial.ipynb executed as a reader executes it, its printed outputs compared with the stored ones.

    test_notebook.py PACKAGE_PARENT SOURCE_DIR [--update]

The notebook runs with nbclient in an empty temporary folder, in a kernel of this very interpreter
(sys.executable) that imports raspc from PACKAGE_PARENT and finds programs/ through
RASPC_SOURCE_DIR=SOURCE_DIR. Every cell must run without an error, and every code cell must print
exactly what the stored notebook shows (stream text and text/plain; the masks are below, each
with its reason). The cell tagged `raspc-view` must show Model.view's page in an iframe. Exits 77
(skipped) where nbclient, nbformat, ipykernel, numpy or the built module are missing.

--update writes the executed notebook over SOURCE_DIR/docs/tutorial.ipynb, less the view's page
(its text/plain summary stays), for whoever changes the notebook or what it prints; the test itself
writes only in its temporary folder.
"""
import difflib
import html
import importlib.util
import json
import os
import re
import sys
import tempfile

SKIP = 77
NOTEBOOK = os.path.join("docs", "tutorial.ipynb")
VIEW_TAG = "raspc-view"  # the cell whose output is Model.view's page
TL_TAG = "transformer-lens"  # the cell whose output depends on whether transformer_lens is installed


def missing(package_parent):
    """Why the notebook cannot run here, or None."""
    for module in ("nbformat", "nbclient", "ipykernel", "numpy"):
        if importlib.util.find_spec(module) is None:
            return f"{sys.executable} has no {module} (Debian: python3-nbclient python3-ipykernel python3-numpy)"
    package = os.path.join(package_parent, "raspc")
    if not os.path.isdir(package) or not any(n.startswith("_raspc") for n in os.listdir(package)):
        return f"the raspc module is not built in {package}"
    return None


def execute(notebook_path, package_parent, source_dir, work):
    """The notebook executed by nbclient with `work` as its working folder; returns (stored, executed).

    Everything Jupyter and IPython would write (the kernelspec, connection files, IPython's
    history) goes under `work`, never into the home folder or the source tree."""
    import nbformat
    from nbclient import NotebookClient

    # A kernelspec of our own: Debian's `python3` kernelspec may start another interpreter than
    # this one (a `python3` earlier on PATH, without numpy), and the module is built for this one.
    kernels = os.path.join(work, "jupyter", "kernels", "raspc-test")
    os.makedirs(kernels)
    with open(os.path.join(kernels, "kernel.json"), "w", encoding="utf-8") as f:
        json.dump({"argv": [sys.executable, "-Xfrozen_modules=off", "-m", "ipykernel_launcher",
                            "-f", "{connection_file}"],
                   "display_name": "raspc test", "language": "python"}, f)
    run = os.path.join(work, "run")
    os.makedirs(run)
    # The kernel inherits this process's environment.
    os.environ.update({
        "JUPYTER_PATH": os.path.join(work, "jupyter"), "JUPYTER_DATA_DIR": os.path.join(work, "jupyter"),
        "JUPYTER_CONFIG_DIR": os.path.join(work, "config"), "JUPYTER_RUNTIME_DIR": os.path.join(work, "runtime"),
        "IPYTHONDIR": os.path.join(work, "ipython"), "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [package_parent, os.environ.get("PYTHONPATH")])),
        "RASPC_SOURCE_DIR": source_dir,
    })
    stored = nbformat.read(notebook_path, as_version=4)
    executed = nbformat.read(notebook_path, as_version=4)
    # record_timing off: no timestamps in the cells' metadata (--update stores what this returns).
    client = NotebookClient(executed, kernel_name="raspc-test", timeout=300, record_timing=False,
                            allow_errors=True, resources={"metadata": {"path": run}})
    client.execute()
    executed.metadata = stored.metadata  # keep the reader's kernelspec, not the test's
    if os.listdir(run):
        raise AssertionError(f"the notebook wrote into its working folder: {sorted(os.listdir(run))}")
    return stored, executed


def printed(cell):
    """What a code cell printed, as one text: streams joined (how a kernel splits a stream into
    messages varies from run to run, what it prints does not), then each result's text/plain."""
    parts = []
    for out in cell.get("outputs", []):
        if out["output_type"] == "stream":
            if parts and parts[-1][0] == out["name"]:
                parts[-1] = (out["name"], parts[-1][1] + out["text"])
            else:
                parts.append((out["name"], out["text"]))
        elif out["output_type"] in ("execute_result", "display_data"):
            parts.append((out["output_type"], out.get("data", {}).get("text/plain", "")))
        else:
            parts.append(("error", out.get("ename", "") + ": " + out.get("evalue", "")))
    text = "".join(f"--- {kind}\n{body}\n" for kind, body in parts)
    if VIEW_TAG in cell.metadata.get("tags", []):
        # Mask: the page's length changes with every change to raspc view's page, which this
        # notebook does not own; the page itself is checked by check_view_output (and in Chromium
        # by tests/view/check_notebook_view.py).
        text = re.sub(r"<raspc\.View \d+ characters of HTML>", "<raspc.View N characters of HTML>", text)
    return text


def check_view_output(cell):
    """The view cell shows an iframe whose srcdoc is a whole raspc view page."""
    shown = [o for o in cell.get("outputs", []) if "text/html" in o.get("data", {})]
    if len(shown) != 1:
        return [f"the view cell shows {len(shown)} HTML outputs, not 1"]
    page = shown[0]["data"]["text/html"]
    found = re.fullmatch(r'<iframe srcdoc="([^"]*)" style="[^"]*" sandbox="allow-scripts"></iframe>', page)
    if not found:
        return ["the view cell's HTML is not one sandboxed iframe: " + page[:200]]
    inner = html.unescape(found.group(1))
    problems = []
    for needed in ("<!DOCTYPE html>", 'class="attention-map', 'class="decoded', "hist"):
        if needed not in inner:
            problems.append(f"the view's page has no {needed!r}")
    return problems


def transformer_lens_installed():
    return importlib.util.find_spec("transformer_lens") is not None


def compare(stored, executed):
    """The failures: errors, and every code cell whose printed text differs from the stored one."""
    failures = []
    if len(stored.cells) != len(executed.cells):
        return [f"{len(executed.cells)} cells executed, {len(stored.cells)} stored"]
    tags = [tag for cell in stored.cells for tag in cell.metadata.get("tags", [])]
    if tags.count(VIEW_TAG) != 1 or tags.count(TL_TAG) != 1:
        failures.append(f"expected one cell tagged {VIEW_TAG} and one {TL_TAG}, found tags {tags}")
    for index, (old, new) in enumerate(zip(stored.cells, executed.cells)):
        if new.cell_type != "code":
            continue
        where = f"cell {index} ({new.source.splitlines()[0] if new.source else 'empty'})"
        errors = [o for o in new.outputs if o["output_type"] == "error"]
        if errors:
            failures.append(f"{where} raised {errors[0]['ename']}: {errors[0]['evalue']}\n"
                            + re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(errors[0]["traceback"])))
            continue
        expected = printed(old)
        if TL_TAG in old.metadata.get("tags", []) and transformer_lens_installed():
            # The stored output is the one without transformer_lens (plain Debian Python); with
            # it installed the cell prints what its metadata keeps, checked the same way.
            expected = "--- stdout\n" + old.metadata["raspc"]["printed_with_transformer_lens"] + "\n"
        actual = printed(new)
        if actual != expected:
            diff = difflib.unified_diff(expected.splitlines(), actual.splitlines(), "stored", "executed", lineterm="")
            failures.append(f"{where} printed something else:\n" + "\n".join(diff))
        if VIEW_TAG in old.metadata.get("tags", []):
            failures.extend(f"{where}: {problem}" for problem in check_view_output(new))
    return failures


def main(argv):
    if len(argv) not in (3, 4) or (len(argv) == 4 and argv[3] != "--update"):
        print(__doc__)
        return 2
    package_parent, source_dir = (os.path.abspath(a) for a in argv[1:3])
    reason = missing(package_parent)
    if reason:
        print("skipped:", reason)
        return SKIP
    notebook = os.path.join(source_dir, NOTEBOOK)
    with tempfile.TemporaryDirectory(prefix="raspc_notebook_") as work:
        stored, executed = execute(notebook, package_parent, source_dir, work)
    if len(argv) == 4:
        import nbformat
        if any(o["output_type"] == "error" for cell in executed.cells for o in cell.get("outputs", [])):
            print("not updated: a cell raised an error\n" + "\n".join(compare(stored, executed)))
            return 1
        for cell in executed.cells:  # the view's page (100 KB and more) stays out of the repository
            if VIEW_TAG in cell.metadata.get("tags", []):
                for out in cell.outputs:
                    out.get("data", {}).pop("text/html", None)
        nbformat.write(executed, notebook)
        print(f"wrote {notebook} ({os.path.getsize(notebook)} bytes)")
        return 0
    failures = compare(stored, executed)
    for failure in failures:
        print("FAIL:", failure, "\n")
    code_cells = sum(cell.cell_type == "code" for cell in stored.cells)
    print(f"{code_cells} code cells run, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
