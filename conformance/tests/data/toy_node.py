"""Toy node for the harness's own tests: the _selftest contract.

    TOY_NAME=world python3 conformance/tests/data/toy_node.py
    python3 -m conformance _selftest conformance/tests/data/toy_node.py

Each contract behaviour sits on its own line tagged with its clause, so the
mutants in conformance/tests/data/mutants/_selftest/ can break one at a time.
"""

import argparse
import os
import signal
import sys
import tempfile
import time

POLL_S = 0.01  # how often the waiting loop looks at the stop flag


def main(argv=None):
    parser = argparse.ArgumentParser(description="Greets, or waits for a signal (TOY_WAIT).")
    parser.parse_args(argv)
    name = os.environ.get("TOY_NAME", "world")
    token = os.environ.get("TOY_TOKEN", "")
    stopped = []
    signal.signal(signal.SIGTERM, lambda signum, frame: stopped.append(signum))  # SELFTEST-STOP-1
    print("@toy:progress 0.5", flush=True)  # SELFTEST-GREET-2
    if os.environ.get("TOY_SCRATCH"):
        handle, scratch = tempfile.mkstemp(prefix="toy-")
        os.write(handle, b"scratch")
        os.close(handle)
        os.remove(scratch)  # SELFTEST-SCRATCH-1
    if os.environ.get("TOY_WAIT"):
        print("waiting", flush=True)
        while not stopped:
            time.sleep(POLL_S)
        sys.stderr.write("toy: stopped by signal %d\n" % stopped[0])
        return 20  # SELFTEST-STOP-1
    sys.stderr.write("toy: token of %d characters\n" % len(token))  # SELFTEST-REDACT-1
    print("hello, %s" % name, flush=True)  # SELFTEST-GREET-1
    print("bye", flush=True)  # SELFTEST-WORK-1
    return 0


if __name__ == "__main__":
    sys.exit(main())
