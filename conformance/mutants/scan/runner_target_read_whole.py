"""A target's body is read in one call (all that remains): the runner holds the whole target in memory."""
NODE = "nodes/scan_worker.py"
REPLACE = [('chunk = network(response.read, min(TARGET_CHUNK_BYTES, remaining))',
            'chunk = network(response.read, remaining)')]
KILLS = ["runner.streamed"]
