"""The download reads the body to its end and only then compares its length with the declared size."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            digest, count, held = hashlib.sha256(), 0, bytearray(size + 1)\n'
    '            with memoryview(held) as view:\n'
    '                while count <= size:\n'
    '                    got = response.readinto(view[count:count + min(IO_CHUNK_BYTES, size + 1 - count)])\n',
    '            digest, count, held = hashlib.sha256(), 0, bytearray(4 * MAX_PROBE_ACQUISITION_BUNDLE_BYTES)\n'
    '            with memoryview(held) as view:\n'
    '                while True:\n'
    '                    got = response.readinto(view[count:count + IO_CHUNK_BYTES])\n',
)]
KILLS = ["acquire.download"]
