"""A stop shuts no socket in flight and waits for every slot thread: a hung server holds the exit until its http timeout."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        for sock in tuple(self._inflight):\n',
    '        for sock in ():\n',
), (
    '                slot.thread.join(budget.remaining())',
    '                slot.thread.join()',
)]
KILLS = ["stop.everything-hung"]
