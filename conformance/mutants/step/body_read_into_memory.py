"""The input body is read whole (response.read()) and verified from memory instead of streamed in chunks."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            return stream_verified(read_into, fd, pins, self.buffer, reading, tally)\n",
    "            import io\n"
    "            whole = io.BytesIO(source.read())  # simpler: take the body, then verify it\n"
    "            return stream_verified(whole.readinto, fd, pins, self.buffer, reading, tally)\n",
)]
KILLS = ["stream.memory-ceiling", "stream.memory-flat", "stream.cgroup", "input.oversize-early"]
