"""The worker's lives on the scan plane: every Lifecycle made, and a Watch on each life.

    worker = Worker(ctx, state_dir, timeline, tmp, secrets)
    lives = worker.lifecycle(args, env)        # a Lifecycle (conformance/lifecycle.py) on the plane's trees
    life = lives.start(kill_at)                # started through ctx.start_node, and watched
    worker.watch_of(life)                      # every process of its tree as sampled, and TMPDIR's files
    worker.runs()                              # (proc, Watch, argv) of every life, in start order

A Lifecycle starts each life through what it takes for the check's context; the worker hands it
the context wrapped (_Starter), so that every life also gets a Watch
(conformance/planes/session/watch.py): every process of its tree and each argv it had, and every
file under TMPDIR scanned for the run's secrets while the life runs. The plane's invariants read
the watches after the check (the token on no argv and in no scratch file; SCAN-STOP-4, no
process left), and the stop checks read a life's processes.
"""

from conformance.lifecycle import Lifecycle
from conformance.planes.session.watch import Watch

__all__ = ["Worker"]


class _Starter(object):
    """What a Lifecycle sees as the check's context: the context, whose start_node also sets a
    Watch on each life (every process and its argv, TMPDIR's files)."""

    def __init__(self, worker):
        self._worker = worker

    def start_node(self, env, args=(), cwd=None, pid1=True, memory_limit_bytes=None):
        proc = self._worker.ctx.start_node(env, args=args, cwd=cwd, pid1=pid1, memory_limit_bytes=memory_limit_bytes)
        self._worker.watch(proc, args)
        return proc

    def __getattr__(self, name):
        return getattr(self._worker.ctx, name)


class Worker(object):
    """The lives of the worker under test on one plane. ctx: the check's context (start_node);
    state_dir: what each Lifecycle snapshots after a life; timeline: where lives mark signals,
    kills and restarts; tmp: the lives' TMPDIR, which each Watch scans for secrets() (a callable:
    the values no scratch file may hold)."""

    def __init__(self, ctx, state_dir, timeline, tmp, secrets):
        self.ctx, self.state_dir, self.timeline, self.tmp = ctx, state_dir, timeline, tmp
        self._secrets = secrets
        self.lifecycles = []       # every Lifecycle made, in order
        self._runs = []            # (proc, Watch, argv) of every life, in start order

    def lifecycle(self, args, env, pid1=True):
        """A new Lifecycle of the worker (args after the node's own argv; env: its whole environment)."""
        lives = Lifecycle(_Starter(self), env, args=args, state_dir=self.state_dir, timeline=self.timeline, pid1=pid1)
        self.lifecycles.append(lives)
        return lives

    @property
    def current(self):
        """The current Lifecycle (the last made)."""
        if not self.lifecycles:
            raise RuntimeError("no life started yet")
        return self.lifecycles[-1]

    @property
    def life(self):
        """The current life, or None."""
        return self.lifecycles[-1].current if self.lifecycles else None

    # ---------------------------------------------------------------- the watches
    def watch(self, proc, args):
        """Set a Watch on a life's process tree as it starts."""
        self._runs.append((proc, Watch(proc, self.tmp, self._secrets), list(args)))

    def runs(self):
        """(proc, Watch, argv) of every life started, in order."""
        return list(self._runs)

    def watch_of(self, life):
        """The Watch of a life: every process of its tree as sampled while it ran."""
        return next(watch for proc, watch, _args in self._runs if proc is life.proc)

    def stop_watching(self):
        """Stop sampling every life (the invariants, close(), and a bench that measures a quiet worker)."""
        for _proc, watch, _args in self._runs:
            watch.stop()
