"""The lease's schema_version must be 3.0.0, though the upstream never looks at it."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "        raise invalid(\"omits %s; has unexpected %s\" % (sorted(LEASE_KEYS - keys), sorted(keys - LEASE_KEYS)))\n"
    "    # SESSION-LEASE-2 (D2): schema_version is present; its value is not looked at, as upstream\n",
    "        raise invalid(\"omits %s; has unexpected %s\" % (sorted(LEASE_KEYS - keys), sorted(keys - LEASE_KEYS)))\n"
    "    if doc[\"schema_version\"] != SCHEMA_VERSION:\n"
    "        raise invalid(\"schema_version\")\n",
)]
KILLS = ["peer.lease-forms"]
