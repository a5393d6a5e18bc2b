"""Nodes judged under another interpreter (--python): no check may assume the harness's own (issue 24).

A selection of every contract's checks, the static ones and those that start the node's children
included, runs with the oldest Python 3.9+ this machine has besides the harness's own; `make
test-pythons` runs every platform check under the oldest and the newest.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

from conformance import suite
from conformance.clauses import REPO_ROOT

# Checks that start the node or its children, or read their processes (probe children, normalisers, runners).
SELECTION = {
    "step": "node.*,exit.codes,stop.first-byte,peer.expiry-forms",
    "crawler": "node.*,child.argv,child.env,argv.help",
    "session": "node.*,isolation.sandbox,probe.expression-data",
    "scan": "node.*,runner.spawn,runner.identity,argv.help",
}


@unittest.skipIf(os.environ.get("CONFORMANCE_CHECK_FAST"), "make check-fast leaves node runs to make test")
class SecondInterpreterTest(unittest.TestCase):
    def test_a_selection_of_every_contract_passes_under_another_python_and_the_report_names_it(self):
        found = suite.interpreters()
        others = [version for version in found if version != tuple(sys.version_info[:2])]
        if not others:
            self.skipTest("no Python 3.9 or newer here besides the harness's own %d.%d" % sys.version_info[:2])
        python = found[min(others)]
        for contract, node in suite.REFERENCE_NODES:
            if os.environ.get("CONFORMANCE_CONTRACT") not in (None, "", contract):
                continue
            with self.subTest(contract=contract), tempfile.TemporaryDirectory() as directory:
                report = os.path.join(directory, "report.json")
                done = subprocess.run([sys.executable, "-m", "conformance", contract, node, "--python", python,
                                       "--only", SELECTION[contract], "--jobs", "4", "--json", report],
                                      cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
                self.assertEqual(done.returncode, 0, done.stdout.decode("utf-8", "replace")[-3000:])
                with open(report, encoding="utf-8") as handle:
                    document = json.load(handle)
                self.assertTrue(document["interpreter"].startswith(python + " (Python %d.%d." % min(others)))
                self.assertGreaterEqual(len(document["checks"]), 4)


if __name__ == "__main__":
    unittest.main()
