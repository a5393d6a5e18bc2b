"""A progress answer counts as an acknowledgement when it says accepted: true, whatever its sequence, received_at or replayed say."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '    if not isinstance(ack, dict) or any(key not in ack for key in ACK_KEYS):\n'
    '        return True\n',
    '    if not isinstance(ack, dict) or any(key not in ack for key in ACK_KEYS):\n'
    '        return not isinstance(ack, dict) or ack.get("accepted") is not True\n'
    '    return ack.get("accepted") is not True\n',
)]
KILLS = ["progress.acknowledgement"]
