"""An object is inventoried only once the store has answered, so an upload without an answer is left out of the marker."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            if not getattr(exc, \"maybe_stored\", False):\n"
    "                self.forget(relpath)  # definitely not stored: the marker must not name it\n",
    "            self.forget(relpath)\n",
)]
KILLS = ["output.accept-then-reset", "stop.upload-answer"]
