"""Findings of a line are ordered by their position in the line, not by rule first: the order of SCAN-WORK-3 is lost."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        self._piece = bytearray()\n'
    '        for rule, pattern in SCAN_RULES:  # SCAN-WORK-3: rule order, then position\n'
    '            for match in pattern.finditer(text):',
    '        self._piece = bytearray()\n'
    '        for _start, rule, match in sorted((m.start(), r, m) for r, p in SCAN_RULES for m in p.finditer(text)):\n'
    '            for match in (match,):',
)]
KILLS = ["work.order"]
