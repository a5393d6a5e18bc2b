"""The proxy's answer to CONNECT is read with a plain blocking recv(): the connect deadline no longer bounds it, so a silent proxy holds the run for ever."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    while True:\n"
    "        wait_ready(stop, [sock], [], deadline, \"the proxy's CONNECT\")\n"
    "        try:\n"
    "            peeked = sock.recv(4096, socket.MSG_PEEK)\n",
    "    while True:\n"
    "        sock.setblocking(True)\n"
    "        try:\n"
    "            peeked = sock.recv(4096, socket.MSG_PEEK)\n",
)]
KILLS = ["proxy.connect-deadline"]
