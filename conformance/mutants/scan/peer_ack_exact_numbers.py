"""A progress acknowledgement must carry its numbers as JSON integers: 7.0 or "7" leaves the event unacknowledged, sent again for ever."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('    return not (ack["accepted"] is True and upstream_int(ack["reservation_id"]) == reservation_id\n                and upstream_int(ack["sequence"]) == sequence and isinstance(ack["received_at"], str)\n',
     '    return not (ack["accepted"] is True and ack["reservation_id"] == reservation_id and is_int(ack["sequence"])\n                and ack["sequence"] == sequence and isinstance(ack["received_at"], str)\n'),
]
KILLS = ['peer.progress-ack']
