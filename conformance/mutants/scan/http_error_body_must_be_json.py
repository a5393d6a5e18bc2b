"""An error answer whose body is not JSON is a protocol error, as upstream (D7): a proxy's HTML 404 never reconciles."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '    except JsonError:\n'
    '        pass  # D7: a body that is not the error shape only leaves the default code\n',
    '    except JsonError:\n'
    '        raise WorkerClientError("an error answer that is not JSON") from None\n',
)]
KILLS = ["http.error-status"]
