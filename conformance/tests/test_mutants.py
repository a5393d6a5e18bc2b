"""Mutants: loading, REPLACE semantics, killed / survived / broken, end to end."""

import contextlib
import io
import os
import shutil
import tempfile
import unittest

from conformance import checks, mutants
from conformance.mutants import BROKEN, KILLED, SURVIVED

TOY = "conformance/tests/data/toy_node.py"


def write(directory, name, text):
    with open(os.path.join(directory, name + ".py"), "w") as handle:
        handle.write(text)


class ApplyTest(unittest.TestCase):
    def test_exactly_once(self):
        self.assertEqual(mutants.apply("a b c", [("b", "B"), ("c", "C")]), "a B C")
        with self.assertRaises(ValueError) as raised:
            mutants.apply("a b b", [("b", "B")])
        self.assertIn("occurs 2 times", str(raised.exception))
        with self.assertRaises(ValueError):
            mutants.apply("a", [("z", "Z")])


class AnchorTest(unittest.TestCase):
    """An old text anchors on code: comments and whitespace may change under it, the code may not."""

    NODE = 'def f(x):\n    y = x + 1  # add one\n    return y  # done\n'
    OLD = '    y = x + 1  # add one\n'

    def test_code_view_drops_comments_and_collapses_whitespace_outside_and_inside_strings(self):
        self.assertEqual(mutants.code_view('a  =  "x  # y"  # c\nb = 1')[0], 'a = "x # y" b = 1')
        self.assertEqual(mutants.code_view('s = """a\n  # kept\n"""  # dropped\nt = "\\"#"  # c')[0],
                         's = """a # kept """ t = "\\"#"')
        view, where = mutants.code_view("  x = 1  # c\n")
        self.assertEqual((view, where[0], where[-1]), ("x = 1", 2, 6))

    def test_reworded_comments_and_spacing_still_match_and_keep_the_nodes_comment(self):
        reworded = 'def f(x):\n    y  =  x + 1   # increment (reworded)\n    return y\n'
        self.assertEqual(mutants.apply(reworded, [(self.OLD, '    y = x + 2  # add one\n')]),
                         'def f(x):\n    y = x + 2   # increment (reworded)\n    return y\n')
        # A new text with other lines: it replaces the whole line, with its own indentation.
        self.assertEqual(mutants.apply(reworded, [(self.OLD, '    y = x - 1\n    y = -y\n')]),
                         'def f(x):\n    y = x - 1\n    y = -y\n    return y\n')

    def test_code_moved_deeper_takes_the_new_text_with_it(self):
        # The node's line now sits one block deeper (inside a try:); the mutant was written before.
        deeper = 'def f(x):\n    try:\n        y = x + 1  # add one, reworded\n    finally:\n        pass\n    return y\n'
        mutated = mutants.apply(deeper, [(self.OLD, '    if x:\n        y = x - 1\n')])
        self.assertEqual(mutated, 'def f(x):\n    try:\n        if x:\n            y = x - 1\n    finally:\n'
                                  '        pass\n    return y\n')
        compile(mutated, "f.py", "exec")

    def test_an_exact_match_ending_inside_a_lengthened_comment_is_matched_on_code(self):
        # The mutant's old text ended at "# clause"; the node's comment now says more after it.
        source = 'def f(x):\n    y = x + 1  # clause: and the reason it exists\n    return y\n'
        mutated = mutants.apply(source, [('    y = x + 1  # clause', '    y = x - 1')])
        self.assertEqual(mutated, 'def f(x):\n    y = x - 1  # clause: and the reason it exists\n    return y\n')
        compile(mutated, "f.py", "exec")

    def test_changed_code_or_an_ambiguous_anchor_is_refused(self):
        with self.assertRaises(ValueError):
            mutants.apply(self.NODE.replace("x + 1", "x + 10"), [(self.OLD, "")])
        twice = self.NODE + "    y = x + 1  # again\n"
        with self.assertRaises(ValueError) as raised:
            mutants.apply(twice.replace("# add one", "# reworded"), [(self.OLD, "")])
        self.assertIn("2 times as code", str(raised.exception))
        with self.assertRaises(ValueError) as raised:
            mutants.apply(self.NODE, [("  # add two\n", "")])  # a comment alone anchors nothing...
        self.assertIn("has no code", str(raised.exception))
        self.assertEqual(mutants.apply(self.NODE, [("  # done", "")]).count("done"), 0)  # ...unless verbatim


def reworded(source):
    """source with every comment's words replaced and its spacing changed: the same code."""
    import tokenize
    lines = source.splitlines(keepends=True)
    comments = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    for token in reversed(comments):
        (row, col), (_row, end) = token.start, token.end
        lines[row - 1] = lines[row - 1][:col] + "   # reworded in line %d" % row + lines[row - 1][end:]
    return "".join(lines)


class CommentOnlyChangeTest(unittest.TestCase):
    """Rewording every comment of every reference node breaks no mutant (issue 23: anchors are code)."""

    def test_every_mutant_applies_to_its_node_with_every_comment_reworded(self):
        texts, broken = {}, []
        for contract in checks.contracts():
            for mutant in mutants.load_all(contract):
                if mutant.problem:
                    continue
                if mutant.node not in texts:
                    with open(os.path.join(mutants.REPO_ROOT, mutant.node), encoding="utf-8") as handle:
                        texts[mutant.node] = reworded(handle.read())
                try:
                    mutated = mutants.apply(texts[mutant.node], mutant.replace)
                    if not os.environ.get("CONFORMANCE_CHECK_FAST"):
                        compile(mutated, mutant.node, "exec")
                except (ValueError, SyntaxError) as problem:
                    broken.append("%s/%s: %s" % (contract, mutant.name, str(problem)[:160]))
        self.assertEqual(broken, [])
        self.assertGreaterEqual(len(texts), 4)


class RebaseTest(unittest.TestCase):
    def test_a_broken_anchor_is_listed_with_the_lines_most_alike_now(self):
        directory = tempfile.mkdtemp(prefix="test-mutants-")
        self.addCleanup(shutil.rmtree, directory, True)
        write(directory, "stale", '"""Greets nobody."""\nNODE = %r\nREPLACE = [(%r, "")]\nKILLS = ["greet.hello"]\n'
              % (TOY, '    print("hello, %s" % nam, flush=True)\n'))
        write(directory, "fine", '"""Says nothing."""\nNODE = %r\nREPLACE = [(%r, "")]\nKILLS = ["work.farewell"]\n'
              % (TOY, '    print("bye", flush=True)'))
        out = io.StringIO()
        self.assertEqual(mutants.rebase_report(["_selftest"], out, directory), 1)
        text = out.getvalue()
        self.assertIn("stale.py REPLACE[0]: old text occurs 0 times", text)
        self.assertNotIn("fine.py", text)
        self.assertRegex(text, r"most alike now \(9\d %\), line \d+:\n(.*\n)*  > +\d+ \|     print\(\"hello, %s\" % name")
        self.assertTrue(text.endswith("mutants: 1 anchor broken\n"))


class LoadTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="test-mutants-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def test_well_formed(self):
        write(self.dir, "good", '"""Breaks x."""\nNODE = "n.py"\nREPLACE = [("a", "b")]\nKILLS = ["c.d"]\n')
        loaded = mutants.load_all("_selftest", self.dir)
        self.assertEqual(len(loaded), 1)
        self.assertEqual((loaded[0].name, loaded[0].node, loaded[0].kills, loaded[0].problem),
                         ("good", "n.py", ["c.d"], None))
        self.assertEqual(loaded[0].doc, "Breaks x.")

    def test_malformed(self):
        write(self.dir, "nodoc", 'NODE = "n.py"\nREPLACE = [("a", "b")]\nKILLS = ["c"]\n')
        write(self.dir, "computed", '"""x"""\nNODE = "n" + ".py"\nREPLACE = [("a", "b")]\nKILLS = ["c"]\n')
        write(self.dir, "shapes", '"""x"""\nNODE = 1\nREPLACE = [("a",)]\nKILLS = []\n')
        write(self.dir, "syntax", '"""x"""\nNODE = (\n')
        problems = dict((m.name, m.problem) for m in mutants.load_all("_selftest", self.dir))
        self.assertIn("docstring", problems["nodoc"])
        self.assertIn("not a literal", problems["computed"])
        self.assertIn("NODE", problems["shapes"])
        self.assertIn("REPLACE", problems["shapes"])
        self.assertIn("KILLS", problems["shapes"])
        self.assertIn("cannot read", problems["syntax"])

    def test_shipped_selftest_mutants_are_well_formed(self):
        loaded = mutants.load_all("_selftest")
        self.assertGreaterEqual(len(loaded), 8)
        self.assertTrue(all(m.problem is None for m in loaded), [m for m in loaded if m.problem])


    def test_covering_set_names_every_check_with_few_mutants(self):
        def m(name, *kills, **kw):
            return mutants.Mutant(name, name + ".py", "d", "n.py", [("a", "b")], list(kills), kw.get("problem"))
        wide, narrow, other, spare = m("wide", "x", "y"), m("narrow", "y"), m("other", "z"), m("spare", "x")
        bad = m("bad", problem="KILLS must be a non-empty list of check IDs")
        chosen = [c.name for c in mutants.covering_set([spare, narrow, wide, other, bad])]
        self.assertEqual(chosen, ["bad", "other", "wide"])   # a broken mutant is kept, to be reported
        # Ties go by name, so every machine runs the same set.
        self.assertEqual([c.name for c in mutants.covering_set([m("b2", "x"), m("b1", "x")])], ["b1"])
        for contract in checks.contracts():
            every = mutants.load_all(contract)
            named = set(k for x in every for k in x.kills)
            chosen = mutants.covering_set(every)
            self.assertEqual(set(k for x in chosen for k in x.kills), named, contract)
            self.assertLess(len(chosen), len(every), contract)

    @unittest.skipIf(os.environ.get("CONFORMANCE_CHECK_FAST"), "make check-fast leaves this second mutants run "
                                                               "to make test")
    def test_covering_run_reports_the_set(self):
        out = io.StringIO()
        status = mutants.run_mutants("_selftest", jobs=4, out=out, covering=True)
        text = out.getvalue()
        self.assertEqual(status, 0, text)
        every = len(mutants.load_all("_selftest"))
        chosen = len(mutants.covering_set(mutants.load_all("_selftest")))
        self.assertIn("mutants of _selftest (%d of %d: a covering set" % (chosen, every), text)
        self.assertEqual(text.splitlines()[-1], "mutants: %d passed, 0 failed" % chosen)

    def test_reference_mutants_apply_once_and_parse(self):
        """A mutant whose copy does not even parse is "killed" by the SyntaxError,
        whatever its checks: every mutant of a reference node must yield a
        program (so an edit of a node that shifts a REPLACE text shows here,
        in seconds, instead of as a kill for the wrong reason). make check-fast
        applies them but leaves the parse (9 s for 305 mutants) to make test."""
        import ast
        parse = not os.environ.get("CONFORMANCE_CHECK_FAST")
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        for contract in checks.contracts():   # every contract with a reference node
            for mutant in mutants.load_all(contract):
                with self.subTest(contract=contract, mutant=mutant.name):
                    self.assertIsNone(mutant.problem)
                    with open(os.path.join(root, mutant.node), encoding="utf-8") as handle:
                        source = handle.read()
                    mutated = mutants.apply(source, mutant.replace)
                    if parse:
                        ast.parse(mutated, mutant.name)


class RunTest(unittest.TestCase):
    def test_every_selftest_mutant_is_killed(self):
        out = io.StringIO()
        status = mutants.run_mutants("_selftest", jobs=4, out=out)
        text = out.getvalue()
        self.assertEqual(status, 0, text)
        self.assertEqual(text.splitlines()[-1], "mutants: 9 passed, 0 failed")
        self.assertIn("stop.sigterm-pid1  no_sigterm_handler", text)
        # An example-work check is run for a mutant (with --reference) and kills it.
        self.assertRegex(text, r"killed +no_farewell +work\.farewell FAIL")
        self.assertNotIn("(none)", text)

    def test_survivor_broken_and_unknown_check(self):
        directory = tempfile.mkdtemp(prefix="test-mutants-")
        self.addCleanup(shutil.rmtree, directory, True)
        write(directory, "harmless", '"""Changes a comment only."""\nNODE = %r\n'
                                     'REPLACE = [("# how often the waiting loop", "# how often the loop")]\n'
                                     'KILLS = ["greet.hello"]\n' % TOY)
        write(directory, "missing_text", '"""Old text is not there."""\nNODE = %r\n'
                                         'REPLACE = [("no such text", "x")]\nKILLS = ["greet.hello"]\n' % TOY)
        write(directory, "unknown_check", '"""Names a check that does not exist."""\nNODE = %r\n'
                                          'REPLACE = [("hello, %%s", "hi, %%s")]\n'
                                          'KILLS = ["greet.hello", "no.such-check"]\n' % TOY)
        write(directory, "no_syntax", '"""Leaves the node unparseable: killed by nothing but the SyntaxError."""\n'
                                      'NODE = %r\nREPLACE = [("hello, %%s", "hello, %%s\\"(")]\n'
                                      'KILLS = ["greet.hello"]\n' % TOY)
        outcomes = dict((m.name, mutants.run_one("_selftest", m)) for m in mutants.load_all("_selftest", directory))
        self.assertEqual(outcomes["no_syntax"].status, BROKEN)  # never counted as killed
        self.assertIn("line", outcomes["no_syntax"].detail)
        self.assertEqual(outcomes["harmless"].status, SURVIVED)
        self.assertEqual(outcomes["harmless"].verdicts, {"greet.hello": "PASS"})
        self.assertEqual(outcomes["missing_text"].status, BROKEN)
        self.assertIn("occurs 0 times", outcomes["missing_text"].detail)
        self.assertEqual(outcomes["unknown_check"].status, BROKEN)
        self.assertIn("no.such-check", outcomes["unknown_check"].detail)
        out = io.StringIO()
        status = mutants.run_mutants("_selftest", only=["harmless", "missing_text"], directory=directory, out=out)
        self.assertEqual(status, 1)
        text = out.getvalue()
        self.assertIn("survived: harmless", text)
        self.assertIn("broken (ERROR): missing_text", text)
        self.assertEqual(text.splitlines()[-1], "mutants: 0 passed, 2 failed")

    def test_should_check_is_killed_by_non_strict(self):
        mutant = [m for m in mutants.load_all("_selftest") if m.name == "no_progress"][0]
        outcome = mutants.run_one("_selftest", mutant)
        self.assertEqual((outcome.status, outcome.verdicts), (KILLED, {"greet.progress": "NON-STRICT"}))

    def test_cli(self):
        with contextlib.redirect_stderr(io.StringIO()) as err:
            self.assertEqual(mutants.main(["no_such_contract"]), 2)
        self.assertIn("unknown contract", err.getvalue())


if __name__ == "__main__":
    unittest.main()
