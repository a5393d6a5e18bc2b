"""Only S3's default 204 counts as an accepted upload: a store whose policy asks for success_action_status 200 or 201 fails every upload the upstream saw succeed."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        try:\n            check_status(response, what)\n        finally:\n            response.close()\n",
    "        try:\n"
    "            if 200 <= response.status < 300 and response.status != 204:\n"
    "                raise Transient(\"%s: HTTP %d, not 204\" % (what, response.status), status=response.status)\n"
    "            check_status(response, what)\n"
    "        finally:\n"
    "            response.close()\n",
)]
KILLS = ["peer.post-answers"]
