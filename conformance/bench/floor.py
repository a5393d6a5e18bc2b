"""The floor of `make bench`: the least any step can do to copy its inputs.

    LSPO_CREDENTIALS_FILE=creds.json TMPDIR=scratch python3 conformance/bench/floor.py
    LSPO_CREDENTIALS_FILE=creds.json python3 conformance/bench/floor.py --store-only

`python3 -m conformance.bench step` runs this program through the same plane and
runner as the nodes and measures it the same way (CPU of the whole process
tree, peak RSS, wall), so a node's CPU per GiB can be read as a ratio to it.

Floor (default): for each input of the envelope, GET it into a temporary
file under TMPDIR while hashing it (sha256) and counting its newlines, both
in the same pass over one reused 1 MiB buffer; check the hash against the
pin, then POST the file to `outputs/<relpath>` through the presigned POST,
the file part sent with `socket.sendfile` on a plain connection (a
read/sendall loop on TLS, where the bytes must pass through user space).
Every 8 MiB written (and at the end) it syncs the file and asks the kernel
to drop its pages, as the node does. Nothing else: no manifest, no
result.json, no marker, no retries, no stop handling.

Why it counts newlines: the step node's work is to copy each input and count
its lines (result.json's metrics.lines), and the reference node counts with
`bytearray.count(b"\n", 0, n)` on every chunk, in the pass that hashes and
writes it: one more pass over every byte, a large share of a copy's CPU. The
node's CPU budget is a ratio to this program, so the floor does the same
work the same way; a floor that skipped the count would charge the node for
its work, and the ratio would no longer measure the node's own overhead
(manifest, checks, receipts, stop handling). The page-cache release is part
of that work too (the container's memory limit counts page cache, so a node
must release it): without it, the floor's CPU per GiB depended on what ran
before it on this machine (1.4 s/GiB right after the naive node freed 2 GiB,
2.2 to 2.5 right after the reference node), while the node's did not.

--store-only: the trivial client the bench uses to measure the fake store
alone. It GETs each input into the one buffer and drops it, then POSTs the
same number of bytes from that buffer: no file, no hash. The harness charges
its own process CPU during this run to the store.

Exit status 0 when every copy was accepted, 1 otherwise (one line on stderr,
without URLs: they carry credentials).
"""

import hashlib
import http.client
import json
import os
import secrets
import ssl
import sys
import tempfile
import urllib.parse

BLOCK_BYTES = 1 << 20  # the unit of every read, as in the reference node
SENDFILE_BYTES = 8 << 20  # bytes per sendfile call
CACHE_DROP_BYTES = 8 << 20  # page cache the copy lets build up before dropping it, as in the reference node


class FloorError(Exception):
    pass


def connect(url):
    """(connection, request target) for url; TLS trusts SSL_CERT_FILE (the test CA)."""
    parts = urllib.parse.urlsplit(url)
    target = (parts.path or "/") + ("?" + parts.query if parts.query else "")
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(parts.hostname, parts.port or 443,
                                           context=ssl.create_default_context())
    else:
        conn = http.client.HTTPConnection(parts.hostname, parts.port or 80)
    return conn, target


def download(url, sink):
    """GET url, calling sink(buffer, count) for each block read into the first
    count bytes of the one reused bytearray; returns the byte count."""
    conn, target = connect(url)
    try:
        conn.request("GET", target, headers={"Connection": "close"})
        response = conn.getresponse()
        if response.status != 200:
            raise FloorError("GET answered %d" % response.status)
        buffer = bytearray(BLOCK_BYTES)
        view = memoryview(buffer)
        size = 0
        while True:
            count = response.readinto(view)
            if not count:
                break
            sink(buffer, count)
            size += count
        return size
    finally:
        conn.close()


def multipart_frame(post, key):
    """(boundary, head, tail): policy fields, then `key`, then the file part last."""
    boundary = "----floor" + secrets.token_hex(16)
    fields = [(name, value) for name, value in (post.get("fields") or {}).items() if name != "key"]
    fields.append(("key", key))
    head = bytearray()
    for name, value in fields:
        head += ('--%s\r\nContent-Disposition: form-data; name="%s"\r\n\r\n%s\r\n'
                 % (boundary, name, value)).encode("utf-8")
    head += ('--%s\r\nContent-Disposition: form-data; name="file"; filename="object"\r\n'
             "Content-Type: application/octet-stream\r\n\r\n" % boundary).encode("utf-8")
    return boundary, bytes(head), ("\r\n--%s--\r\n" % boundary).encode("ascii")


def upload(post, key, size, send_file_part):
    """POST size bytes through the presigned policy; send_file_part(sock) sends them."""
    boundary, head, tail = multipart_frame(post, key)
    conn, target = connect(post["url"])
    try:
        conn.putrequest("POST", target, skip_accept_encoding=True)
        conn.putheader("Content-Type", "multipart/form-data; boundary=" + boundary)
        conn.putheader("Content-Length", str(len(head) + size + len(tail)))
        conn.putheader("Connection", "close")
        conn.endheaders()
        conn.sock.sendall(head)
        send_file_part(conn.sock)
        conn.sock.sendall(tail)
        response = conn.getresponse()
        response.read()
        if not 200 <= response.status < 300:
            raise FloorError("POST answered %d" % response.status)
    finally:
        conn.close()


def send_file(path, size):
    """The file part: sendfile on plain sockets, read/sendall on TLS."""
    def send(sock):
        with open(path, "rb", buffering=0) as source:
            if isinstance(sock, ssl.SSLSocket):
                buffer = bytearray(BLOCK_BYTES)
                view = memoryview(buffer)
                while True:
                    count = source.readinto(view)
                    if not count:
                        break
                    sock.sendall(view[:count])
                return
            sent = 0
            while sent < size:
                count = sock.sendfile(source, sent, min(SENDFILE_BYTES, size - sent))
                if not count:
                    raise FloorError("the file shrank while it was sent")
                sent += count
    return send


def release_page_cache(fd):
    """Sync the file and drop its cached pages, as the node does every 8 MiB."""
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)


def copy_one(entry, post):
    """The floor's copy of one input: GET to a temp file while hashing and
    counting newlines, then POST it. Returns the newline count."""
    fd, path = tempfile.mkstemp(prefix="floor-", dir=os.environ.get("TMPDIR") or None)
    try:
        digest = hashlib.sha256()
        lines = 0

        pending = 0

        def sink(buffer, count):
            nonlocal lines, pending
            block = memoryview(buffer)[:count]
            digest.update(block)
            lines += buffer.count(b"\n", 0, count)  # the node's count for metrics.lines, in the same pass
            while block:
                block = block[os.write(fd, block):]
            pending += count
            if pending >= CACHE_DROP_BYTES:
                release_page_cache(fd)
                pending = 0
        size = download(entry["get_url"], sink)
        release_page_cache(fd)
        if digest.hexdigest() != entry.get("sha256"):
            raise FloorError("input %r: sha256 does not match its pin" % entry.get("relpath"))
        upload(post, post["key_prefix"] + "outputs/" + entry["relpath"], size, send_file(path, size))
        return lines
    finally:
        os.close(fd)
        os.unlink(path)


def store_only_one(entry, post):
    """The store-alone client: GET dropped, then as many bytes POSTed from one buffer."""
    size = download(entry["get_url"], lambda buffer, count: None)
    filler = memoryview(bytearray(BLOCK_BYTES))

    def send(sock):
        left = size
        while left:
            count = min(left, len(filler))
            sock.sendall(filler[:count])
            left -= count
    upload(post, post["key_prefix"] + "outputs/" + entry["relpath"], size, send)


def main(argv):
    store_only = "--store-only" in argv[1:]
    try:
        with open(os.environ["LSPO_CREDENTIALS_FILE"], "rb") as handle:
            envelope = json.load(handle)
        post = envelope["staging"]["post"]
        for entry in envelope["inputs"]:
            (store_only_one if store_only else copy_one)(entry, post)
    except (FloorError, OSError, KeyError, ValueError, http.client.HTTPException) as exc:
        sys.stderr.write("bench floor: %s: %s\n" % (type(exc).__name__, exc if isinstance(exc, FloorError) else
                                                  getattr(exc, "strerror", None) or "failed"))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
