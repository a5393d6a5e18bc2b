"""The toy plane of the _selftest contract: an environment, a token, a scratch dir.

Shows the shape a real plane has: it owns the node's environment, starts the
node through ctx.start_node, and after the run reports invariants (no token
anywhere, scratch empty, no process left).
"""

from conformance.invariants import dir_empty, scan_for_secrets
from conformance.timeouts import NODE_RUN_TIMEOUT_S


class ToyPlane:
    def __init__(self, ctx):
        self.ctx = ctx
        self.token = "CANARY%032x" % ctx.rng.getrandbits(128)
        self.scratch = ctx.tmpdir("scratch")
        self.runs = []
        self.procs = []

    def env(self, **extra):
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
               "TOY_NAME": "world", "TOY_TOKEN": self.token, "TMPDIR": self.scratch}
        env.update(extra)
        return env

    def start(self, pid1=True, **extra):
        proc = self.ctx.start_node(self.env(**extra), pid1=pid1)
        self.procs.append(proc)
        return proc

    def run(self, **extra):
        """Start the node, wait for it, return its RunResult."""
        result = self.start(**extra).wait(NODE_RUN_TIMEOUT_S)
        self.runs.append(result)
        return result

    def secrets(self):
        """What every report masks: the token (run_check asks each plane)."""
        return [self.token]

    def invariants(self):
        runs = self.runs + [p.result for p in self.procs if p.result is not None and p.result not in self.runs]
        violations = scan_for_secrets([self.token], paths=[self.scratch], runs=runs,
                                      name="SELFTEST-REDACT-1: no token in output, argv or files")
        violations += dir_empty(self.scratch, name="scratch removed")
        return violations

    def close(self):
        pass
