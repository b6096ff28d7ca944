#!/usr/bin/env python3
"""Model.view inside a notebook page, opened in headless Chromium as a reader of the rendered notebook opens it.

docs/tutorial.ipynb is executed afresh (tests/python/test_notebook.py's execute: a temporary
folder, a kernel of this interpreter) and rendered by nbconvert's HTMLExporter (the lab template,
less the two scripts it fetches from a CDN, so the page is whole offline). In Chromium, over the
DevTools protocol (tests/view/check_view.py's DevTools), the view's sandboxed srcdoc iframe must have
rendered the page `raspc view` writes: one attention map per head, one decoded table and one
residual map per stage, the decoded output equal to raspc.evaluate, no mismatch, s-op nodes drawn;
neither frame may log a console error or make a network request; and a screenshot of the iframe
must not be blank.

Usage: check_notebook_view.py PACKAGE_PARENT SOURCE_DIR [OUTPUT_DIR]. The page and the screenshot
are kept in OUTPUT_DIR when given (else only in a temporary folder). Exits 77 without Chromium,
nbconvert, nbclient, ipykernel or the built module.
"""
import base64
import importlib.util
import json
import os
import shutil
import sys
import tempfile

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
VIEW_SOURCE = 'hist_model.view("abcab")'  # the view cell this check knows the answers for (hist, max_len 6)


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# One module a job: executing the notebook, and driving Chromium (DevTools, PAGE_FACTS, png_colours).
notebook_test = load("test_notebook", os.path.join(HERE, "..", "python", "test_notebook.py"))
check_view = load("check_view", os.path.join(HERE, "check_view.py"))

# The lab template without its two CDN scripts (require.js, MathJax): the view needs neither, and a
# test must not depend on the network (nor may the page make a request).
OFFLINE_TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{% block html_head_js_requirejs %}{% endblock html_head_js_requirejs %}
{% block html_head_js_mathjax %}{% endblock html_head_js_mathjax %}
"""


def render(executed, path):
    import jinja2
    from nbconvert import HTMLExporter
    exporter = HTMLExporter(extra_loaders=[jinja2.DictLoader({"offline.html.j2": OFFLINE_TEMPLATE})],
                            template_file="offline.html.j2")
    body, _ = exporter.from_notebook_node(executed)
    with open(path, "w", encoding="utf-8") as f:
        f.write(body)


def open_page(devtools, page, url, sessions):
    """Navigates and waits for the load event (which waits for the iframe too). A sandboxed
    iframe without allow-same-origin may run in a process of its own, a target of its own: it is
    attached paused (waitForDebuggerOnStart), its console and requests watched from the start,
    then let run. Its session joins `sessions`."""
    devtools.call("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True},
                  session=page)
    devtools.call("Page.navigate", {"url": url}, session=page)
    started, seen = set(), 0
    while True:
        # The calls below read messages too, and keep the events among them in devtools.events:
        # every event is looked at once, in order, before the pipe is read again.
        while seen < len(devtools.events):
            event, seen = devtools.events[seen], seen + 1
            params = event.get("params", {})
            if event.get("sessionId") != page:
                continue
            if event.get("method") == "Page.loadEventFired":
                return
            if event.get("method") == "Target.attachedToTarget" and params["sessionId"] not in started:
                started.add(params["sessionId"])
                sessions.add(params["sessionId"])
                for domain in ("Runtime", "Log", "Network"):
                    devtools.call(domain + ".enable", session=params["sessionId"])
                devtools.call("Runtime.runIfWaitingForDebugger", session=params["sessionId"])
        devtools.events.append(devtools._read_message())  # where DevTools keeps events


def view_context(devtools, page):
    """Where to evaluate inside the view's iframe: (session, contextId). A sandboxed frame
    without allow-same-origin hides its document from the page's script (contentDocument is
    null), so DevTools goes in: through the iframe's own target when Chromium runs it in another
    process, else through the frame's default execution context in the page's."""
    frames = [e["params"]["frameId"] for e in devtools.events
              if e.get("method") == "Page.frameAttached" and e.get("sessionId") == page]
    if len(frames) != 1:
        raise AssertionError(f"the notebook page has {len(frames)} frames, not the view's one")
    for event in devtools.events:
        params = event.get("params", {})
        if event.get("method") == "Target.attachedToTarget" and params["targetInfo"]["targetId"] == frames[0]:
            return params["sessionId"], None
    for event in devtools.events:
        context = event.get("params", {}).get("context", {})
        aux = context.get("auxData", {})
        if (event.get("method") == "Runtime.executionContextCreated" and event.get("sessionId") == page
                and aux.get("frameId") == frames[0] and aux.get("isDefault")):
            return page, context["id"]
    raise AssertionError("no execution context for the view's iframe")


# Resolves true after two animation frames of the document it runs in, false if none comes in 20 s.
TWO_FRAMES = ("new Promise(done => { requestAnimationFrame(() => requestAnimationFrame(() => done(true)));"
              " setTimeout(() => done(false), 20000); })")


def evaluate(devtools, session, context, expression):
    params = {"expression": expression, "returnByValue": True, "awaitPromise": True}
    if context is not None:
        params["contextId"] = context
    reply = devtools.call("Runtime.evaluate", params, session=session)
    if "exceptionDetails" in reply:
        raise AssertionError("evaluating in the view failed: " + json.dumps(reply["exceptionDetails"])[:400])
    return reply["result"]["value"]


def expected(package_parent, source_dir):
    """What the view of hist on "abcab" must show, from raspc itself."""
    sys.path.insert(0, package_parent)
    import raspc
    hist = raspc.Program.from_file(os.path.join(source_dir, "programs", "hist.rasp"))
    model = raspc.compile(hist, max_len=6)
    config = model.config
    return {"heads": [[l, h] for l in range(config["n_layer"]) for h in range(config["n_head"])],
            "stages": 2 * config["n_layer"] + 1, "labels": model.residual_labels,
            "output": [str(v) for v in raspc.evaluate(hist, "abcab")]}


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__)
        return 2
    package_parent, source_dir = (os.path.abspath(a) for a in argv[1:3])
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    reason = notebook_test.missing(package_parent)
    if not chromium:
        reason = "chromium is not installed (scripts/setup.sh installs it)"
    elif not reason and importlib.util.find_spec("nbconvert") is None:
        reason = f"{sys.executable} has no nbconvert (Debian: python3-nbconvert)"
    if reason:
        print("skipped:", reason)
        return SKIP
    failures = []
    with tempfile.TemporaryDirectory(prefix="raspc_notebook_view_") as work:
        _, executed = notebook_test.execute(os.path.join(source_dir, notebook_test.NOTEBOOK), package_parent,
                                            source_dir, os.path.join(work, "kernel"))
        views = [c for c in executed.cells if notebook_test.VIEW_TAG in c.metadata.get("tags", [])]
        if len(views) != 1 or views[0].source != VIEW_SOURCE:
            print(f"FAIL: expected one cell tagged {notebook_test.VIEW_TAG} holding {VIEW_SOURCE}")
            return 1
        errors = [o for c in executed.cells for o in c.get("outputs", []) if o["output_type"] == "error"]
        if errors:
            print(f"FAIL: a cell raised {errors[0]['ename']}: {errors[0]['evalue']}")
            return 1
        page_file = os.path.join(work, "tutorial.html")
        render(executed, page_file)
        want = expected(package_parent, source_dir)

        devtools = check_view.DevTools(chromium, os.path.join(work, "profile"))
        try:
            target = devtools.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            page = devtools.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            sessions = {page}
            for domain in ("Runtime", "Log", "Network", "Page"):
                devtools.call(domain + ".enable", session=page)
            devtools.call("Emulation.setDeviceMetricsOverride",
                          {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False}, session=page)
            url = "file://" + page_file
            open_page(devtools, page, url, sessions)
            session, context = view_context(devtools, page)
            facts = evaluate(devtools, session, context, check_view.PAGE_FACTS)
            # The iframe as the reader sees it, in the notebook page: its box, screenshotted.
            rect = evaluate(devtools, page, None, "(() => { const f = document.querySelectorAll('iframe');"
                            " if (f.length !== 1) return null; f[0].scrollIntoView();"
                            " const r = f[0].getBoundingClientRect();"
                            " return [r.left + scrollX, r.top + scrollY, r.width, r.height]; })()")
            png = None
            if rect is None or rect[2] < 100 or not 100 <= rect[3] <= 1000:
                failures.append(f"the notebook page has no iframe of a readable size: {rect}")
            else:
                # Chromium neither runs animation frames in nor paints an out-of-process iframe
                # while it is off screen: scrolled into view, it paints once its renderer sees it
                # visible. Two animation frames in the page, two in the iframe (the sign that it
                # renders again; bounded by 20 s against a hang, not to time anything), two in the
                # page to composite it; then the screenshot. Scrolled into the 1000-pixel viewport
                # and no captureBeyondViewport: with it, Chromium 156 leaves such an iframe blank.
                painted = [evaluate(devtools, where, ctx, TWO_FRAMES)
                           for where, ctx in ((page, None), (session, context), (page, None))]
                if not all(painted):
                    failures.append("the view's iframe ran no animation frame once scrolled into view")
                # Only the view's own area: inside the iframe's 1-pixel border, left of its
                # scrollbar (whose greys alone would pass for a drawing).
                inner = evaluate(devtools, session, context, "[document.documentElement.clientWidth,"
                                 " document.documentElement.clientHeight]")
                png = base64.b64decode(devtools.call("Page.captureScreenshot", {
                    "format": "png",
                    "clip": {"x": rect[0] + 1, "y": rect[1] + 1, "width": inner[0], "height": inner[1], "scale": 1}},
                    session=page)["data"])
            devtools.call("Target.closeTarget", {"targetId": target})
        finally:
            devtools.close()

        if sorted(facts["attention"]) != want["heads"]:
            failures.append(f"attention maps {facts['attention']}, expected one per head {want['heads']}")
        if [r["stage"] for r in facts["residual"]] != list(range(want["stages"])):
            failures.append(f"residual maps for stages {[r['stage'] for r in facts['residual']]}")
        for r in facts["residual"]:
            if r["labels"] != want["labels"]:
                failures.append(f"residual map {r['stage']} is labelled {r['labels']}, not {want['labels']}")
        if facts["decoded_tables"] != want["stages"] or facts["sop_nodes"] == 0:
            failures.append(f"{facts['decoded_tables']} decoded tables, {facts['sop_nodes']} s-ops drawn")
        if facts["output"] != want["output"]:
            failures.append(f"the view decodes the output as {facts['output']}, raspc.evaluate gives {want['output']}")
        if facts["mismatches"]:
            failures.append(f"{facts['mismatches']} decoded values marked as mismatches")
        if png is not None:
            colours = len(check_view.png_colours(png))
            if colours < 8:
                failures.append(f"the view's screenshot has only {colours} distinct colours: it is blank")
        failures += check_view.event_failures(devtools.events, sessions, url, "")
        if len(argv) == 4:
            os.makedirs(argv[3], exist_ok=True)
            shutil.copy(page_file, argv[3])
            if png is not None:
                with open(os.path.join(argv[3], "tutorial-view.png"), "wb") as f:
                    f.write(png)
    how = "its own process" if session != page else "the page's process"
    print(f"the view's iframe (in {how}): {len(facts['attention'])} attention maps, {facts['decoded_tables']} "
          f"decoded tables, {len(facts['residual'])} residual maps, output {facts['output']}")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
