"""Progress lines on stdout: format, order, rate, and flushing."""

import json

from conformance.checks import check
from conformance.checks.step._common import (Input, Match, csv_inputs, expect_exit, faults)

PREFIX = "@lspo:progress "


@check("progress.format", clauses=["STEP-PROGRESS-1"], level="MUST",
       title="each progress line is the prefix plus JSON with fraction in [0,1] and a short phase",
       fakes="three inputs", expected="every '@lspo:progress ' line parses; fraction 0..1 (4 dp); phase <= 64")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(3))
    plane.run()
    lines = plane.progress()
    ctx.expect(lines, expected="progress lines on stdout", actual="none",
               diagnosis="print a progress line on stdout before each input and a last one when done, and flush after "
                         "each")
    for _t, doc, raw in lines:
        ok = (raw.startswith(PREFIX) and isinstance(doc, dict) and set(doc) == {"fraction", "phase"}
              and isinstance(doc["fraction"], (int, float)) and not isinstance(doc["fraction"], bool)
              and 0.0 <= doc["fraction"] <= 1.0 and round(doc["fraction"], 4) == doc["fraction"]
              and isinstance(doc["phase"], str) and len(doc["phase"]) <= 64)
        ctx.expect(ok, expected="'@lspo:progress {\"fraction\": f, \"phase\": p}'", actual=raw[:200],
                   diagnosis="print each progress line as the prefix '@lspo:progress ' and a JSON object with exactly "
                             "fraction (a number from 0 to 1, rounded to 4 places) and phase (a string of at most 64 "
                             "characters)")
        ctx.expect(raw[len(PREFIX):] == json.dumps(doc), expected="json.dumps default separators",
                   actual=raw[:200],
                   diagnosis="serialise the progress object with json.dumps and its default separators, so every line "
                             "reads the same")


@check("progress.order", clauses=["STEP-PROGRESS-2"], level="SHOULD",
       title="one line before each input, then 1.0 'done' before the marker; never decreasing",
       fakes="three inputs", expected="fractions 0, 1/3, 2/3 with the work's phase, then 1.0 'done'")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(3))
    plane.run()
    got = [(d.get("fraction"), d.get("phase")) for _t, d, _r in plane.progress() if isinstance(d, dict)]
    fractions = [fraction for fraction, _phase in got]
    phases = [phase for _fraction, phase in got[:-1]]
    ctx.expect(fractions == [0.0, 0.3333, 0.6667, 1.0] and got[-1][1] == "done"
               and all(isinstance(p, str) and p.strip() and p != "done" for p in phases),
               expected="fractions 0.0, 0.3333, 0.6667 with the work's own phase, then (1.0, 'done')",
               actual="%s" % got,
               diagnosis="print one line before each input with fraction i/n rounded to 4 places and the work's own "
                         "phase, then (1.0, 'done') after the last")
    marker_posts = plane.collector.marker_posts()
    last_t = plane.progress()[-1][0] if plane.progress() else None
    ctx.expect(marker_posts and last_t is not None and last_t <= marker_posts[0].t_start + 0.05,
               expected="the done line before the marker POST", actual="after it, or missing",
               diagnosis="print the 1.0 'done' line before the marker write begins: the receipt is the run's last word")


@check("progress.rate-limit", clauses=["STEP-PROGRESS-3"], level="MUST",
       title="at most 201 progress lines however many inputs",
       fakes="local mode; 400 tiny inputs", expected="exit 0; <= 201 progress lines")
def _(ctx):
    items = [Input("f%03d.txt" % i, b"%d\n" % i, source="local") for i in range(400)]
    plane = ctx.step_plane(inputs=items, staging="local_path", manifest_source="local")
    plane.run(timeout=120)
    expect_exit(ctx, plane, 0, "a healthy run")
    n = len(plane.progress())
    ctx.expect(0 < n <= 201, expected="1..201 progress lines", actual="%d lines" % n,
               diagnosis="the run log is kept as a 1000-line tail; progress must not use it up")


@check("progress.flushed", clauses=["STEP-PROGRESS-1"], level="MUST",
       title="progress lines arrive while the node runs, not at exit",
       fakes="input 2's GET is answered after 2 s", expected="input 2's progress line seen before the answer")
def _(ctx):
    items = csv_inputs(2)
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.delay(2.0), Match(method="GET", key=items[1].key))
    plane.start()
    seen = plane.proc.wait_for_line("stdout", lambda line: line.startswith(PREFIX) and "0.5" in line, 20)
    plane.wait()
    ctx.expect(seen, expected="'@lspo:progress {\"fraction\": 0.5 ...' seen while input 2 was delayed",
               actual="not seen before exit", diagnosis="flush stdout after each progress line")
    gets = plane.job.gets(items[1])
    line_t = [t for t, _doc, raw in plane.progress() if "0.5" in raw]
    answer_t = gets[0].t_headers_sent if gets else None
    ctx.expect(line_t and answer_t is not None and line_t[0] < answer_t, expected="the line before the answer",
               actual="line at %s, answer at %s" % (line_t[:1], answer_t),
               diagnosis="flush stdout after each progress line, before the request it announces: a buffered line "
                         "arrives late or at exit")
