"""local_path staging writes <path>/<relpath> without creating the parent directories first."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        os.makedirs(os.path.dirname(destination), exist_ok=True)\n",
    "",
)]
KILLS = ["output.local-staging", "progress.rate-limit"]
