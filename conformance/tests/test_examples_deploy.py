"""examples/ci/ and examples/deploy/ must stay true to the harness and the nodes.

Every harness command the CI examples run is parsed by the harness's own
command-line parser; the container image runs the node as PID 1 and stops it
with SIGTERM; each orchestrator's grace covers the node's stop and receipt
budget, read from the node's own constants.
"""

import json
import os
import re
import shlex
import subprocess
import sys
import unittest

from conformance import cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
# The placeholders the CI examples use for the user's node, and a real node of that contract.
NODES = {"my_step.py": "nodes/hello_node.py", "my_crawler_job.py": "nodes/crawler_job.py"}
STOP_BOUND_S = 1.0  # STEP-STOP-2 and CRAWLER-STOP-*: from the signal to the end of the transfer
CLOUD_RUN_GRACE_S = 10.0  # fixed by the platform
SCAN_STOP_S = 3.0  # SCAN-STOP-3: a stop ends within 3 s of its signal


def read(*parts):
    with open(os.path.join(EXAMPLES, *parts), encoding="utf-8") as handle:
        return handle.read()


def node_constant(node, name):
    with open(os.path.join(ROOT, "nodes", node), encoding="utf-8") as handle:
        return float(re.search(r"^%s = ([0-9.]+)" % name, handle.read(), re.M).group(1))


def _node_help(node):
    done = subprocess.run([sys.executable, os.path.join(ROOT, "nodes", node), "--help"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, env={}, timeout=60)
    return done.stdout.decode("utf-8", "replace")


def harness_commands(text):
    """The argument lists after `conformance.pyz` on every line that runs it with python3."""
    commands = []
    for line in text.splitlines():
        if "conformance.pyz" not in line or line.lstrip().startswith("#"):
            continue
        command = re.sub(r"^\s*(?:-\s+)?(?:run:\s*)?", "", line)
        words = shlex.split(command)
        runs = [i for i, w in enumerate(words) if w.endswith("conformance.pyz") and i > 0
                and re.search(r"python3\)?\"?$", words[i - 1])]
        if runs:
            commands.append(words[runs[0] + 1:])
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

    def test_the_harness_is_built_from_a_pinned_tag_not_committed(self):
        for name in sorted(os.listdir(os.path.join(EXAMPLES, "ci"))):
            text = read("ci", name)
            with self.subTest(example=name):
                self.assertRegex(text, r"git clone [^\n]*--branch \"\$CONFORMANCE_REF\"")
                self.assertRegex(text, r"make -C \S+ dist")
                ref = re.search(r"CONFORMANCE_REF: (\S+)", text).group(1)
                self.assertRegex(ref, r"^v\d")   # a tag, never a moving branch
                self.assertNotIn("tools/conformance.pyz", text)

    def test_the_github_workflow_may_publish_checks(self):
        text = read("ci", "github-actions.yml")
        permissions = re.search(r"(?m)^permissions:\n((?:  .*\n)+)", text).group(1)
        self.assertIn("checks: write", permissions)   # the JUnit action fails without it on read-only tokens
        self.assertIn("contents: read", permissions)


class DeployExamplesTest(unittest.TestCase):
    def test_the_image_runs_the_node_as_pid_1_and_stops_it_with_sigterm(self):
        text = read("deploy", "Dockerfile")
        self.assertRegex(text, r'(?m)^ENTRYPOINT \["python3", "/app/node\.py"\]$')  # exec form: no shell
        self.assertRegex(text, r"(?m)^STOPSIGNAL SIGTERM$")
        self.assertNotRegex(text, r"(?m)^[^#]*\b(tini|dumb-init)\b")

    def test_every_node_has_a_deployment_example(self):
        names = os.listdir(os.path.join(EXAMPLES, "deploy"))
        for node in ("step", "crawler", "session", "scan"):
            self.assertTrue([n for n in names if n.endswith("-%s.yaml" % node)], node)

    def test_kubernetes_grace_covers_the_step_nodes_stop_and_receipt(self):
        grace = float(re.search(r"terminationGracePeriodSeconds: (\d+)", read("deploy", "kubernetes-job-step.yaml"))
                      .group(1))
        self.assertGreaterEqual(grace, STOP_BOUND_S + node_constant("hello_node.py", "RECEIPT_DEADLINE_S"))

    def test_cloud_runs_fixed_grace_covers_the_crawlers_cancelled_bundle(self):
        self.assertIn("10 s later", read("deploy", "cloud-run-job-crawler.yaml"))
        self.assertGreaterEqual(CLOUD_RUN_GRACE_S, STOP_BOUND_S + node_constant("crawler_job.py", "CANCEL_GRACE_S"))

    def test_the_session_job_has_the_six_cells_and_fits_cloud_runs_grace(self):
        text = read("deploy", "cloud-run-job-session.yaml")
        args = json.loads("[%s]" % re.search(r"args: \[(.*?)\]", text, re.S).group(1))
        self.assertEqual(args[0::2], ["--session-dispatch-id", "--session-dispatch-exchange-url",
                                      "--session-dispatch-audience"])   # SESSION-ARGV-2: this order
        dispatch_id, url, audience = args[1::2]
        self.assertRegex(dispatch_id, r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
        origin = re.search(r"name: STUDIO_API_ORIGIN\n\s+value: (\S+)", text).group(1)
        self.assertEqual(audience, origin)   # SESSION-DISPATCH-1
        self.assertEqual(url, "%s/internal/v3/session-worker/dispatches/%s:exchange" % (origin, dispatch_id))
        self.assertGreaterEqual(CLOUD_RUN_GRACE_S, node_constant("session_worker.py", "STOP_GRACE_S") + 1)

    def test_the_scan_statefulset_keeps_state_per_replica_and_its_grace_covers_a_drain(self):
        text = read("deploy", "kubernetes-statefulset-scan.yaml")
        self.assertRegex(text, r"(?m)^kind: StatefulSet$")
        self.assertIn("volumeClaimTemplates:", text)
        mount = re.search(r"mountPath: (\S+)", text).group(1)
        for variable in ("HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):   # SCAN-CONFIG-3: the trees, on the volume
            value = re.search(r"name: %s\n\s+value: (\S+)" % variable, text).group(1)
            self.assertTrue(value == mount or value.startswith(mount + "/"), variable)
        args = json.loads("[%s]" % re.search(r"args: \[(.*?)\]", text, re.S).group(1))
        self.assertNotIn("--token", args)   # a token on argv is visible to every process of the node
        self.assertIn("name: TRUF_WORKER_TOKEN\n              valueFrom:\n                secretKeyRef:", text)
        drain = float(args[args.index("--drain-seconds") + 1])
        grace = float(re.search(r"terminationGracePeriodSeconds: (\d+)", text).group(1))
        self.assertGreaterEqual(grace, drain + node_constant("scan_worker.py", "PROGRESS_FINAL_DRAIN_S") + SCAN_STOP_S)
        options = re.findall(r"--[a-z-]+", _node_help("scan_worker.py"))
        for arg in args:
            if arg.startswith("--"):
                self.assertIn(arg, options)


if __name__ == "__main__":
    unittest.main()
