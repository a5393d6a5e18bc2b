"""Answers and slot states are parsed with floats refused (the strict parser before D24): a status or an assignment holding 0.5 anywhere fails every step."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    (' else parse_lenient(data, floats=True)\n',
     ' else parse_lenient(data)\n'),
]
KILLS = ['peer.assignment-members', 'peer.assignment-floats']
