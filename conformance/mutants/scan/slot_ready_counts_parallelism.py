"""The ready line counts --parallelism and leaves out the leftover slots the worker also runs."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        say("worker: started with %d slots" % len(self.slots))  # SCAN-SLOT-3: before the first request',
    '        say("worker: started with %d slots" % config.parallelism)',
)]
KILLS = ["slot.leftover-retires"]
