"""declared_bundle_bytes is ignored: the runner writes a bundle of any size and the worker adopts it, so the server receives more than it reserved."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('if info.st_size > max_bytes:', 'if False:'),
    ('if total > max_bytes:', 'if False:'),
    ('if self.bytes + len(line) + len(trailer) > self.max_bytes:', 'if False:'),
    ('if len(header_line) + len(trailer_line(0, "0" * 64)) > max_bytes:', 'if False:'),
]
KILLS = ["bundle.too-large"]
