"""Run the hello node once against the harness's fake platform and show what happened.

    python3 examples/demo.py            # or: make demo
    python3 examples/demo.py NODE.py    # the same job for another node

The job: three small CSV inputs pinned by sha256, presigned URLs from a
loopback object store, a credentials envelope the node must find through
LSPO_CREDENTIALS_FILE. The demo prints the node's progress lines as they
come, then the store's contents, result.json and the completion marker, as
the platform would collect them. Nothing here is faked differently from the
conformance checks: it is the same plane (conformance/planes/step.py).
"""

import json
import os
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from conformance.planes.step import KEY_PREFIX, Input, StepPlane  # noqa: E402
from conformance.runner import Runner  # noqa: E402


class DemoContext:
    """The little of a check's context the plane uses."""

    def __init__(self, node):
        self.node = node
        self.seed = 0
        self.tmp = tempfile.mkdtemp(prefix="hello-demo-")

    def tmpdir(self, name):
        path = os.path.join(self.tmp, name)
        os.makedirs(path, exist_ok=True)
        return path

    def note(self, text):
        pass

    def start_node(self, env, args=(), pid1=True, memory_limit_bytes=None):
        return Runner.start([sys.executable, self.node] + list(args), env, pid1=pid1,
                            memory_limit_bytes=memory_limit_bytes)

    def fail(self, expected, actual, diagnosis=None):
        raise SystemExit("demo: expected %s, got %s" % (expected, actual))


def main(argv):
    node = argv[1] if len(argv) > 1 else os.path.join(ROOT, "nodes", "hello_node.py")
    ctx = DemoContext(node)
    inputs = [Input("cities.csv", b"city,country\nLisbon,PT\nOsaka,JP\nQuito,EC\n"),
              Input("rivers.csv", b"river,km\nDanube,2850\nMekong,4909\n", port="geo"),
              Input("notes/readme.txt", b"pinned inputs are verified while streaming\n")]
    plane = StepPlane(ctx, inputs=inputs)
    try:
        print("$ python3 %s    (LSPO_CREDENTIALS_FILE=<envelope>, TMPDIR=<scratch>)" % os.path.relpath(node, ROOT))
        proc = plane.start()
        result = plane.wait(proc, timeout=60)
        for _t, line in result.stdout_lines:
            print("  stdout | " + line)
        for _t, line in result.stderr_lines:
            print("  stderr | " + line)
        print("exit status %s%s\n" % (result.exit_code, " (as PID 1)" if result.is_pid1 else ""))
        print("staging prefix %s:" % KEY_PREFIX)
        for key, obj in sorted(plane.store.objects().items(), key=lambda kv: kv[1].seq):
            if key.startswith(KEY_PREFIX):
                print("  %-28s %6d bytes  sha256 %s..." % (key[len(KEY_PREFIX):], obj.size, obj.sha256[:16]))
        print("\nresult.json:")
        print(json.dumps(plane.report, indent=2, sort_keys=True) if plane.report else "  (none)")
        print("\n__lspo_complete.json (written last):")
        print(plane.marker_raw.decode() if plane.marker_raw else "  (none)")
        return 0 if result.exit_code == 0 and plane.marker else 1
    finally:
        plane.close()
        shutil.rmtree(ctx.tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
