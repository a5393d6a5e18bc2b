"""The marker's identity comes from the manifest only; the LSPO_* variables are never used as a fallback."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    return config.identity[key]  # STEP-MANIFEST-4: the environment's value\n",
    "    return None\n",
)]
KILLS = ["manifest.identity-from-env", "manifest.no-source", "manifest.identity-types",
         "stop.before-manifest", "fault.manifest.reset", "fault.manifest.slowdown",
         "fault.manifest.throttled", "manifest.oversize", "manifest.xml-error-page"]
