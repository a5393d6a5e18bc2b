"""An invalid rotation is re-read and reported before every request, not once per change."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            if signature != self._signature and signature != self._rejected:\n',
    '            if signature != self._signature:\n',
), (
    '            if signature != self._rejected:\n'
    '                self._rejected = signature\n'
    '                say("worker: token file rejected, keeping the current token")  # SCAN-TOKEN-6: once per change\n',
    '            if True:\n'
    '                self._rejected = signature\n'
    '                say("worker: token file rejected, keeping the current token")  # SCAN-TOKEN-6: once per change\n',
)]
KILLS = ["token.invalid-rotation"]
