"""A 201 without a usable assignment counts as an answered claim: the claiming state is deleted, so the next claim takes a fresh id and the reservation the server granted to the old one is silently dropped."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            raise WorkerClientError("an assignment answer without an assignment")',
    '            self.files.delete()\n'
    '            raise WorkerClientError("an assignment answer without an assignment")',
)]
KILLS = ["claim.assignment-checked"]
