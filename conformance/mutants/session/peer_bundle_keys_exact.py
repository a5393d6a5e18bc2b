"""A bundle with a member nobody defined is invalid: the result's key set is held to our crawler's."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    receipt, encoded = result.get("acquisition_receipt"), result.get("normalized_content")\n',
    '    require(set(result) == {"schema_version", "request_digest", "source_id", "adapter_id", "adapter_version",\n'
    '                            "acquisition_receipt", "observation", "normalized_content", "next_watermark"})\n'
    '    receipt, encoded = result.get("acquisition_receipt"), result.get("normalized_content")\n',
)]
KILLS = ["peer.bundle-forms"]
