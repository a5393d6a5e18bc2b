"""A bundle's receipt must name application/x-ndjson and no Reader, as our crawler writes it."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "    require(all(isinstance(receipt.get(key), str) for key in (\n"
    '        "normalized_media_type", "normalized_data_format", "normalized_filename")))\n',
    "    require(all(isinstance(receipt.get(key), str) for key in (\n"
    '        "normalized_media_type", "normalized_data_format", "normalized_filename")))\n'
    '    require(receipt["normalized_media_type"] == "application/x-ndjson" and receipt.get("family_id") is None)\n',
)]
KILLS = ["peer.bundle-csv"]
