"""The manifest's schema_version is never looked at, so a version-2 manifest is worked on."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if not is_int(version) or version != 1:  # STEP-MANIFEST-3: True is not 1\n"
    "        raise Permanent(\"the manifest's schema_version is not 1\")\n",
    "",
)]
KILLS = ["manifest.version-2", "manifest.version-bool"]
