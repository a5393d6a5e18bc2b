"""summary.attempt copies the manifest's raw attempt, as the upstream did: null beside a marker whose attempt came from LSPO_ATTEMPT."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        attempt = identity_number(self.manifest, self.config, \"attempt\")\n",
    "        attempt = manifest.get(\"attempt\")\n",
)]
KILLS = ["result.attempt-from-identity"]
