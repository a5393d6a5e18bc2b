"""An exchange is bounded by a per-read socket timeout only, with no watchdog over the whole exchange."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        with Watchdog(budget, session.cut):\n'
    '            session.open()\n'
    '            yield session\n',
    '        session.open()\n'
    '        yield session\n',
)]
KILLS = ["callback.deadline"]
