"""When the marker is not confirmed, a second, corrective marker is written."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        marker = self.write_marker(status, code, reason)\n"
    "        if marker == MARKER_WRITTEN and outcome == OUTCOME_SUCCEEDED:\n",
    "        marker = self.write_marker(status, code, reason)\n"
    "        if marker == MARKER_UNCONFIRMED:  # try once more, so that the platform hears something\n"
    "            marker = self.write_marker(status, code, reason)\n"
    "        if marker == MARKER_WRITTEN and outcome == OUTCOME_SUCCEEDED:\n",
)]
KILLS = ["marker.refused-500", "marker.refused-404"]
