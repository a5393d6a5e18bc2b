"""Over the 1 MiB ceiling the params echo is kept and only facts are dropped, so oversize params fail the run."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        \"params\": None,\n",
    "        \"params\": params,\n",
)]
KILLS = ["result.params-ceiling"]
