"""ne holds on a null cell (null is "not equal" to anything), as SQL-naive code would have it."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    "ne": lambda cell, literal: cell is not None and not _equal(cell, literal),\n',
    '    "ne": lambda cell, literal: not _equal(cell, literal),\n',
)]
KILLS = ["work.predicates"]
