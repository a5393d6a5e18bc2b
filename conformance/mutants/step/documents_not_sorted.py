"""Documents are serialised with json.dumps(indent=2) but without sort_keys, so the marker's keys come in insertion order."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    return json.dumps(document, sort_keys=True, indent=2).encode(\"utf-8\")\n",
    "    return json.dumps(document, indent=2).encode(\"utf-8\")\n",
)]
KILLS = ["marker.shape"]
