"""clean_room is checked key by key for the node's claims, so an extra key in the child's copy goes unnoticed."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    require(same(receipt["clean_room"], clean_room))  # CRAWLER-RESULT-8: only what this node installed may be claimed\n',
    '    require(isinstance(receipt["clean_room"], dict)\n            and all(same(receipt["clean_room"].get(key), value) for key, value in clean_room.items()))\n',
)]
KILLS = ["result.clean-room"]
