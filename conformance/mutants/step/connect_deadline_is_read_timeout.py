"""The connect is bounded by the 25 s read timeout instead of its own 10 s deadline."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        session = HttpExchange(url, STOP, timeout_s=timeout_s, connect_deadline_s=CONNECT_DEADLINE_S,\n",
    "        session = HttpExchange(url, STOP, timeout_s=timeout_s, connect_deadline_s=READ_TIMEOUT_S,\n",
)]
KILLS = ["stop.connect-deadline"]
