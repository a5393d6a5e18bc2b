"""The marker's error field is always null: the reason is printed on stderr but not recorded in the receipt."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        \"error\": error,  # STEP-MARKER-7: null only on success\n",
    "        \"error\": None,\n",
)]
KILLS = ["marker.failed-fields", "stop.after-work"]
