"""The streaming multipart/form-data reader of the S3 presigned POST (s3.py).

    reader = FormReader(ctx.body, boundary, store.temp_path("upload", seq))
    fields, names, file_part, leftover = reader.read_fields()   # FormError
    sha, size, after = reader.stream_file(leftover, store_it, max_bytes)
    reader.move_file(final_path, fsync)      # or reader.cleanup()

The fields are read in small blocks, so the ``key`` (and with it a
key-matched fault) is known after little read-ahead and request-side fault
positions stay exact; the body is never held: the file part streams to a temp
file while hashed, and anything after it is only scanned for part names (S3
ignores it). Refusals raise FormError with S3's code; s3.py answers it.
"""

import hashlib
import os
import re

from conformance.servers import IO_BLOCK_BYTES

__all__ = ["FormReader", "FormError", "parse_part_headers", "MAX_PRE_DATA_BYTES",
           "FIELD_READ_BYTES"]

# S3 refuses a POST whose fields before the file exceed 20 KB.
MAX_PRE_DATA_BYTES = 20 * 1024
# While reading the fields, read in blocks this small: the key (and so a
# key-matched fault) is known after at most this much read-ahead, which keeps
# request-side fault positions exact from here on.
FIELD_READ_BYTES = 4096
# What follows the file part is scanned for part names up to this many bytes.
MAX_TAIL_SCAN_BYTES = 65536


class FormError(Exception):
    """A malformed form: 400 with S3's code (message None: S3's default text)."""

    def __init__(self, code, message=None, extra=()):
        Exception.__init__(self, code)
        self.code = code
        self.message = message
        self.extra = extra


_DISPOSITION_PARAM = re.compile(r';\s*([A-Za-z0-9_*-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))')


def parse_part_headers(block):
    """(name, filename, content_type) from a part's header block (bytes)."""
    name = filename = ctype = None
    for line in block.decode("utf-8", "replace").split("\r\n"):
        hname, sep, value = line.partition(":")
        if not sep:
            raise FormError("MalformedPOSTRequest")
        hname = hname.strip().lower()
        if hname == "content-disposition":
            kind, _, params = value.strip().partition(";")
            if kind.strip().lower() != "form-data":
                raise FormError("MalformedPOSTRequest")
            for m in _DISPOSITION_PARAM.finditer(";" + params):
                pname = m.group(1).lower()
                pval = m.group(2) if m.group(2) is not None else m.group(3)
                if pname == "name":
                    name = pval
                elif pname == "filename":
                    filename = pval
        elif hname == "content-type":
            ctype = value.strip()
    if name is None:
        raise FormError("MalformedPOSTRequest")
    return name, filename, ctype


class FormReader(object):
    """One multipart/form-data body, read as it streams.

    body      the exchange's request body (readinto, readinto_full, finished, drain)
    boundary  the boundary from Content-Type (bytes)
    tmp_path  where the file part goes if stream_file() is asked to keep it
    """

    def __init__(self, body, boundary, tmp_path):
        self.body = body
        self.delim = b"\r\n--" + boundary
        self._tmp_target = tmp_path
        self.tmp_path = None         # set while a temp file exists
        self.fd = None

    def cleanup(self):
        """Close and remove the temp file, if any (idempotent)."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self.tmp_path is not None:
            try:
                os.unlink(self.tmp_path)
            except OSError:
                pass
            self.tmp_path = None

    def move_file(self, final, fsync):
        """Close the complete file part (fsynced first if asked) and rename it to final."""
        if fsync:
            os.fsync(self.fd)
        os.close(self.fd)
        self.fd = None
        os.rename(self.tmp_path, final)
        self.tmp_path = None

    def read_fields(self):
        """Parse parts up to the file part's headers, reading in small blocks.

        Returns (fields {lower name: value}, names in order, file part
        (name, filename, content type) or None, bytes already read past the
        file part's headers).
        """
        body = self.body
        delim = self.delim
        data = bytearray(b"\r\n")    # so the first boundary reads as a delimiter
        buf = bytearray(FIELD_READ_BYTES)
        mv = memoryview(buf)
        pos = None
        fields = {}
        names = []

        def more():
            n = body.readinto(mv)
            if n == 0:
                raise FormError("MalformedPOSTRequest")
            data.extend(mv[:n])
            if len(data) > MAX_PRE_DATA_BYTES + len(delim) + 4096:
                raise FormError("MaxPostPreDataLengthExceeded")

        while pos is None:           # skip any preamble
            i = data.find(delim)
            if i >= 0:
                pos = i
            else:
                more()
        while True:
            while len(data) < pos + len(delim) + 2:
                more()
            after = pos + len(delim)
            tail = bytes(data[after:after + 2])
            if tail == b"--":
                return fields, names, None, b""
            if tail != b"\r\n":
                raise FormError("MalformedPOSTRequest")
            while True:
                end = data.find(b"\r\n\r\n", after + 2)
                if end >= 0:
                    break
                more()
            name, filename, ctype = parse_part_headers(bytes(data[after + 2:end]))
            value_start = end + 4
            if name.lower() == "file":
                return fields, names, (name, filename, ctype), bytes(data[value_start:])
            while True:
                nxt = data.find(delim, value_start)
                if nxt >= 0:
                    break
                more()
            lname = name.lower()
            if lname in fields:
                raise FormError("InvalidArgument", "Field %s appears more than once" % name,
                                extra=(("ArgumentName", name),))
            fields[lname] = data[value_start:nxt].decode("utf-8", "replace")
            names.append(name)
            pos = nxt

    def stream_file(self, leftover, store_it, max_bytes):
        """Stream the file part to the temp file, hashing; find the delimiter.

        Returns (sha256 hex, size, names of parts after the file) with size
        None when the body ended without the delimiter. Stops writing (but
        keeps counting) once the size exceeds max_bytes.
        """
        body = self.body
        delim = self.delim
        dlen = len(delim)
        block = IO_BLOCK_BYTES
        buf = bytearray(block + dlen + len(leftover))
        mv = memoryview(buf)
        h = hashlib.sha256()
        if store_it:
            self.tmp_path = self._tmp_target
            self.fd = os.open(self.tmp_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        fd = self.fd
        size = 0
        writing = store_it
        carry = len(leftover)
        buf[:carry] = leftover
        found = -1
        while True:
            filled = carry
            if body.finished and carry == 0:
                break
            n = body.readinto_full(mv[carry:carry + block])
            filled = carry + n
            found = buf.find(delim, 0, filled)
            if found >= 0:
                safe = found
            elif n == 0:
                safe = filled           # body ended: no delimiter anywhere
            else:
                safe = max(0, filled - (dlen - 1))
            if safe:
                size += safe
                if writing and max_bytes is not None and size > max_bytes:
                    writing = False
                if writing:
                    chunk = mv[:safe]
                    h.update(chunk)
                    while chunk:
                        w = os.write(fd, chunk)
                        chunk = chunk[w:]
            if found >= 0 or n == 0:
                break
            buf[:filled - safe] = buf[safe:filled]
            carry = filled - safe
        if found < 0:
            body.drain()
            return None, None, []
        # What follows the file part: "--" (the end) or more parts S3 ignores.
        tail = bytearray(buf[found + dlen:filled])
        while len(tail) < MAX_TAIL_SCAN_BYTES and not body.finished:
            n = body.readinto(mv[:block])
            if not n:
                break
            tail += mv[:n]
        body.drain()
        after = [m.group(1).decode("utf-8", "replace")
                 for m in re.finditer(rb'form-data;[^\r\n]*?\bname="([^"]*)"', bytes(tail))]
        return h.hexdigest(), size, after
