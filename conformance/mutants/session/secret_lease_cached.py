"""The raw lease, capability included, is kept in the scratch directory (lease.json) for the session's life."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        try:\n'
    '            lease, capability = admit_lease(doc)\n'
    '        finally:\n',
    '        try:\n'
    '            with open(os.path.join(self.scratch, "lease.json"), "wb") as cache:\n'
    '                cache.write(bytes(raw))\n'
    '            lease, capability = admit_lease(doc)\n'
    '        finally:\n',
)]
KILLS = ["secret.places"]
