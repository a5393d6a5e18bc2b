#!/usr/bin/env python3
"""A first version of an LSPO step, written the way most first versions are.

THIS FILE IS THE COUNTER-EXAMPLE. Do not copy it; copy nodes/hello_node.py.

It speaks the step contract's wire format correctly (envelope and manifest fields, the
presigned POST with the policy fields, then `key`, then `file` last, `outputs/<name>`,
`result.json`, and `__lspo_complete.json` with its ten fields), and on a small job
against a healthy store it succeeds. Run the harness against it to see what the clauses
of contract/step.md are for:

    python3 -m conformance step examples/naive_step_node.py

What it gets wrong, each marked `# NAIVE:` where it happens:

 1. Reads the envelope once at start-up, from LSPO_CREDENTIALS_FILE only: no re-read
    before expiry, no retry after an expired refusal, no legacy variable
    (STEP-CREDS-1, -3, -4, -6).
 2. Holds every object whole in memory: `resp.read()` of each download, `sha256` over
    those bytes, the multipart body built with `b''.join` (STEP-STREAM-1).
 3. Installs no signal handler: as PID 1 a SIGTERM is dropped and the job runs to the end;
    SIGINT prints a KeyboardInterrupt traceback; never exits 20 (STEP-STOP-*, STEP-EXIT-2).
 4. Sets no timeout and no connect deadline: a silent store hangs it for ever
    (STEP-STOP-3, STEP-STREAM-4).
 5. Uses urllib's default opener, which follows redirects and replays a redirected POST as
    a GET with no body (STEP-OUTPUT-5).
 6. Prints the URL it was using when something fails, presigned query and all, on stdout
    (STEP-REDACT-1, -2).
 7. Exits 1 for every failure, permanent or not, and writes no marker and no result.json
    when it fails (STEP-EXIT-1, STEP-HTTP-1, STEP-MARKER-1, STEP-RESULT-4).
 8. Records an object only after its upload succeeded, in a list local to main()
    (STEP-MARKER-5).
 9. Verifies a pin only after reading the whole body, compares the hash case-sensitively,
    ignores the size pin and downloads inputs that have no pin (STEP-INPUT-1, -2, -4).
10. Names outputs `outputs/<name>` with no clash handling and no relpath check
    (STEP-OUTPUT-1, -2).
11. Echoes params and facts without the 1 MiB ceiling or the fact rules
    (STEP-RESULT-2, -3).
12. Takes identity from the manifest only, with no type check and no environment fallback
    (STEP-MANIFEST-4, STEP-MARKER-6).
13. Progress lines are not flushed: behind a pipe they appear only at exit
    (STEP-PROGRESS-1).
14. Sends urllib's default User-Agent (STEP-HTTP-4); writes local staging files in place,
    not atomically (STEP-OUTPUT-7).
"""

import hashlib
import json
import os
import sys
import time
import urllib.request

MARKER = "__lspo_complete.json"
RESULT = "result.json"

current_url = None  # the URL in use, for the error message


def progress(fraction, phase):
    # NAIVE: print() is block-buffered when stdout is a pipe; no flush, no line cap.
    print("@lspo:progress " + json.dumps({"fraction": round(fraction, 4), "phase": phase}))


def load_envelope():
    # NAIVE: read once, never again; the legacy LSPO_CREDENTIALS is ignored.
    path = os.environ.get("LSPO_CREDENTIALS_FILE", "/lspo/creds/creds.json")
    with open(path) as f:
        return json.load(f)


def fetch(url):
    global current_url
    current_url = url
    # NAIVE: no timeout, redirects followed, default User-Agent, whole body in memory.
    with urllib.request.urlopen(url) as resp:
        return resp.read()


def read_local(path):
    with open(path, "rb") as f:
        return f.read()  # NAIVE: whole file in memory.


def multipart(fields, key, data):
    """The presigned POST body: policy fields in order, then `key`, then `file` last."""
    fields = dict(fields or {})
    fields["key"] = key  # replaces a `key` field in place, or appends it
    boundary = "----naive" + hashlib.sha256(
        ("%s|%d|%f" % (key, len(data), time.time())).encode()).hexdigest()[:32]
    parts = []
    for name, value in fields.items():
        parts.append(("--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n"
                      % (boundary, name.replace('"', ""), value)).encode("utf-8"))
    filename = key.rsplit("/", 1)[-1].replace('"', "") or "object"
    parts.append(("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"%s\"\r\n"
                  "Content-Type: application/octet-stream\r\n\r\n"
                  % (boundary, filename)).encode("utf-8"))
    parts.append(data)
    parts.append(("\r\n--%s--\r\n" % boundary).encode("ascii"))
    # NAIVE: the whole body, object included, is copied into one bytes object.
    return boundary, b"".join(parts)


def write_object(env, relpath, data):
    global current_url
    staging = env["staging"]
    if staging["mode"] == "local_path":
        dest = os.path.join(staging["path"], relpath)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        # NAIVE: written in place; a crash leaves half a file under the final name.
        with open(dest, "wb") as f:
            f.write(data)
        return
    post = staging["post"]
    boundary, body = multipart(post.get("fields"), post["key_prefix"] + relpath, data)
    current_url = post["url"]
    request = urllib.request.Request(
        post["url"], data=body, method="POST",
        headers={"Content-Type": "multipart/form-data; boundary=" + boundary})
    # NAIVE: urlopen follows a 302 as a bodiless GET and reports success; no timeout.
    with urllib.request.urlopen(request) as resp:
        resp.read()


def read_manifest(env):
    if env.get("manifest_get"):
        # NAIVE: no size limit on the manifest.
        return json.loads(fetch(env["manifest_get"]))
    return json.loads(read_local(env["manifest_path"]))


def main():
    # NAIVE: no SIGTERM/SIGINT handler. As PID 1, SIGTERM is simply ignored.
    # NAIVE: outside the try: a missing envelope prints a traceback.
    env = load_envelope()
    try:
        manifest = read_manifest(env)
        inputs = env.get("inputs") or []
        objects = []  # NAIVE: local to main(); see the except branch.
        outputs = []
        facts = []
        total_bytes = 0
        lines = 0
        for index, entry in enumerate(inputs):
            progress(index / len(inputs), "copying inputs")
            if entry.get("get_url"):
                data = fetch(entry["get_url"])
            else:
                data = read_local(entry["local_path"])
            digest = hashlib.sha256(data).hexdigest()
            # NAIVE: checked after the whole body is in memory; case-sensitive; the size
            # pin is ignored; an input with no pin was downloaded anyway.
            if digest != entry.get("sha256"):
                raise ValueError("input %d: sha256 mismatch" % index)
            name = entry.get("relpath") or entry.get("name") or "input-%d" % index
            # NAIVE: no clash handling between ports, no relpath validation.
            relpath = "outputs/" + name
            write_object(env, relpath, data)
            # NAIVE: recorded only after the upload answered; a reset loses it.
            objects.append({"relpath": relpath, "sha256": digest, "size": len(data)})
            outputs.append(relpath)
            # NAIVE: no fact rules (length, control characters, cap).
            facts.append({"key": "input", "value": name})
            total_bytes += len(data)
            lines += data.count(b"\n")

        result = {
            "schema_version": 1,
            "metrics": {"files": len(outputs), "total_bytes": total_bytes, "lines": lines},
            # NAIVE: params echoed whatever their size; no 1 MiB ceiling.
            "summary": {"attempt": manifest.get("attempt"),
                        "params": manifest.get("params") or {}},
            "facts": facts,
        }
        body = json.dumps(result, sort_keys=True, indent=2).encode("utf-8")
        write_object(env, RESULT, body)
        objects.append({"relpath": RESULT, "sha256": hashlib.sha256(body).hexdigest(),
                        "size": len(body)})
        progress(1.0, "done")

        marker = {
            "schema_version": 1,
            "status": "succeeded",
            "exit_code": 0,
            "objects": objects,
            "produced_ports": ({"output": outputs, "report": [RESULT]} if outputs
                               else {"report": [RESULT]}),
            "error": None,
            # NAIVE: identity from the manifest only: no type check, no env fallback.
            "execution_id": manifest["execution_id"],
            "attempt": manifest["attempt"],
            "generation": manifest["generation"],
            "idempotency_key": manifest.get("idempotency_key"),
        }
        # NAIVE: the same envelope as at start-up, possibly expired by now.
        write_object(env, MARKER, json.dumps(marker, sort_keys=True, indent=2).encode("utf-8"))
        print("done: %d file(s), %d bytes" % (len(outputs), total_bytes))
        return 0
    except Exception as e:
        # NAIVE: prints the presigned URL (query string = credential) to the public log.
        print(f"failed to fetch {current_url}: {e}")
        # NAIVE: every failure is 1, and no failed marker or result.json is written, so
        # the objects already uploaded are orphaned and the platform has no reason to show.
        return 1


if __name__ == "__main__":
    sys.exit(main())
