"""A create that got no answer or a 5xx is sent again, as transient failures usually are."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "                raise ProbeFailure(refused.code, refused.retry_after_s or 0) from None\n"
    "            raise ProbeFailure(refused.code) from None  # SESSION-BACKOFF-3: a create is never retried\n",
    "                raise ProbeFailure(refused.code, refused.retry_after_s or 0) from None\n"
    "            if refused.status is None or refused.status >= 500:\n"
    "                return self.acquire_once(source_id, epoch, ceiling)  # transient: once more\n"
    "            raise ProbeFailure(refused.code) from None\n",
)]
KILLS = ["acquire.create-refused"]
