"""An input with neither relpath nor name is called input-<index+1> (counted from 1, not 0)."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    name = spec.get(\"relpath\") or spec.get(\"name\") or \"input-%d\" % index\n",
    "    name = spec.get(\"relpath\") or spec.get(\"name\") or \"input-%d\" % (index + 1)\n",
)]
KILLS = ["work.names"]
