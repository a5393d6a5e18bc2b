"""The start document, nonce included, is handed to the session process in its environment as well."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                pass_fds=(read_fd,), close_fds=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,\n',
    '                pass_fds=(read_fd,), close_fds=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,\n'
    '                env=dict(os.environ, MR_SESSION_START_DOCUMENT=bytes(document).decode("ascii")),\n',
)]
KILLS = ["service.fresh-interpreter"]
