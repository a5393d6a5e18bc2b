"""The bundle download carries the capability as its Authorization, as if the store were one more control-plane route."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "def download_bundle(url, size, sha256, path, budget):\n",
    "def download_bundle(url, size, sha256, path, budget, authorization=None):\n",
), (
    "            conn = session.conn\n"
    "            conn.putrequest(\"GET\", session.target.request_target, skip_accept_encoding=True)  # byte for byte\n"
    "            conn.putheader(\"Connection\", \"close\")\n",
    "            conn = session.conn\n"
    "            conn.putrequest(\"GET\", session.target.request_target, skip_accept_encoding=True)  # byte for byte\n"
    "            if authorization is not None:\n"
    "                conn.putheader(\"Authorization\", \"Bearer \" + authorization)\n"
    "            conn.putheader(\"Connection\", \"close\")\n",
), (
    "            download_bundle(url, size, sha256, path, ceiling)  # SESSION-BACKOFF-3: one GET, never retried\n",
    "            download_bundle(url, size, sha256, path, ceiling, bytes(self.capability).decode(\"ascii\"))\n",
)]
KILLS = ["secret.places"]
