"""An input with neither get_url nor local_path is reported as a transient failure (as if the URL were just missing for now)."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            raise Permanent(\"%s has neither a get_url nor a local_path\" % what)\n",
    "            raise Transient(\"%s has neither a get_url nor a local_path\" % what)\n",
)]
KILLS = ["input.no-source"]
