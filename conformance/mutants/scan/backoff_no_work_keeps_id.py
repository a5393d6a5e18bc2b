"""A valid 204 leaves the claiming state in place, so the next claim repeats the old request id instead of a fresh one."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    "                raise WorkerClientError(\"a no-work answer with an unknown reason\")\n"
    "            self.files.delete()  # SCAN-CLAIM-4: the next claim takes a fresh id",
    "                raise WorkerClientError(\"a no-work answer with an unknown reason\")\n"
    "            pass",
)]
KILLS = ["backoff.no-work-wait"]
