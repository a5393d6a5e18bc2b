"""GET requests go out without a User-Agent header (only uploads set one)."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        session.conn.putheader(\"User-Agent\", USER_AGENT)  # STEP-HTTP-4: the store's operators see who calls\n"
    "        session.conn.putheader(\"Connection\", \"close\")\n"
    "        session.conn.endheaders()\n"
    "        return session.conn.getresponse()\n",
    "        session.conn.putheader(\"Connection\", \"close\")\n"
    "        session.conn.endheaders()\n"
    "        return session.conn.getresponse()\n",
)]
KILLS = ["http.user-agent"]
