"""The envelope is held to the members the contract lists: one a later release adds (at the top or in staging) is refused as a broken envelope, where the upstream's .get() never looked at it."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        raise Permanent(\"the credentials envelope's schema_version is not 1\")\n",
    "        raise Permanent(\"the credentials envelope's schema_version is not 1\")\n"
    "    known = {\"schema_version\", \"scheme\", \"expires_at\", \"manifest_get\", \"manifest_path\", \"inputs\", \"staging\"}\n"
    "    staging_known = {\"mode\", \"post\", \"path\"}\n"
    "    if set(envelope) - known or set(envelope.get(\"staging\") or {}) - staging_known:\n"
    "        raise Permanent(\"the credentials envelope has members this node does not know\")\n",
)]
KILLS = ["peer.envelope-members"]
