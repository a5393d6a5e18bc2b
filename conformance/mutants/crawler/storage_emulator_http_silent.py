"""A plain-HTTP storage origin is accepted silently, so nothing tells an operator that results travel unencrypted."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        write_all(2, ("%s: development setting:',
    '        (lambda *a: None)(2, ("%s: development setting:',
)]
KILLS = ["config.storage-emulator-http"]
