"""STORAGE_EMULATOR_HOST must be https://, as in contract version 2: a stock emulator (plain HTTP) cannot be used."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    scheme = "http" if isinstance(value, str) and value.startswith("http://") else "https"\n',
    '    scheme = "https"\n',
)]
KILLS = ["config.storage-emulator-http"]
