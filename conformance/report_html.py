"""The --html report: one self-contained page a team can open from a CI artifact.

Inline CSS, no script, no external resource: it reads the same without
JavaScript and offline. From top to bottom:

* the header: node, contract and its version, seed, the run's notes (PID 1,
  memory cgroup, jobs, example work, deployment), duration;
* a summary bar, one segment per verdict, widths in proportion;
* the **causes**: each invariant the run broke, once, with its clause and the
  checks it failed (report.causes);
* the **clause matrix**, one table per contract section: every clause of the
  contract (id, level, title) with the checks that cite it, each a chip in its
  verdict's colour, and a FAIL chip for each cause that breaks it; a clause no
  check of this run cites says so;
* every check that did not pass: the text of each clause it cites, Expected,
  Actual, Diagnosis, the command that reruns it, and its transcript folded
  away in a <details> element (a check failed only by a cause points to it);
* every check, one row each.

Everything shown comes from the same CheckResult fields as the terminal,
JUnit and JSON reports, after run_check masked every plane secret in them, so
a secret is masked here exactly as there.  Every text is escaped.
"""

import html

from conformance import report as _report
from conformance.checks import ERROR, FAIL, NON_STRICT, NOT_JUDGED, PASS, SKIP

# Verdict colours: background, text.  Chosen to read in greyscale too (the
# verdict is also written in every chip).
COLOURS = {
    PASS: ("#d8f0dc", "#14532d"),
    NON_STRICT: ("#fdf0c4", "#713f12"),
    SKIP: ("#e5e7eb", "#374151"),
    FAIL: ("#fadbd8", "#7f1d1d"),
    ERROR: ("#ead9f7", "#4c1d95"),
    NOT_JUDGED: ("#fde2c8", "#7c2d12"),
}
ORDER = (FAIL, ERROR, NOT_JUDGED, NON_STRICT, SKIP, PASS)

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1100px;
color:#111827;padding:0 16px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #e5e7eb}
h3{font-size:15px;margin:18px 0 6px}
.meta{color:#4b5563;margin:0 0 12px}.meta li{display:inline;margin-right:14px}
.bar{display:flex;height:22px;border-radius:4px;overflow:hidden;margin:8px 0}
.bar span{display:block;text-align:center;font-size:12px;line-height:22px;white-space:nowrap;overflow:hidden}
.summary{font-weight:600}
table{border-collapse:collapse;width:100%;margin:4px 0 10px}
th,td{text-align:left;vertical-align:top;padding:4px 8px;border-bottom:1px solid #f0f1f3}
th{font-weight:600;color:#374151;font-size:13px}
.id{font-family:ui-monospace,Menlo,Consolas,monospace;white-space:nowrap}
.chip{display:inline-block;border-radius:3px;padding:0 6px;margin:1px 3px 1px 0;font-size:12px;
font-family:ui-monospace,Menlo,Consolas,monospace}
.none{color:#9ca3af}
.failure{border-left:4px solid #b91c1c;padding:4px 12px;margin:14px 0;background:#fffafa}
.failure dl{display:grid;grid-template-columns:7.5em 1fr;gap:2px 10px;margin:6px 0}
.failure dt{font-weight:600;color:#374151}.failure dd{margin:0;white-space:pre-wrap}
blockquote{margin:4px 0 8px;padding:2px 10px;border-left:3px solid #d1d5db;color:#374151;white-space:pre-wrap}
pre{background:#f9fafb;padding:8px;overflow-x:auto;font-size:12px}
code{font-family:ui-monospace,Menlo,Consolas,monospace}
"""


def _e(value):
    return html.escape("" if value is None else str(value), quote=True)


def _chip(verdict, text, title=None):
    background, colour = COLOURS.get(verdict, COLOURS[SKIP])
    return '<span class="chip" style="background:%s;color:%s"%s>%s</span>' % (
        background, colour, ' title="%s"' % _e(title) if title else "", _e(text))


def _summary_bar(numbers, total):
    segments = []
    for verdict in ORDER:
        count = numbers[verdict]
        if count:
            background, colour = COLOURS[verdict]
            segments.append('<span style="width:%.3f%%;background:%s;color:%s" title="%s: %d">%s %d</span>'
                            % (100.0 * count / total, background, colour, verdict, count, verdict, count))
    return '<div class="bar" role="img" aria-label="%s">%s</div>' % (
        _e(_report.summary_line(numbers)), "".join(segments))


def _clause_matrix(doc, results, all_causes=()):
    """[html] one table per contract section, every clause with its checks' chips (and its causes')."""
    citing = {}
    for result in results:
        for clause_id in result.clauses:
            citing.setdefault(clause_id, []).append(result)
    broken = {}
    for cause in all_causes:
        if cause.clause_id:
            broken.setdefault(cause.clause_id, []).append(cause)
    out = []
    sections = doc.sections if doc is not None else []
    listed = set()
    for title, ids in sections:
        if not ids:
            continue
        out.append("<h3>%s</h3>" % _e(title))
        out.append("<table><tr><th>clause</th><th>level</th><th>title</th><th>checks</th></tr>")
        for clause_id in ids:
            clause = doc.clauses[clause_id]
            listed.add(clause_id)
            chips = "".join('<a href="#cause-%d">%s</a>' % (c.number, _chip(
                FAIL, "cause %d: %d checks" % (c.number, len(c.results)), c.name)) for c in broken.get(clause_id, []))
            chips += "".join(_chip(r.verdict, r.id, "%s: %s" % (r.verdict, r.title))
                             for r in citing.get(clause_id, []))
            out.append('<tr id="%s"><td class="id">%s</td><td>%s</td><td>%s</td><td>%s</td></tr>'
                       % (_e(clause_id), _e(clause_id), _e(clause.level), _e(clause.title),
                          chips or '<span class="none">no check in this run</span>'))
        out.append("</table>")
    # Clauses cited by a check but not found in the document (a check's defect): shown, not hidden.
    stray = sorted((set(citing) | set(broken)) - listed)
    if stray:
        out.append("<h3>Cited, but not in the contract document</h3><table>")
        for clause_id in stray:
            chips = "".join(_chip(FAIL, "cause %d" % c.number) for c in broken.get(clause_id, []))
            chips += "".join(_chip(r.verdict, r.id) for r in citing.get(clause_id, []))
            out.append('<tr><td class="id">%s</td><td>%s</td></tr>' % (_e(clause_id), chips))
        out.append("</table>")
    return out


def _cause(doc, cause, contract):
    out = ['<div class="failure" id="cause-%d">' % cause.number,
           "<h3>%s %s <small>(%d check%s)</small></h3>" % (
               _chip(FAIL, "cause %d" % cause.number), _e(cause.name), len(cause.results),
               "" if len(cause.results) == 1 else "s")]
    clause = doc.clauses.get(cause.clause_id) if doc is not None and cause.clause_id else None
    if clause is not None:
        out.append('<p><a class="id" href="#%s">%s</a> (%s) %s</p>' % (_e(clause.id), _e(clause.id),
                                                                       _e(clause.level), _e(clause.title)))
        out.append("<blockquote>%s</blockquote>" % _e("\n".join(_report._paragraphs(clause.text)).strip()))
    rows = [("Expected", cause.first.expected), ("Actual", "%s  (in %s)" % (cause.first.actual, cause.results[0].id)),
            ("Diagnosis", cause.first.diagnosis), ("Rerun", cause.results[0].repro)]
    out.append("<dl>%s</dl>" % "".join("<dt>%s</dt><dd>%s</dd>" % (label, _e(value))
                                       for label, value in rows if value))
    names = ", ".join(cause.check_ids())
    if len(cause.results) > _report.SHOWN_IN_A_LIST:
        out.append("<details><summary>The %d checks it failed</summary><p>%s</p></details>" % (
            len(cause.results), _e(names)))
    else:
        out.append("<p>The checks it failed: %s</p>" % _e(names))
    out.append("</div>")
    return out


def _failure(doc, result, contract, all_causes=()):
    out = ['<div class="failure" id="check-%s">' % _e(result.id),
           "<h3>%s <code>%s</code> %s</h3>" % (_chip(result.verdict, result.verdict), _e(result.id),
                                               _e(result.title))]
    mine = _report.causes_of(result, all_causes)
    links = ", ".join('<a href="#cause-%d">cause %d</a> (%s)' % (c.number, c.number, _e(c.name)) for c in mine)
    short = bool(mine) and not result.own_failure
    if short:
        out.append("<p>Failed by %s; see there.</p>" % links)
    for clause_id in ([] if short else result.clauses):
        clause = doc.clauses.get(clause_id) if doc is not None else None
        if clause is None:
            out.append("<p><code>%s</code>: not found in contract/%s.md</p>" % (_e(clause_id), _e(contract)))
            continue
        out.append('<p><a class="id" href="#%s">%s</a> (%s) %s</p>' % (_e(clause.id), _e(clause.id),
                                                                       _e(clause.level), _e(clause.title)))
        out.append("<blockquote>%s</blockquote>" % _e("\n".join(_report._paragraphs(clause.text)).strip()))
    rows = [("Expected", result.expected), ("Actual", result.actual), ("Diagnosis", result.diagnosis),
            ("Rerun", result.repro)]
    if short:
        rows = [("Rerun", result.repro)]
    if result.verdict == ERROR and result.reason:
        rows.insert(0, ("Harness", result.reason))
    if result.verdict == NOT_JUDGED:
        rows = [("Why", result.reason), ("Rerun", result.repro)]
    out.append("<dl>%s</dl>" % "".join("<dt>%s</dt><dd>%s</dd>" % (label, _e(value))
                                       for label, value in rows if value))
    if mine and not short:
        out.append("<p>Also failed by %s.</p>" % links)
    if result.transcript:
        out.append("<details><summary>Transcript (%d lines)</summary><pre>%s</pre></details>"
                   % (len(result.transcript), _e("\n".join(result.transcript))))
    out.append("</div>")
    return out


def render_html(report):
    """The page, as one string."""
    doc = _report._contract_doc(report.contract)
    numbers = _report.counts(report.results)
    total = max(1, len(report.results))
    head = [_report.versions_line(report.contract), "node %s" % report.node, "seed %s" % report.seed]
    if report.strict:
        head.append("strict")
    if report.wall_s is not None:
        head.append("%d checks in %.1f s" % (len(report.results), report.wall_s))
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           "<title>%s</title>" % _e("conformance %s %s: %s" % (report.contract, report.node,
                                                                _report.summary_line(numbers))),
           "<style>%s</style></head><body>" % CSS,
           "<h1>conformance %s <code>%s</code></h1>" % (_e(report.contract), _e(report.node)),
           '<ul class="meta">%s</ul>' % "".join("<li>%s</li>" % _e(item) for item in head + list(report.notes)),
           ('<p class="failure"><strong>Incomplete:</strong> %s</p>' % _e(report.incomplete)
            if report.incomplete else ""),
           _summary_bar(numbers, total),
           '<p class="summary">%s</p>' % _e(_report.summary_line(numbers))]
    not_passed = [r for r in report.results if r.verdict in (FAIL, ERROR, NOT_JUDGED, NON_STRICT)]
    all_causes = _report.causes(report.results)
    if all_causes:
        out.append("<h2>Causes (%d): invariants broken, each said once</h2>" % len(all_causes))
        for cause in all_causes:
            out.extend(_cause(doc, cause, report.contract))
    if not_passed:
        out.append("<h2>What did not pass (%d)</h2>" % len(not_passed))
        for result in sorted(not_passed, key=lambda r: ORDER.index(r.verdict)):
            out.extend(_failure(doc, result, report.contract, all_causes))
    out.append("<h2>Clauses</h2>")
    out.extend(_clause_matrix(doc, report.results, all_causes))
    out.append("<h2>Checks</h2>")
    for area, title, results in _report.sections(report):
        out.append("<h3>%s</h3><table><tr><th>verdict</th><th>check</th><th>title</th><th>clauses</th>"
                   "<th>time</th></tr>" % _e(title))
        for result in results:
            note = " (%s)" % result.reason if result.verdict == SKIP and result.reason else ""
            link = ("<a class=\"id\" href=\"#check-%s\">%s</a>" % (_e(result.id), _e(result.id))
                    if result in not_passed else '<span class="id">%s</span>' % _e(result.id))
            out.append("<tr><td>%s</td><td>%s</td><td>%s%s</td><td class=\"id\">%s</td><td>%.2f s</td></tr>"
                       % (_chip(result.verdict, result.verdict), link, _e(result.title), _e(note),
                          _e(", ".join(result.clauses)), result.duration_s))
        out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_html(report, path):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(render_html(report))
