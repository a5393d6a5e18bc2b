"""expires_at's offset is dropped: 12:00+05:30 is read as 12:00 UTC, five and a half hours late, so the envelope is taken for fresh until its token is refused."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            moment = moment - offset if sign == \"+\" else moment + offset\n",
    "            pass\n",
)]
KILLS = ["peer.expiry-forms"]
