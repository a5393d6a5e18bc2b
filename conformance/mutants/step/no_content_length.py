"""The upload is sent without a Content-Length header (the body is streamed and its length never announced)."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            session.conn.putheader(\"Content-Length\", str(len(head) + payload.size + len(tail)))  # STEP-OUTPUT-3: exact, never chunked\n",
    "",
)]
KILLS = ["output.multipart", "fault.manifest.dribble", "fault.input.dribble", "fault.output.dribble",
         "fault.result.dribble", "fault.marker.dribble"]
