"""Waits by watching the clock in a loop instead of sleeping in the kernel: a core busy while idle."""
NODE = "conformance/tests/data/toy_worker.py"
REPLACE = [("        poller = select.poll()\n        poller.register(self._read, select.POLLIN)\n"
            "        poller.poll(max(0.0, seconds) * 1000.0)  # WORKER-IDLE-1: asleep in the kernel until the interval "
            "or a signal\n",
            "        import time\n        deadline = time.monotonic() + seconds\n"
            "        while time.monotonic() < deadline and not self.requested:\n            pass\n")]
KILLS = ["idle.cpu"]
