"""The failure path inventories result.json only after an accepted upload, so a report the store took without answering is named by no receipt."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "                self.result_state = RESULT_UNKNOWN\n"
    "                if not inventory_first:\n"
    "                    # STEP-RESULT-4 (D34): it may be stored, so it is listed; unlisted, a stored\n"
    "                    # report would sit in staging named by no receipt, out of salvage's sight\n"
    "                    self.record(RESULT_FILENAME, payload.sha256, payload.size, REPORT_PORT)\n",
    "                self.result_state = RESULT_UNKNOWN\n",
)]
KILLS = ["result.ambiguous-listed"]
