"""A probe child inherits the capability process's environment (Popen's default) besides the attestation."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment,\n',
    '            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, **environment),\n',
)]
KILLS = ["isolation.sandbox"]
