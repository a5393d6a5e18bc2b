"""The manifest is assumed to be an object: a JSON array crashes .get() and ends as an internal (transient) error."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if not isinstance(manifest, dict):  # STEP-MANIFEST-3: a manifest that is not an object is permanent\n"
    "        raise Permanent(\"the manifest is not a JSON object\")\n",
    "",
)]
KILLS = ["manifest.not-object"]
