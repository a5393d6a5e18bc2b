"""An upload cut by the network discards the adopted bundle and goes back to `assigned`: the scan runs again and the retry sends a new bundle (another generation, another digest)."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            except StorageFailure as exc:\n'
    '                return self.report_now(state, STORAGE_FAILED, Diagnostic(\n'
    '                    self, "uploading", "client_storage_failed", "STORAGE", exc))\n'
    '            except WorkerHTTPError as exc:\n'
    '                self.diagnostics.append(',
    '            except StorageFailure as exc:\n'
    '                return self.report_now(state, STORAGE_FAILED, Diagnostic(\n'
    '                    self, "uploading", "client_storage_failed", "STORAGE", exc))\n'
    '            except WorkerNetworkError:\n'
    '                self.save(dict([(k, v) for k, v in state.items() if k not in ("bundle", "transport_conflict")]\n'
    '                               + [("phase", "assigned")]))\n'
    '                raise\n'
    '            except WorkerHTTPError as exc:\n'
    '                self.diagnostics.append(',
)]
KILLS = ["upload.same-upload"]
