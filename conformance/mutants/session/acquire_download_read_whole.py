"""The download reads the body to its end and only then compares its length with the declared size."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                while count <= size:\n'
    '                    got = response.readinto(view[:min(IO_CHUNK_BYTES, size + 1 - count)])\n',
    '                while True:\n'
    '                    got = response.readinto(view)\n',
)]
KILLS = ["acquire.download"]
