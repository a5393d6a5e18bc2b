"""A node deployed with other values of its contract's deployment constants, judged with and without them.

Each contract's deployment test lists lines of its reference node's section 2 and their
replacements (with the --deploy assignment that tells the harness the same value) and the
checks those values change the verdict of.  `judge_with_and_without` writes the deployed copy
and asserts that it passes those checks with --deploy and fails each of them without.
"""

import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def judge_with_and_without(test, contract, node, other_values, sensitive_checks, reference=False, timeout=600):
    """other_values: [(line of section 2, its replacement, "NAME=VALUE")]; sensitive_checks: check IDs."""
    with open(node, encoding="utf-8") as handle:
        text = handle.read()
    for old, new, _assignment in other_values:
        test.assertEqual(text.count(old), 1, "section 2 of the reference node no longer has %r" % old)
        text = text.replace(old, new)
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)  # the node may run as another user in a PID namespace
        path = os.path.join(tmp, "deployed_" + os.path.basename(node))
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        base = [sys.executable, "-m", "conformance", contract, path, "--only", ",".join(sensitive_checks),
                "--jobs", "2"] + (["--reference"] if reference else [])
        deploy = [arg for item in other_values for arg in ("--deploy", item[2])]
        judged = subprocess.run(base + deploy, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                universal_newlines=True, timeout=timeout)
        test.assertEqual(judged.returncode, 0, judged.stdout[-3000:])
        test.assertIn("deployment: ", judged.stdout)
        unjudged = subprocess.run(base, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  universal_newlines=True, timeout=timeout)
        test.assertEqual(unjudged.returncode, 1, unjudged.stdout[-3000:])
        for check_id in sensitive_checks:
            test.assertRegex(unjudged.stdout, r"(?m)^\s+FAIL\s+%s\s" % re.escape(check_id),
                             "%s passed a node whose deployment values the harness did not share" % check_id)
