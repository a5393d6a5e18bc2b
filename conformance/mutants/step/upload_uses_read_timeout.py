"""Uploads wait for an answer as long as downloads (25 s) instead of the 10 s upload timeout."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    with exchange(post[\"url\"], what, UPLOAD_TIMEOUT_S, budget) as session:\n",
    "    with exchange(post[\"url\"], what, READ_TIMEOUT_S, budget) as session:\n",
)]
KILLS = ["output.upload-silent"]
