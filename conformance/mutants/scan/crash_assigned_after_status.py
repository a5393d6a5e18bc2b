"""The assignment of a 201 is kept in memory and written only once the status read that follows it has been answered, so a crash while that read is in flight leaves the slot file claiming."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        state = self.save({"schema": SLOT_STATE_SCHEMA, "phase": "assigned", "assignment": assignment,\n'
    '                           "runner": None, "retained_work": []})',
    '        state = {"schema": SLOT_STATE_SCHEMA, "phase": "assigned", "assignment": assignment,\n'
    '                 "runner": None, "retained_work": []}',
), (
    '        if status is None:\n'
    '            return WORK, None\n'
    '        phase = state["phase"]\n',
    '        if status is None:\n'
    '            return WORK, None\n'
    '        if state["phase"] == "assigned" and state["runner"] is None:\n'
    '            state = self.save(state)\n'
    '        phase = state["phase"]\n',
)]
KILLS = ["crash.claim"]
