"""AccessDenied is not in the expired-looking codes, so a 403 AccessDenied (an expired URL) is permanent."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "EXPIRED_CODES = (\"expired\", \"accessdenied\", ",
    "EXPIRED_CODES = (\"expired\", ",
)]
KILLS = ["http.access-denied-post"]
