#!/usr/bin/env python3
"""Opens the HTML reports that test_report_html leaves in OUTDIR in headless
Chromium, with no network, and checks what the browser made of them.

For each page NAME.html (with NAME.expect.json, written by the C test):
  - with its script on (--dump-dom, #gfl-selftest: the script also drives
    its zoom buttons, wheel, drag and hover): the page's own self-check
    (<pre id="gfl-selfcheck">, filled by its script) says it drew, caught no
    error, and decoded as many kernels, copies, memsets, scopes and NVTX
    rows as the trace has, a chart per PM metric with points, and zoom, pan
    and tooltips worked; the hottest kernel's name is in the DOM; a
    hostile name made no element; the browser logged no console error and
    no refused request;
  - a screenshot, saved as OUTDIR/NAME.png (printed);
  - with its script cut out (NAME-nojs.html): the tables are there, as
    plain HTML, the triggers and trace windows ones with a row each, and
    the crash/OOM block where the session has one, the PM sampling table
    with a row per device and metric.

Exits 77 (ctest's skip) only when no Chromium is installed; 1 on a failure.
Usage: check_report_html.py OUTDIR NAME...
"""
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def find_chromium():
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def run_chromium(chromium, page, extra, profile, fragment=""):
    # no network: a proxy that refuses, names that resolve nowhere
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
           "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
           "--virtual-time-budget=15000", "--window-size=1400,1800"] + extra + ["file://" + page + fragment]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def console_problems(stderr):
    bad = []
    for line in stderr.splitlines():
        if ("CONSOLE" in line and ("Uncaught" in line or "Error" in line)) or "Refused to" in line:
            bad.append(line)
    return bad


def check_page(chromium, outdir, name, profile):
    page = os.path.join(outdir, name + ".html")
    with open(os.path.join(outdir, name + ".expect.json")) as f:
        want = json.load(f)
    fails = []

    # #gfl-selftest: the script also drives its buttons, wheel, drag and hover
    rc, dom, err = run_chromium(chromium, page, ["--dump-dom"], profile, "#gfl-selftest")
    if rc != 0:
        return ["chromium exited %d on %s:\n%s" % (rc, page, err[-2000:])]
    m = re.search(r'<pre id="gfl-selfcheck"[^>]*>(.*?)</pre>', dom, re.S)
    if not m or not m.group(1).strip():
        return ["%s: the page's script wrote no self-check" % page]
    sc = json.loads(html.unescape(m.group(1)))
    print("%s: self-check %s" % (name, json.dumps(sc, sort_keys=True)))
    if not sc.get("ok") or sc.get("errors"):
        fails.append("%s: script errors: %s" % (name, sc.get("errors")))
    if sc.get("draws", 0) < 1 or sc.get("marks", 0) < 1:
        fails.append("%s: nothing drawn" % name)
    st = sc.get("selftest") or {}
    if not st.get("zoomInSpan", 0) < st.get("resetSpan", 0):
        fails.append("%s: the zoom-in button did not zoom in" % name)
    if not st.get("wheelSpan", 0) < st.get("resetSpan", 0) or st.get("wheelMarks", 0) < 1:
        fails.append("%s: the wheel did not zoom in, or nothing was drawn after it" % name)
    if not st.get("panned", 0) > 0:
        fails.append("%s: dragging did not pan" % name)
    tip = st.get("tip", "")
    if not ("duration" in tip or "merged" in tip):
        fails.append("%s: hovering a mark gave no tooltip (%r)" % (name, tip))
    kinds = sc.get("kinds", [])
    for i, what in enumerate(("kernels", "copies", "memsets", "scopes")):
        if kinds[i] != want[what]:
            fails.append("%s: the page decoded %d %s, the trace has %d" % (name, kinds[i], what, want[what]))
    if kinds[4] + kinds[5] != want["nvtx"]:
        fails.append("%s: the page decoded %d NVTX rows, the trace has %d" % (name, kinds[4] + kinds[5], want["nvtx"]))
    # the flight recorder's "gpufl" lanes: trace windows (kind 7), triggers (8)
    if len(kinds) < 9 or kinds[7] != want.get("windows", 0) or kinds[8] != want.get("triggers", 0):
        fails.append("%s: the page decoded windows and triggers %s, the trace has %d and %d"
                     % (name, kinds[7:9], want.get("windows", 0), want.get("triggers", 0)))
    if sc.get("series", 0) < want.get("series", 0):
        fails.append("%s: no charts of the NVML samples" % name)
    # PM sampling: a chart per device and metric, with points in view, and
    # a tooltip over one that names its metric
    pm = want.get("pm", 0)
    if sc.get("pmSeries") != pm or sc.get("pmCharts") != pm:
        fails.append("%s: the page decoded %s and drew %s PM series, the trace has %d"
                     % (name, sc.get("pmSeries"), sc.get("pmCharts"), pm))
    if pm and (sc.get("pmPoints", 0) < pm or sc.get("pmDrawn", 0) < pm):
        fails.append("%s: PM charts without points (%s decoded, %s drawn)"
                     % (name, sc.get("pmPoints"), sc.get("pmDrawn")))
    if pm and "PM sampling" not in dom:
        fails.append("%s: no PM sampling heading over its charts" % name)
    if pm and not re.search(r"__\w+\.\S+ at .+: ", st.get("pmTip", "")):
        fails.append("%s: hovering a PM chart gave no tooltip with its metric (%r)" % (name, st.get("pmTip")))
    if "top_kernel_dom" in want and want["top_kernel_dom"] not in dom:
        fails.append("%s: the hottest kernel's name is not in the page: %s" % (name, want["top_kernel_dom"]))
    if "evil_id" in want and re.search(r'<[a-zA-Z]+[^<>]*\bid="?%s' % re.escape(want["evil_id"]), dom):
        fails.append("%s: a name from the trace made an element (id %s)" % (name, want["evil_id"]))
    fails += ["%s: console: %s" % (name, l) for l in console_problems(err)]

    png = os.path.join(outdir, name + ".png")
    if os.path.exists(png):
        os.unlink(png)
    rc, _, err = run_chromium(chromium, page, ["--screenshot=" + png, "--hide-scrollbars"], profile)
    if rc != 0 or not os.path.exists(png) or os.path.getsize(png) == 0:
        fails.append("%s: no screenshot (chromium exited %d)" % (name, rc))
    else:
        print("%s: screenshot %s" % (name, png))

    # without its script: the same page with the script element cut out
    # (headless Chromium's --dump-dom itself needs scripts on)
    with open(page, encoding="utf-8") as f:
        text = f.read()
    cut = text.rfind("<script>\n")
    if cut < 0:
        return fails + ["%s: no inline script found" % name]
    nojs = os.path.join(outdir, name + "-nojs.html")
    with open(nojs, "w", encoding="utf-8") as f:
        f.write(text[:cut] + "</body></html>\n")
    rc, dom, err = run_chromium(chromium, nojs, ["--dump-dom"], profile)
    hot = re.search(r'<section id="hotspots">(.*?)</section>', dom, re.S)
    if rc != 0 or not hot or "<table" not in hot.group(1):
        fails.append("%s: without its script, the page shows no hotspot table" % name)
    elif "top_kernel_dom" in want and want["top_kernel_dom"] not in hot.group(1):
        fails.append("%s: without its script, the hotspot table lacks the hottest kernel" % name)
    for section in ("summary", "scopes", "idle", "copies"):
        if '<section id="%s">' % section not in dom:
            fails.append("%s: without its script, no %s section" % (name, section))
    for section, n in (("triggers", want.get("triggers", 0)), ("windows", want.get("windows", 0)),
                       ("pm", want.get("pm", 0))):
        sec = re.search(r'<section id="%s">(.*?)</section>' % section, dom, re.S)
        rows = len(re.findall(r"<tr>", sec.group(1))) - 1 if sec else 0  # less the header
        if rows != n:
            fails.append("%s: without its script, the %s table has %d rows, the trace %d" % (name, section, rows, n))
    if want.get("incident") and '<section id="incident">' not in dom:
        fails.append("%s: without its script, no crash/OOM block" % name)
    m = re.search(r'<pre id="gfl-selfcheck"[^>]*>(.*?)</pre>', dom, re.S)
    if m and m.group(1).strip():
        fails.append("%s: the script ran though it was cut out" % name)
    fails += ["%s (no script): console: %s" % (name, l) for l in console_problems(err)]
    return fails


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    chromium = find_chromium()
    if not chromium:
        print("SKIP: no Chromium installed (Debian package chromium; tools/install-deps.sh --browser)")
        return SKIP
    outdir = os.path.abspath(sys.argv[1])
    fails = []
    for name in sys.argv[2:]:
        profile = tempfile.mkdtemp(prefix="gpufl-chromium-")
        try:
            fails += check_page(chromium, outdir, name, profile)
        finally:
            shutil.rmtree(profile, ignore_errors=True)
    for f in fails:
        print("FAIL " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
