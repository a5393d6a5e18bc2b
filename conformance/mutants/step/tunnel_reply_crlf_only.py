"""A proxy's answer to CONNECT must end its head with CRLF CRLF: an HTTP/1.0 proxy's bare-LF answer is never seen to end, and the connect deadline fails the run."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "_PROXY_REPLY_END_RE = re.compile(b\"\\n\\r?\\n\")\n",
    "_PROXY_REPLY_END_RE = re.compile(b\"\\r\\n\\r\\n\")\n",
)]
KILLS = ["peer.proxy-reply"]
