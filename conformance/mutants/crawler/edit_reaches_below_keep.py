"""normalize() reads MAX_SAFE_INTEGER, a name of the machinery its frame does not list: a newer copy of the machinery that renames it breaks the copier's normaliser, unwarned."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    records = read_csv(source) if data_format == "csv" else read_jsonl(source)\n',
    '    records = read_csv(source) if data_format == "csv" and MAX_SAFE_INTEGER else read_jsonl(source)\n',
)]
KILLS = ["node.edit-surface"]
