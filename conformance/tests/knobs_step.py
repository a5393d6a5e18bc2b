"""The [EDIT] constants of nodes/hello_node.py, each turned, and the checks that touch it (conformance/knobs.py)."""

from conformance.knobs import Knob

KNOBS = [
    Knob("PROGRAM", '"my-step"', why="any name: the stderr prefix and the scratch directory's",
         checks=["stop.ack-line", "stream.scratch-used", "redact.error-paths",
                 # the prefix on the start-up path and on the line that counts ignored arguments
                 "creds.startup-missing", "exit.unexpected-argument"]),
    Knob("USER_AGENT", '"my-step/3.1"', why="any token the store accepts as a product",
         checks=["http.user-agent"]),
    Knob("OUTPUT_PORT", '"copies"', why="any port name but report, which is result.json's",
         checks=["marker.produced-ports", "result.shape", "output.multipart"]),
    Knob("WORK_PHASE", '"scanning inputs"', why="a short phase text",
         checks=["progress.format", "progress.order"]),
    Knob("METRICS", '("files", "total_bytes", "lines", "skipped")', why="metric names, each starting at 0",
         checks=["result.shape", "result.on-failure"]),
]
