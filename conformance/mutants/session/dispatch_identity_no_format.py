"""The identity token is asked for without format=full (google-auth's default for a bare audience)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    query = urllib.parse.urlencode((("audience", audience), ("format", "full")))\n',
    '    query = urllib.parse.urlencode((("audience", audience),))\n',
)]
KILLS = ["dispatch.identity"]
