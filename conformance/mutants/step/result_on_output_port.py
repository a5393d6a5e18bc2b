"""result.json is published on port output along with the copies, instead of on port report only."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "                self.publish(RESULT_FILENAME, payload, REPORT_PORT)  # STEP-OUTPUT-8: port report only\n",
    "                self.publish(RESULT_FILENAME, payload, OUTPUT_PORT)\n",
)]
KILLS = ["marker.produced-ports", "work.copy"]
