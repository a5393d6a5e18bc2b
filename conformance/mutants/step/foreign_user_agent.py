"""The reference node sends a User-Agent that does not name lspo-hello-node."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "USER_AGENT = \"lspo-hello-node/2 (conformance reference)\"",
    "USER_AGENT = \"Python-urllib/3.11\"",
)]
KILLS = ["work.user-agent"]
