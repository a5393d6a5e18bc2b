"""The tunnel is set up as http.client's _tunnel does it: a blocking read bounded by the time left, on a socket not on the stop ledger, so a stop waits for the proxy or the 10 s deadline."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    while True:\n"
    "        wait_ready(stop, [sock], [], deadline, \"the proxy's CONNECT\")\n"
    "        try:\n"
    "            peeked = sock.recv(4096, socket.MSG_PEEK)\n",
    "    while True:\n"
    "        sock.settimeout(max(0.05, deadline.remaining()))\n"
    "        try:\n"
    "            peeked = sock.recv(4096, socket.MSG_PEEK)\n",
), (
    "            proxy.tunnel(sock, target, stop, deadline)\n",
    "            stop.untrack(sock)\n"
    "            proxy.tunnel(sock, target, stop, deadline)\n"
    "            stop.track(sock)\n",
)]
KILLS = ["proxy.stop-connect"]
