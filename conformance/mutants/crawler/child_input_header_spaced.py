"""The normalisation input header is written with json.dumps defaults (sorted, but with spaces), not canonical JSON."""
NODE = "nodes/crawler_job.py"
REPLACE = [
    ('        header = canonical_bytes({  # CRAWLER-CHILD-5: the normalisation input; no token, capability or URL\n',
     '        header = json.dumps({\n'),
    ('            "clean_room": sandbox.clean_room(),\n        }) + b"\\n"\n',
     '            "clean_room": sandbox.clean_room(),\n        }, sort_keys=True, ensure_ascii=False).encode("utf-8") + b"\\n"\n'),
]
KILLS = ["child.input"]
