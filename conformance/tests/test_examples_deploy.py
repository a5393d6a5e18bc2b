"""examples/ci/ and examples/deploy/ must stay true to the harness and the nodes.

Every harness command the CI examples run is parsed by the harness's own
command-line parser; the container image runs the node as PID 1 and stops it
with SIGTERM; each orchestrator's grace covers the node's stop and receipt
budget, read from the node's own constants.
"""

import os
import re
import shlex
import unittest

from conformance import cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
# The placeholders the CI examples use for the user's node, and a real node of that contract.
NODES = {"my_step.py": "nodes/hello_node.py", "my_crawler_job.py": "nodes/crawler_job.py"}
STOP_BOUND_S = 1.0  # STEP-STOP-2 and CRAWLER-STOP-*: from the signal to the end of the transfer
CLOUD_RUN_GRACE_S = 10.0  # fixed by the platform


def read(*parts):
    with open(os.path.join(EXAMPLES, *parts), encoding="utf-8") as handle:
        return handle.read()


def node_constant(node, name):
    with open(os.path.join(ROOT, "nodes", node), encoding="utf-8") as handle:
        return float(re.search(r"^%s = ([0-9.]+)" % name, handle.read(), re.M).group(1))


def harness_commands(text):
    """The argument lists after `conformance.pyz` on every line that runs it."""
    commands = []
    for line in text.splitlines():
        if "conformance.pyz" not in line or line.lstrip().startswith("#"):
            continue
        command = re.sub(r"^\s*(?:-\s+)?(?:run:\s*)?", "", line)
        words = shlex.split(command)
        commands.append(words[[i for i, w in enumerate(words) if w.endswith("conformance.pyz")][0] + 1:])
    return commands


class CiExamplesTest(unittest.TestCase):
    def test_every_harness_command_is_a_valid_command_line(self):
        seen = 0
        for name in sorted(os.listdir(os.path.join(EXAMPLES, "ci"))):
            for args in harness_commands(read("ci", name)):
                seen += 1
                if args == ["--version"]:
                    continue
                args = [os.path.join(ROOT, NODES[a]) if a in NODES else a for a in args]
                with self.subTest(example=name, args=args):
                    options, node = cli.parse(args)  # raises UsageError on a bad command line
                    self.assertIsNotNone(node)
                    self.assertTrue(options.junit and options.html, "keep the JUnit file and the HTML page")
        self.assertGreaterEqual(seen, 3)


class DeployExamplesTest(unittest.TestCase):
    def test_the_image_runs_the_node_as_pid_1_and_stops_it_with_sigterm(self):
        text = read("deploy", "Dockerfile")
        self.assertRegex(text, r'(?m)^ENTRYPOINT \["python3", "/app/node\.py"\]$')  # exec form: no shell
        self.assertRegex(text, r"(?m)^STOPSIGNAL SIGTERM$")
        self.assertNotRegex(text, r"(?m)^[^#]*\b(tini|dumb-init)\b")

    def test_kubernetes_grace_covers_the_step_nodes_stop_and_receipt(self):
        grace = float(re.search(r"terminationGracePeriodSeconds: (\d+)", read("deploy", "kubernetes-job.yaml"))
                      .group(1))
        self.assertGreaterEqual(grace, STOP_BOUND_S + node_constant("hello_node.py", "RECEIPT_DEADLINE_S"))

    def test_cloud_runs_fixed_grace_covers_the_crawlers_cancelled_bundle(self):
        self.assertIn("10 s later", read("deploy", "cloud-run-job.yaml"))
        self.assertGreaterEqual(CLOUD_RUN_GRACE_S, STOP_BOUND_S + node_constant("crawler_job.py", "CANCEL_GRACE_S"))


if __name__ == "__main__":
    unittest.main()
