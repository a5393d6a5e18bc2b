"""The body of an error response is read whole (response.read()) to find its <Code>."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        body = response.read(ERROR_BODY_BYTES)  # STEP-HTTP-5: at most 4096 bytes of an error body\n",
    "        body = response.read()\n",
)]
KILLS = ["http.long-code"]
