"""The --html report (conformance/report_html.py), parsed back with html.parser.

The run is the _selftest contract against its `prints_token` mutant: a node
that prints its token, so the page must show the failures with the token
masked as in every other report, and still name every check and every clause.
"""

import ast
import html.parser
import io
import os
import re
import tempfile
import unittest

from conformance import checks, clauses, cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MUTANT = os.path.join(ROOT, "conformance", "tests", "data", "mutants", "_selftest", "prints_token.py")
CANARY = re.compile(r"CANARY[0-9a-f]{32}")
VOID = {"meta", "br", "hr", "img", "input", "link"}


class Page(html.parser.HTMLParser):
    """Text, tags and attributes of a page, and whether its elements nest."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.text, self.tags, self.attrs, self.stack, self.misnested = [], [], [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.misnested.append(tag)
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def mutated_node(directory):
    with open(MUTANT, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    values = dict((n.targets[0].id, ast.literal_eval(n.value)) for n in tree.body if isinstance(n, ast.Assign))
    with open(os.path.join(ROOT, values["NODE"]), encoding="utf-8") as handle:
        text = handle.read()
    for old, new in values["REPLACE"]:
        text = text.replace(old, new)
    path = os.path.join(directory, "toy_node.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


class HtmlReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        os.chmod(cls.tmp.name, 0o755)
        node = mutated_node(cls.tmp.name)
        cls.page_path = os.path.join(cls.tmp.name, "report.html")
        out = io.StringIO()
        cls.status = cli.main(["_selftest", node, "--reference", "--html", cls.page_path, "-v"], out=out)
        cls.terminal = out.getvalue()
        with open(cls.page_path, encoding="utf-8") as handle:
            cls.raw = handle.read()
        cls.page = Page()
        cls.page.feed(cls.raw)
        cls.page.close()
        cls.text = " ".join(cls.page.text)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_the_run_failed_as_the_mutant_should(self):
        self.assertEqual(self.status, 1)
        self.assertIn("redact.token", self.text)

    def test_every_check_and_every_clause_appears(self):
        for item in checks.load("_selftest"):
            self.assertIn(item.id, self.text)
        for clause_id in clauses.load("_selftest").clauses:
            self.assertIn(clause_id, self.text)

    def test_no_secret_appears_and_the_leak_is_shown_masked(self):
        self.assertIn("toy: token", self.terminal)  # the node did print its token ...
        self.assertEqual(CANARY.findall(self.raw), [])  # ... and the page never shows it
        self.assertIn("[secret]", self.text)

    def test_a_failure_shows_clause_text_expected_actual_diagnosis_rerun(self):
        for label in ("Expected", "Actual", "Rerun"):
            self.assertIn(label, self.text)
        self.assertIn("python3 -m conformance _selftest", self.text)
        self.assertIn("details", self.page.tags)  # the transcript, folded away

    def test_one_leak_is_one_cause_and_its_clause_is_marked_failed(self):
        self.assertIn("Causes (1): invariants broken, each said once", self.text)
        self.assertEqual(self.raw.count('id="cause-1"'), 1)
        row = re.search(r'<tr id="SELFTEST-REDACT-1">.*?</tr>', self.raw).group(0)
        self.assertIn("cause 1: 5 checks", row)   # the clause the leak breaks, not "no check in this run"
        self.assertIn("Failed by", self.text)     # the checks it failed point to it...
        self.assertEqual(self.raw.count("The token is never shown"), 2)  # ...instead of each quoting clauses

    def test_self_contained_and_well_nested(self):
        self.assertNotIn("script", self.page.tags)
        self.assertNotIn("link", self.page.tags)
        external = [value for name, value in self.page.attrs
                    if name in ("src", "href") and value and not value.startswith("#")]
        self.assertEqual(external, [])
        self.assertEqual((self.page.misnested, self.page.stack), ([], []))
        self.assertRegex(self.text, r"conformance: \d+ passed, \d+ failed, \d+ not judged, \d+ skipped")


if __name__ == "__main__":
    unittest.main()
