"""An acquisition document that settles failed with CRAWLER_SESSION_EXPIRED fails the probe: only a 410 re-opens it."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "                if code == CRAWLER_SESSION_EXPIRED:\n",
    "                if False:\n",
)]
KILLS = ["peer.expired-document"]
