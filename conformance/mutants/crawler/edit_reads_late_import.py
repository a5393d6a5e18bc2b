"""normalize() names datetime, which only job_imports() binds: the normaliser child never runs job_imports(), so the name is unbound there and every normalisation fails with NameError."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    records = read_csv(source) if data_format == "csv" else read_jsonl(source)\n',
    '    records = read_csv(source) if data_format == "csv" and datetime else read_jsonl(source)\n',
)]
KILLS = ["node.edit-surface"]
