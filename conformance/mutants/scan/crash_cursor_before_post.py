"""The progress cursor is moved past an event before the event is sent, so an event whose POST a crash interrupts is never delivered."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    "        for sequence, event, end in events:\n"
    "            reservation_id = event.get(\"reservation_id\")\n",
    "        for sequence, event, end in events:\n"
    "            self.journal.advance(sequence, end)\n"
    "            reservation_id = event.get(\"reservation_id\")\n",
), (
    "                        raise  # SCAN-PROGRESS-2: the same event again later, nothing after it first\n"
    "            self.journal.advance(sequence, end, reservation_id is not None)  # SCAN-PROGRESS-3: skipped ones too\n",
    "                        raise  # SCAN-PROGRESS-2: the same event again later, nothing after it first\n",
)]
KILLS = ["crash.progress"]
