"""The runner's scanning event names the target by its URL as well as its name (handy when debugging), so the pre-signed URL lands in the runner's event file and the journal."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                    self.emit("scanning", {"target": target["name"], "index": index})',
    '                    self.emit("scanning", {"target": target["name"], "index": index, "url": target["url"]})',
)]
KILLS = ["assign.url-private"]
