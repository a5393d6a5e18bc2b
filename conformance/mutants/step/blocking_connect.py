"""TCP connect is a blocking connect() with a timeout, and the socket joins the stop ledger only once connected."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "def _connect_one(sock, address, stop, deadline):\n"
    "    sock.setblocking(False)\n"
    "    code = sock.connect_ex(address)\n"
    "    if code in (errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EAGAIN, errno.EALREADY):\n"
    "        wait_ready(stop, [], [sock], deadline, \"connect\")\n"
    "        code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)\n"
    "    if code:\n"
    "        raise OSError(code, os.strerror(code))\n",
    "def _connect_one(sock, address, stop, deadline):\n"
    "    sock.settimeout(max(0.001, deadline.remaining()))\n"
    "    sock.connect(address)\n"
    "    sock.setblocking(False)\n"
    "    stop.track(sock)\n",
), (
    "            last_error = exc\n"
    "            continue\n"
    "        stop.track(candidate)\n",
    "            last_error = exc\n"
    "            continue\n",
)]
KILLS = ["stop.connect"]
