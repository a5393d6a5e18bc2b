"""On the failure path result.json is inventoried before its upload and kept in the marker even when the store refused it."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "                self.write_object(RESULT_FILENAME, payload)  # STEP-RESULT-4: upload first...\n",
    "                self.record(RESULT_FILENAME, payload.sha256, payload.size, REPORT_PORT)\n"
    "                self.write_object(RESULT_FILENAME, payload)\n",
), (
    "        self.result_state = RESULT_UPLOADED\n"
    "        if not inventory_first:\n"
    "            self.record(RESULT_FILENAME, payload.sha256, payload.size, REPORT_PORT)  # STEP-RESULT-4: ...then inventoried\n",
    "        self.result_state = RESULT_UPLOADED\n",
)]
KILLS = ["result.failure-upload-fails"]
