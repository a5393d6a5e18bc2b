"""A manifest that is not JSON is called permanent, although it is usually an expired URL's XML error page."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        raise Transient(\"the manifest is not UTF-8 JSON\") from None\n",
    "        raise Permanent(\"the manifest is not UTF-8 JSON\") from None\n",
)]
KILLS = ["manifest.xml-error-page"]
