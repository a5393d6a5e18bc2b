"""The marker write has no elapsed deadline, only socket timeouts, so a store dribbling its answer holds the node for ever."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            with watchdog:\n"
    "                self.write_object(MARKER_FILENAME, bytes_payload(data), envelope=envelope, budget=budget)\n",
    "            self.write_object(MARKER_FILENAME, bytes_payload(data), envelope=envelope)\n",
)]
KILLS = ["stop.receipt-deadline"]
