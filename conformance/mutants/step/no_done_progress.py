"""No final 1.0 'done' progress line: progress stops at the last input's line."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        self.progress.report(1.0, \"done\")  # STEP-PROGRESS-2: after result.json, before the marker\n",
    "",
)]
KILLS = ["progress.order"]
