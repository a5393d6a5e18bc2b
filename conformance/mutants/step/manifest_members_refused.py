"""The manifest is held to the members the contract lists: one the platform adds (a runtime budget, say) makes it permanent, where the upstream read what it used and nothing else."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        raise Permanent(\"the manifest's schema_version is not 1\")\n    return manifest\n",
    "        raise Permanent(\"the manifest's schema_version is not 1\")\n"
    "    if set(manifest) - {\"schema_version\", \"execution_id\", \"attempt\", \"generation\", \"idempotency_key\",\n"
    "                        \"params\"}:\n"
    "        raise Permanent(\"the manifest has members this node does not know\")\n"
    "    return manifest\n",
)]
KILLS = ["peer.manifest-members"]
