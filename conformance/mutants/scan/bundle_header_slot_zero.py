"""The bundle header's slot_id is always 0 (the first slot's), whichever slot wrote it: the header does not name the slot (SCAN-BUNDLE-2)."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('    return dict(binding, format=BUNDLE_FORMAT, generation=generation["generation"],',
     '    return dict(binding, slot_id=0, format=BUNDLE_FORMAT, generation=generation["generation"],'),
    ('    if binding_of(meta["header"]) != assignment_binding(assignment, slot_id):',
     '    if binding_of(meta["header"]) != dict(assignment_binding(assignment, slot_id), slot_id=0):'),
]
KILLS = ["bundle.envelope"]
