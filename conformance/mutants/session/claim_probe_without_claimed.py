"""A probe object in a claim answer is worked even when claimed is null: its presence is taken for a claim."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            if claimed:\n'
    '                probe = doc.get("probe")\n',
    '            if claimed or isinstance(doc.get("probe"), dict):\n'
    '                probe = doc.get("probe")\n',
)]
KILLS = ["claim.probe-invalid"]
