#!/usr/bin/env python3
"""The pages of `raspc view`, opened in headless Chromium as a reader opens them.

For hist, sort, aab (causal) and a small trained model: the page is written, opened from disk
and driven over the DevTools protocol (--remote-debugging-pipe; standard library only). It must
log no console error and make no network request; it must have one attention map per head and
one residual map per half-block (and the embedding), whose column labels are the model's
residual labels (`raspc inspect --json`); for compiled models the decoded output row equals
`raspc eval` and no cell is marked as a mismatch; and screenshots of it must not be blank.

Usage: check_view.py RASPC SOURCE_DIR OUTPUT_DIR. Screenshots stay in OUTPUT_DIR. Exits 77 when
Chromium is not installed.
"""
import base64
import fcntl
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77


class DevTools:
    """Chromium over --remote-debugging-pipe: commands on fd 3, replies and events on fd 4, each
    message JSON ended by a NUL byte."""

    def __init__(self, chromium, profile):
        commands_read, self.commands = os.pipe()
        self.replies, replies_write = os.pipe()
        # Above 10 so that the dup2 onto 3 and 4 in the child cannot overwrite one of them.
        theirs = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (commands_read, replies_write)]
        os.close(commands_read)
        os.close(replies_write)

        def plumb():
            os.dup2(theirs[0], 3)
            os.dup2(theirs[1], 4)

        self.process = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--user-data-dir=" + profile, "--window-size=1400,1000", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=plumb, pass_fds=(3, 4) + tuple(theirs))
        for fd in theirs:
            os.close(fd)
        self.next_id = 0
        self.buffer = b""
        self.events = []

    def _read_message(self):
        while b"\0" not in self.buffer:
            chunk = os.read(self.replies, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=None):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.commands, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read_message()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(method + ": " + json.dumps(reply["error"]))
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method, session):
        for i, event in enumerate(self.events):
            if event.get("method") == method and event.get("sessionId") == session:
                return self.events.pop(i)
        while True:
            event = self._read_message()
            if event.get("method") == method and event.get("sessionId") == session:
                return event
            self.events.append(event)

    def close(self):
        try:
            self.call("Browser.close")
        except RuntimeError:
            pass
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self.commands)
        os.close(self.replies)


def png_colours(data):
    """The distinct colours of an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour_type in (2, 6) and interlace == 0, "unexpected PNG format"
            channels = 3 if colour_type == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    colours = set()
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        for i in range(0, stride, channels * 3):  # every third pixel is enough to count colours
            colours.add(bytes(line[i:i + 3]))
        previous = line
    return colours


# Reads what the page shows, in the page: counts, labels, the decoded output row, console state.
PAGE_FACTS = r"""
(() => {
  // A map drawn with its bookkeeping dimensions (or one that has none) and one drawn without.
  const maps = sel => Array.from(document.querySelectorAll('svg.' + sel));
  // A label's whole text: a shortened one carries it in its tooltip.
  const whole = t => t.querySelector('title') ? t.querySelector('title').textContent : t.textContent;
  const labels = svg => Array.from(svg.querySelectorAll('text.column-label')).map(whole);
  const shown = e => getComputedStyle(e).display !== 'none';
  const stages = Array.from(document.querySelectorAll('table.decoded')).map(t => +t.dataset.stage);
  const last = Math.max(-1, ...stages);
  const outputRow = document.querySelector('table.decoded[data-stage="' + last + '"] tr[data-output="true"]');
  const row = (table, name) => { const r = document.querySelector(table + ' tr[data-' + name + ']');
                                 return r ? Array.from(r.querySelectorAll('td')).map(td => td.textContent) : null; };
  const full = maps('residual-map:not(.without-bookkeeping)'), bare = maps('residual-map.without-bookkeeping');
  const before = {full: full.filter(shown).length, bare: bare.filter(shown).length};
  const toggle = document.getElementById('show-bookkeeping');
  if (toggle) toggle.click();
  const after = {full: full.filter(shown).length, bare: bare.filter(shown).length};
  if (toggle) toggle.click();
  // What a reader sees cut: a graph box's name wider than its box, a page wider than the window.
  const boxes = Array.from(document.querySelectorAll('g.sop-node')).filter(g => {
    const width = g.querySelector('rect').getBBox().width;
    return Array.from(g.querySelectorAll('text')).some(t => t.getBBox().width > width - 8);
  }).map(g => g.dataset.shown);
  const heads = Array.from(document.querySelectorAll('svg.attention-map')).map(s =>
      s.closest('figure').querySelector('figcaption').textContent);
  return {
    attention: maps('attention-map').map(s => [+s.dataset.layer, +s.dataset.head]),
    residual: full.map(s => ({stage: +s.dataset.stage, labels: labels(s)})),
    without_bookkeeping: bare.map(s => ({stage: +s.dataset.stage, labels: labels(s)})),
    toggle: {present: !!toggle, before: before, after: after},
    // name -> shown name of every s-op drawn; a scratch value's ("selector_width#18_1.scratch" as
    // "sort(shown, key), part 1 of 2 (scratch)") names its s-op too.
    renames: Array.from(document.querySelectorAll('g.sop-node')).map(g =>
        /[.]scratch$/.test(g.dataset.name) ? [g.dataset.name.slice(0, -8), g.dataset.shown.replace(/ [(]scratch[)]$/, '')]
                                           : [g.dataset.name, g.dataset.shown]).filter(([n, s]) => n !== s),
    weights: maps('weight-map:not(.with-bookkeeping)').length,
    sop_nodes: document.querySelectorAll('g.sop-node').length,
    decoded_tables: stages.length,
    output: outputRow ? Array.from(outputRow.querySelectorAll('td')).map(td => td.textContent) : null,
    model_output: row('table.outputs', 'row="model"'),
    interpreter_output: row('table.outputs', 'row="interpreter"'),
    probes: Array.from(document.querySelectorAll('table.probes tr[data-sop]')).map(r =>
        [r.dataset.sop, Array.from(r.querySelectorAll('td')).slice(2).map(td => parseFloat(td.textContent))]),
    mismatches: document.querySelectorAll('td.mismatch').length,
    first_attention_title: heads.length ? heads[0] : null,
    head_titles: heads,
    cut_boxes: boxes,
    page_width: document.documentElement.scrollWidth,
    window_width: window.innerWidth,
    text: document.body.innerText + ' ' + Array.from(document.querySelectorAll('svg text')).map(whole).join(' '),
  };
})()
"""

# Residual dimensions that hold no s-op's value: what the page hides until its toggle is on.
BOOKKEEPING = re.compile(r"^(one|bos|pad|zero|anchor|position\.\S+|\S+\.(x|-x|x2|-x2|y|-y)|d\d+)$")
# Names the compiler makes up: they must not reach a page.
INTERNAL = re.compile(r"\w#\d|sorted_below_\d|selector_width#")


def shown_labels(labels, renames):
    """The model's residual labels as the page shows them: every identifier the compiler named
    otherwise replaced by its shown name (whole identifiers only)."""
    if not renames:
        return labels
    names = dict(renames)
    pattern = re.compile(r"(?<![\w#])(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")(?![\w#])")
    return [pattern.sub(lambda m: names[m.group(1)], label) for label in labels]


def event_failures(events, sessions, url, prefix):
    """What a page must not do, from the DevTools events of its sessions: throw, log an error or a
    warning, or request anything but itself."""
    failures = []
    for event in events:
        if event.get("sessionId") not in sessions:
            continue
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            failures.append(f"{prefix}exception: {json.dumps(params)[:400]}")
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert", "warning"):
            failures.append(f"{prefix}console {params.get('type')}: {json.dumps(params.get('args'))[:400]}")
        if method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
            failures.append(f"{prefix}log: {params['entry'].get('text')}")
        if method == "Network.requestWillBeSent" and params.get("request", {}).get("url") != url:
            failures.append(f"{prefix}network request for {params['request'].get('url')[:200]}")
    return failures


def run(command, **kw):
    result = subprocess.run(command, capture_output=True, text=True, **kw)
    if result.returncode != 0:
        raise AssertionError(" ".join(command) + " failed:\n" + result.stdout + result.stderr)
    return result.stdout


def check_page(devtools, html, shots, failures):
    target = devtools.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = devtools.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Runtime", "Log", "Network", "Page"):
        devtools.call(domain + ".enable", session=session)
    devtools.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False}, session=session)
    url = "file://" + os.path.abspath(html)
    devtools.call("Page.navigate", {"url": url}, session=session)
    devtools.wait_for("Page.loadEventFired", session)
    facts = devtools.call("Runtime.evaluate", {"expression": PAGE_FACTS, "returnByValue": True},
                          session=session)["result"]["value"]
    # Screenshots: the top of the page, and the first attention map and the last residual map with
    # what is around them.
    for name, selector in shots:
        clip = None
        if selector:
            rect = devtools.call("Runtime.evaluate", {"expression":
                "(() => { const e = document.querySelector('" + selector + "').closest('figure, .stage');"
                " e.scrollIntoView(); const r = e.getBoundingClientRect();"
                " return [r.left + scrollX, r.top + scrollY, r.width, r.height]; })()",
                "returnByValue": True}, session=session)["result"]["value"]
            clip = {"x": max(0, rect[0] - 8), "y": max(0, rect[1] - 8), "width": min(1400, rect[2] + 16),
                    "height": min(1600, rect[3] + 16), "scale": 1}
        params = {"format": "png"}
        if clip:
            params["clip"] = clip
            params["captureBeyondViewport"] = True
        png = base64.b64decode(devtools.call("Page.captureScreenshot", params, session=session)["data"])
        with open(name, "wb") as f:
            f.write(png)
        colours = len(png_colours(png))
        if colours < 8:
            failures.append(f"{name}: only {colours} distinct colours: the screenshot is blank")
    devtools.call("Target.closeTarget", {"targetId": target})
    failures += event_failures(devtools.events, {session}, url, html + ": ")
    devtools.events = [e for e in devtools.events if e.get("sessionId") != session]
    return facts


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    raspc, source, out = sys.argv[1:]
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("chromium is not installed (scripts/setup.sh installs it): skipped")
        return SKIP
    os.makedirs(out, exist_ok=True)
    programs = os.path.join(source, "programs")
    cases = [  # name, what view opens, its input, eval's arguments (None: a trained model)
        ("hist", os.path.join(programs, "hist.rasp"), "abcab", []),
        ("sort", os.path.join(programs, "sort.rasp"), "[3,1,4,2]", []),
        ("aab", os.path.join(programs, "aab.rasp"), "aabaa", ["--causal"]),
        # A deep program at 16 tokens: long names, many dimensions; nothing may be cut or made up.
        ("most_freq", os.path.join(programs, "most_freq.rasp"), "abcdabcdaabbccdd", []),
        ("trained", None, "abcab", None),
    ]
    failures = []
    work = tempfile.mkdtemp(prefix="raspc_view_")
    devtools = DevTools(chromium, os.path.join(work, "profile"))
    try:
        for name, program, text, eval_args in cases:
            model = os.path.join(out, name + ".safetensors")
            if program:
                # most_freq at 16 verifies on fewer inputs than compile's default (167,380): the page
                # is under test here, and the sanitized suite's build took 30 s over the default.
                length = ["--max-len", "16", "--verify-len", "6", "--samples", "100"] if name == "most_freq" else \
                    ["--max-len", "6"]
                run([raspc, "compile", program, *length, *eval_args, "-o", model])
            else:
                run([raspc, "train", os.path.join(programs, "hist.rasp"), "--max-len", "6", "--layers", "1",
                     "--heads", "2", "--d-model", "16", "--steps", "30", "--eval-every", "30", "--seed", "3",
                     "-o", model])
            html = os.path.join(out, name + ".html")
            run([raspc, "view", model, "--input", text, "-o", html])
            summary = json.loads(run([raspc, "inspect", model, "--json"]))
            config = summary["config"]
            shots = [(os.path.join(out, name + "-top.png"), None),
                     (os.path.join(out, name + "-attention.png"), "svg.attention-map"),
                     (os.path.join(out, name + "-residual.png"), "svg.residual-map[data-stage=\"%d\"]"
                      % (2 * config["n_layer"]))]
            facts = check_page(devtools, html, shots, failures)
            heads = sorted([l, h] for l in range(config["n_layer"]) for h in range(config["n_head"]))
            if sorted(facts["attention"]) != heads:
                failures.append(f"{name}: attention maps {facts['attention']}, expected one per head {heads}")
            stages = [r["stage"] for r in facts["residual"]]
            if stages != list(range(2 * config["n_layer"] + 1)):
                failures.append(f"{name}: residual maps for stages {stages}")
            labels = shown_labels(summary["residual_labels"], facts["renames"])
            for r in facts["residual"]:
                if r["labels"] != labels:
                    failures.append(f"{name}: residual map {r['stage']} is labelled {r['labels']}, not {labels}")
            # The toggle: off, the maps without the bookkeeping dimensions show; on, those with them.
            if eval_args is not None:
                toggle = facts["toggle"]
                stage_count = 2 * config["n_layer"] + 1
                if (not toggle["present"] or toggle["before"] != {"full": 0, "bare": stage_count}
                        or toggle["after"] != {"full": stage_count, "bare": 0}):
                    failures.append(f"{name}: the bookkeeping toggle shows {toggle}")
                for r in facts["without_bookkeeping"]:
                    hidden = [label for label in labels if label not in r["labels"]]
                    if not hidden or any(not BOOKKEEPING.match(label) for label in hidden) or \
                            [label for label in labels if label in r["labels"]] != r["labels"]:
                        failures.append(f"{name}: residual map {r['stage']} hides {hidden}, not only bookkeeping")
            if INTERNAL.search(facts["text"]):
                failures.append(f"{name}: the page shows a name the compiler made up: "
                                f"{INTERNAL.search(facts['text']).group(0)!r}")
            if facts["cut_boxes"]:
                failures.append(f"{name}: graph boxes whose text is wider than the box: {facts['cut_boxes']}")
            if facts["page_width"] > facts["window_width"]:
                failures.append(f"{name}: the page is {facts['page_width']} px wide in a {facts['window_width']} px window")
            expected_weights = config["n_layer"] * (2 * config["n_head"] + (2 if config["n_inner"] else 0))
            if facts["weights"] > expected_weights:
                failures.append(f"{name}: {facts['weights']} weight maps, more than {expected_weights}")
            if eval_args is not None:
                printed = run([raspc, "eval", program, "--input", text, *eval_args]).strip()
                expected = printed[1:-1].split(",")
                if facts["output"] != expected:
                    failures.append(f"{name}: the page decodes the output as {facts['output']}, eval prints {expected}")
                if facts["mismatches"]:
                    failures.append(f"{name}: {facts['mismatches']} decoded values marked as mismatches")
                if facts["decoded_tables"] != 2 * config["n_layer"] + 1 or facts["sop_nodes"] == 0:
                    failures.append(f"{name}: {facts['decoded_tables']} decoded tables, {facts['sop_nodes']} s-ops drawn")
                if f"from {os.path.basename(program)}:" not in (facts["first_attention_title"] or ""):
                    failures.append(f"{name}: the first attention map is titled {facts['first_attention_title']!r}")
                if facts["model_output"] != expected or facts["interpreter_output"] != expected:
                    failures.append(f"{name}: the outputs table has {facts['model_output']} (model) and "
                                    f"{facts['interpreter_output']} (interpreter), eval prints {expected}")
                if name == "sort" and not all("counting sort" in title for title in facts["head_titles"][:3]):
                    failures.append(f"{name}: its first heads are not explained as a counting sort's: {facts['head_titles']}")
            else:
                # A trained model: its outputs beside the interpreter's, and a probe of each s-op the
                # program names at every stage, each a share from 0 to 100%.
                printed = run([raspc, "eval", os.path.join(programs, "hist.rasp"), "--input", text]).strip()
                if facts["interpreter_output"] != printed[1:-1].split(",") or len(facts["model_output"] or []) != len(text):
                    failures.append(f"{name}: the outputs table has {facts['model_output']} (model) and "
                                    f"{facts['interpreter_output']} (interpreter), eval prints {printed}")
                stage_count = 2 * config["n_layer"] + 1
                if not facts["probes"] or any(len(shares) != stage_count or not all(0 <= s <= 100 for s in shares)
                                              for _, shares in facts["probes"]):
                    failures.append(f"{name}: probes {facts['probes']}")
            print(f"{name}: {len(facts['attention'])} attention maps, {len(facts['residual'])} residual maps, "
                  f"{facts['weights']} weight maps, output {facts['output']}")
    finally:
        devtools.close()
        shutil.rmtree(work, ignore_errors=True)
    for failure in failures:
        print("FAIL:", failure)
    print(f"screenshots in {out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
