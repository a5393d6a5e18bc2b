"""A marker the store did not confirm turns the exit status into a transient failure."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        return outcome  # STEP-MARKER-3: decided once; the marker's fate never changes it\n",
    "        return OUTCOME_TRANSIENT if marker == MARKER_UNCONFIRMED and outcome == OUTCOME_SUCCEEDED else outcome\n",
)]
KILLS = ["marker.refused-500", "marker.refused-404", "fault.marker.slowdown", "fault.marker.throttled",
         "fault.marker.reset", "fault.marker.expired"]
