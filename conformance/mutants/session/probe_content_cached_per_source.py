"""The content of a source is kept from its first probe and reused, so a later probe answers without its own acquisition and download."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        acquisition, data, bundle_sha256 = self.acquire(probe.source_id, ceiling)\n',
    '        cached = self.__dict__.setdefault("_contents", {}).get(probe.source_id)\n'
    '        if cached is not None:\n'
    '            return self.answer(probe, normalized, cached[0], cached[1], cached[2])\n'
    '        acquisition, data, bundle_sha256 = self.acquire(probe.source_id, ceiling)\n',
), (
    '        content, content_sha256, data_format = check_bundle(data, bundle_sha256, probe.source_id, acquisition)\n',
    '        content, content_sha256, data_format = check_bundle(data, bundle_sha256, probe.source_id, acquisition)\n'
    '        self._contents[probe.source_id] = (content, content_sha256, data_format)\n',
)]
KILLS = ["probe.observation"]
