"""The store's core: objects on disk, tokens and secrets, the server, faults.

Nothing here speaks a provider's wire format. The core keeps:

* objects: one file per commit under root_dir/objects, with sha256, size, a
  commit sequence number, a generation per key and a write timeline
  (monotonic times: request began, body read, committed, response sent);
  virtual objects of deterministic bytes (GeneratedSource), so a 1 GiB input
  costs no disk;
* credentials: session tokens (CANARY..., expirable), the store secret every
  dialect signs with, and every secret ever issued (secrets(), which the
  transcripts mask);
* the wall clock the signatures are judged by (advance_clock());
* the LoopbackServer: its routes, fault entry (add_fault) and observations
  (transcript, events, connections...).

A dialect (s3.py, gcs.py) is the wire format of one provider. The interface
between the two, in both directions:

    core -> dialect   Dialect.routes()           [Route], registered in order,
                                                 before the store's catch-all
                      Dialect.answer_unrouted()  the first dialect's answer to
                                                 anything no route serves
                      Dialect.server_header      the first dialect's Server header
    dialect -> core   sign(text, digestmod)      HMAC of the store secret (hex)
                      remember(*values)          add to secrets()
                      now(), token_state(), token_seq(), url_for()
                      temp_path(), new_object_path(), commit(), source_of(),
                      fsync, server.request_id() / host_id() (ids in answers)
                      answer_unrouted(ctx)       hand a request back to the store's voice
    store API         dialect_method(), dialect_attribute(): a dialect's own
                      methods (presign_get, sign_put...) and observations
                      (put_targets...) shown on the store object

So a new provider is a new module with a Dialect subclass, composed into a
store (conformance/store/__init__.py does it for S3 and GCS); the core does
not change.
"""

import datetime
import functools
import hashlib
import hmac
import json
import os
import random
import secrets as _secrets
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Callable, Dict, Optional

from conformance.fake import Fake
from conformance.servers import IO_BLOCK_BYTES, FileSource, LoopbackServer

__all__ = ["StoreCore", "Dialect", "Route", "Obj", "GeneratedSource", "GENERATED_BLOCK_BYTES",
           "MAX_CLOCK_SKEW_S", "dialect_method", "dialect_attribute", "key_from_path",
           "compact_utc", "parse_compact_utc", "utc_datetime", "quote"]

# The repeating unit of generated objects.
GENERATED_BLOCK_BYTES = 1 << 20
# S3 refuses a presigned URL dated this far in the future ("not valid yet");
# the GCS-style PUT uses the same window.
MAX_CLOCK_SKEW_S = 15 * 60

_generated_hash_cache = {}
_generated_cache_lock = threading.Lock()


# ---------------------------------------------------------------- signing primitives
# Shared by the dialects: both providers date a signature the same way and
# encode query values as RFC 3986 unreserved-or-percent.

def utc_datetime(t):
    return datetime.datetime.fromtimestamp(int(t), datetime.timezone.utc)


def compact_utc(t):
    """YYYYMMDDTHHMMSSZ: X-Amz-Date and X-Goog-Date alike."""
    return utc_datetime(t).strftime("%Y%m%dT%H%M%SZ")


def parse_compact_utc(text):
    """Epoch seconds of a compact_utc() text; ValueError when it is not one."""
    dt = datetime.datetime.strptime(text, "%Y%m%dT%H%M%SZ")
    return (dt - datetime.datetime(1970, 1, 1)).total_seconds()


def quote(text):
    """RFC 3986 encoding of a query name or value (everything but unreserved)."""
    return urllib.parse.quote(text, safe="-_.~")


# ---------------------------------------------------------------- objects

@dataclass
class Obj:
    """A committed object. Times are time.monotonic(); None when not applicable.

    origin: "put" (seeded by the harness), "generated" (virtual), "upload"
    (a POST), "gcs-put" (a signed PUT). t_request/t_body_done/t_response_sent
    come from the upload's exchange; t_response_sent stays None when the
    answer never went out. generation counts the commits of this key, from
    1 (GCS's x-goog-if-generation-match compares against it); metadata holds
    a signed PUT's x-goog-meta-* headers (names lowercased, prefix removed);
    md5 (hex) is computed for signed PUTs only, whose ETag GCS derives from it.
    """
    key: str
    sha256: str
    size: int
    path: Optional[str]
    seq: int
    committed_at: float
    origin: str = "put"
    content_type: str = "application/octet-stream"
    t_request: Optional[float] = None
    t_body_done: Optional[float] = None
    t_response_sent: Optional[float] = None
    exchange_seq: Optional[int] = None
    generator_seed: Optional[int] = None
    generation: Optional[int] = None
    metadata: Dict[str, str] = field(default_factory=dict)
    md5: Optional[str] = None

    @property
    def etag(self):
        # S3 uses MD5; the first 32 hex digits of the sha256 stand in, since a
        # second digest would double the store's CPU per GiB. Signed PUTs,
        # whose ETag GCS derives from the MD5, compute it.
        return '"%s"' % (self.md5 if self.md5 else self.sha256[:32])


class GeneratedSource(object):
    """`size` deterministic bytes from `seed`, made on the fly.

    Block i (GENERATED_BLOCK_BYTES each) is one seeded random block with its
    first 8 bytes replaced by i (big-endian), so the bytes are not periodic:
    a node that skips or repeats a block gets a different hash.
    """

    def __init__(self, size, seed):
        self.length = size
        self.seed = seed
        self._base = random.Random(seed).getrandbits(GENERATED_BLOCK_BYTES * 8).to_bytes(
            GENERATED_BLOCK_BYTES, "little")

    def iter_blocks(self, start, end, max_block):
        block = bytearray(self._base)
        mv = memoryview(block)
        while start < end:
            index, offset = divmod(start, GENERATED_BLOCK_BYTES)
            block[0:8] = index.to_bytes(8, "big")
            stop = min(GENERATED_BLOCK_BYTES, offset + (end - start))
            pos = offset
            while pos < stop:
                n = min(max_block, stop - pos)
                yield mv[pos:pos + n]
                pos += n
            start += stop - offset

    def send_range(self, conn, start, end, progress):
        for block in self.iter_blocks(start, end, GENERATED_BLOCK_BYTES):
            conn.send(block)
            progress(len(block))

    def sha256(self):
        key = (self.length, self.seed)
        with _generated_cache_lock:
            if key in _generated_hash_cache:
                return _generated_hash_cache[key]
        h = hashlib.sha256()
        for block in self.iter_blocks(0, self.length, GENERATED_BLOCK_BYTES):
            h.update(block)
        digest = h.hexdigest()
        with _generated_cache_lock:
            _generated_hash_cache[key] = digest
        return digest


# ---------------------------------------------------------------- the dialect interface

def key_from_path(req):
    """The exchange key of a path-addressed request: "/a/b" names "a/b"."""
    return req.path[1:]


@dataclass(frozen=True)
class Route:
    """One route a dialect serves; every store handler is raw (it streams).

    key names the exchange for fault matching (default: the decoded path);
    key_in_body says the key is only known from the body (ctx.set_key).
    """
    method: str
    pattern: str
    handler: Callable
    key: Optional[Callable] = None
    key_in_body: bool = False


class Dialect(object):
    """One provider's wire format, plugged into a StoreCore.

    A subclass names itself (``name``, the key of store.dialect()), lists its
    routes, and signs its URLs with store.sign(). The first dialect of a store
    is its voice: its ``server_header`` is the server's Server header and its
    answer_unrouted() answers any request no route serves. A dialect is made
    before the server (store.server and store.origin do not exist yet in
    __init__); routes() is called once the server is up.
    """
    name = None
    server_header = None

    def __init__(self, store):
        self.store = store

    def routes(self):
        """[Route] this dialect serves, in the order they are to be matched."""
        return []

    def answer_unrouted(self, ctx):
        """The answer to a request no route serves (the first dialect's only)."""
        raise NotImplementedError("dialect %r cannot be a store's first dialect" % self.name)


def dialect_method(name, function):
    """A store method calling `function` (a method of dialect class `name`) on
    the store's dialect: ``presign_get = dialect_method("s3", S3Dialect.presign_get)``.
    Its name, docstring and signature are the dialect method's."""
    def method(self, *args, **kwargs):
        return function(self.dialect(name), *args, **kwargs)
    return functools.update_wrapper(method, function)


def dialect_attribute(name, attribute, doc=None):
    """A store attribute (read and write) that is the attribute of dialect `name`."""
    def get(self):
        return getattr(self.dialect(name), attribute)

    def set_(self, value):
        setattr(self.dialect(name), attribute, value)
    return property(get, set_, doc=doc)


# ---------------------------------------------------------------- the core

class StoreCore(Fake):
    """Objects, tokens and the server of a store whose wire formats are `dialects`.

    root_dir   where object files and upload temporaries go (created).
    dialects   Dialect classes; the first is the store's voice (see Dialect).
    tls        serve HTTPS with the test CA (conformance/ca/).
    seed       seeds fault probabilities and nothing else.
    fsync      fsync each upload before its rename (off: tests are faster and
               the store's own crash safety is not under test).
    cert_chain (certificate, key) files to serve instead of the test CA's.
    """

    def __init__(self, root_dir, dialects, tls=False, seed=0, fsync=False, name="store",
                 cert_chain=None):
        if not dialects:
            raise ValueError("a store needs at least one dialect")
        self.root_dir = os.path.abspath(root_dir)
        self._objects_dir = os.path.join(self.root_dir, "objects")
        self._tmp_dir = os.path.join(self.root_dir, "tmp")
        os.makedirs(self._objects_dir, exist_ok=True)
        os.makedirs(self._tmp_dir, exist_ok=True)
        self.fsync = fsync
        self._lock = threading.RLock()
        self._secret_key = "CANARYSECRET" + _secrets.token_hex(20)
        self._tokens = {}            # token -> monotonic expiry or None
        self._issued = [self._secret_key]
        self._objects = {}
        self._commit_log = []
        self._commit_seq = 0
        self._generations = {}       # key -> commits so far (GCS generation of the last)
        self._file_seq = 0
        self.clock_offset_s = 0.0
        self._origin = None          # see `origin`
        self._dialects = [cls(self) for cls in dialects]
        self._by_name = dict((d.name, d) for d in self._dialects)
        Fake.__init__(self, LoopbackServer(name, tls=tls, seed=seed, secret_values=self.secrets,
                                           server_header=self._dialects[0].server_header,
                                           cert_chain=cert_chain))
        # The first matching route wins: every dialect's routes, then the catch-all.
        for dialect in self._dialects:
            for r in dialect.routes():
                self.server.route(r.method, r.pattern, r.handler, raw=True, key=r.key,
                                  key_in_body=r.key_in_body)
        self.server.route("*", "/*", self.answer_unrouted, raw=True, key=key_from_path)

    def dialect(self, name):
        """The store's Dialect called `name` (KeyError if it has none)."""
        return self._by_name[name]

    # ------------------------------------------------------------ credentials
    def now(self):
        """The store's wall clock (epoch seconds), moved by advance_clock()."""
        return time.time() + self.clock_offset_s

    def advance_clock(self, seconds):
        """Move the store's wall clock forward (expire URLs and policies)."""
        self.clock_offset_s += seconds

    def new_token(self):
        """A fresh session token; begins with CANARY so leaks can be grepped."""
        token = "CANARY" + _secrets.token_hex(20)
        with self._lock:
            self._tokens[token] = None
            self._issued.append(token)
        return token

    def expire_token(self, token, at=None):
        """From monotonic time `at` (default now) the token is refused (ExpiredToken)."""
        with self._lock:
            self._tokens[token] = time.monotonic() if at is None else at

    def token_seq(self, token):
        """1 for the first token new_token() issued, 2 for the next...; None if unknown.
        Transcripts record this number, never the token itself."""
        with self._lock:
            tokens = [t for t in self._tokens]
        return tokens.index(token) + 1 if token in tokens else None

    def token_state(self, token):
        """"ok", "expired" (expire_token()) or "unknown" (never issued)."""
        with self._lock:
            if token not in self._tokens:
                return "unknown"
            at = self._tokens[token]
        if at is not None and time.monotonic() >= at:
            return "expired"
        return "ok"

    def secrets(self):
        """Every token, signature, policy and key the store ever issued."""
        with self._lock:
            return list(self._issued)

    def remember(self, *values):
        """Count these among secrets() (a dialect's signatures and policies)."""
        with self._lock:
            self._issued.extend(values)

    def sign(self, text, digestmod=hashlib.sha256):
        """HMAC of `text` (UTF-8) under the store secret, in lowercase hex."""
        return hmac.new(self._secret_key.encode(), text.encode("utf-8"), digestmod).hexdigest()

    def url_for(self, key):
        """The object's URL without any query (it answers 403)."""
        return self.origin + "/" + urllib.parse.quote(key, safe="/~")

    # ------------------------------------------------------------ objects
    def temp_path(self, kind, exchange_seq):
        """Where an upload of exchange `exchange_seq` streams before its commit."""
        return os.path.join(self._tmp_dir, "%s-%d-%d.part" % (kind, exchange_seq, os.getpid()))

    def new_object_path(self, key):
        """A fresh file name for the next commit of `key` (rename the upload to it)."""
        with self._lock:
            self._file_seq += 1
            n = self._file_seq
        return os.path.join(self._objects_dir, "%06d-%s" % (
            n, hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:24]))

    def commit(self, key, sha, size, path, origin, if_generation=None, **fields):
        """Make `key` name the new object; None when if_generation does not hold.

        if_generation is GCS's x-goog-if-generation-match: 0 means "no live
        object", N means "the live object's generation is N". It is checked
        and the object published under one lock, so two racing create-only
        uploads cannot both succeed. The commit event is emitted outside the
        store's lock (the server's lock is taken there; never nest them).
        """
        with self._lock:
            if if_generation is not None:
                live = self._objects.get(key)
                if (live.generation if live is not None else 0) != if_generation:
                    return None
            self._commit_seq += 1
            generation = self._generations.get(key, 0) + 1
            self._generations[key] = generation
            obj = Obj(key, sha, size, path, self._commit_seq, time.monotonic(), origin,
                      generation=generation, **fields)
            self._objects[key] = obj
            self._commit_log.append(obj)
        self.server._event("commit", fields.get("exchange_seq"), None, None, key, size, sha)
        return obj

    def put(self, key, source, content_type="application/octet-stream"):
        """Seed an object without HTTP from bytes or a file path; (sha256, size)."""
        final = self.new_object_path(key)
        tmp = final + ".part"
        h = hashlib.sha256()
        size = 0
        with open(tmp, "wb") as out:
            if isinstance(source, (bytes, bytearray, memoryview)):
                h.update(source)
                out.write(source)
                size = len(source)
            else:
                buf = bytearray(IO_BLOCK_BYTES)
                mv = memoryview(buf)
                with open(os.fspath(source), "rb", buffering=0) as f:
                    while True:
                        n = f.readinto(buf)
                        if not n:
                            break
                        h.update(mv[:n])
                        out.write(mv[:n])
                        size += n
        os.rename(tmp, final)
        obj = self.commit(key, h.hexdigest(), size, final, "put", content_type=content_type)
        return obj.sha256, obj.size

    def put_json(self, key, document):
        """Seed a JSON document (a manifest, say); serve it with presign_get."""
        return self.put(key, json.dumps(document).encode("utf-8"), content_type="application/json")

    def serve_generated(self, key, size, seed):
        """Register a virtual object of `size` bytes from `seed`; (sha256, size)."""
        source = GeneratedSource(size, seed)
        obj = self.commit(key, source.sha256(), size, None, "generated", generator_seed=seed)
        return obj.sha256, size

    def generated_bytes(self, size, seed):
        """Iterate the bytes serve_generated(key, size, seed) would serve."""
        return GeneratedSource(size, seed).iter_blocks(0, size, GENERATED_BLOCK_BYTES)

    def objects(self):
        """{key: Obj} of the current object at every key."""
        with self._lock:
            return dict(self._objects)

    def commit_log(self):
        """Every commit in order, overwritten ones included."""
        with self._lock:
            return list(self._commit_log)

    def delete(self, key):
        with self._lock:
            self._objects.pop(key, None)

    def source_of(self, obj):
        """A response body source on the object's bytes (file or generated)."""
        if obj.path is None:
            return GeneratedSource(obj.size, obj.generator_seed)
        return FileSource(obj.path, obj.size)

    def read_hash(self, key):
        """(sha256, size) computed by streaming the stored bytes (KeyError if absent)."""
        obj = self.objects()[key]
        h = hashlib.sha256()
        size = 0
        for block in self.source_of(obj).iter_blocks(0, obj.size, IO_BLOCK_BYTES):
            h.update(block)
            size += len(block)
        return h.hexdigest(), size

    def open_object(self, key):
        """A binary file object on the stored bytes (seeded and uploaded objects)."""
        obj = self.objects()[key]
        if obj.path is None:
            raise ValueError("generated object %r has no file; use generated_bytes()" % key)
        return open(obj.path, "rb")

    # ------------------------------------------------------------ server passthrough
    def answer_unrouted(self, ctx):
        """The store's voice (its first dialect) answers a request no route serves."""
        self._dialects[0].answer_unrouted(ctx)

    # add_fault, clear_faults, transcript, events, connections, errors, port,
    # wait_until and close are Fake's (conformance/fake.py).
    @property
    def origin(self):
        """The origin the store's URLs name: the server's, unless a plane names it
        otherwise (a host name instead of 127.0.0.1, for NO_PROXY)."""
        return self._origin or self.server.origin

    @origin.setter
    def origin(self, value):
        self._origin = value

    @property
    def max_concurrency(self):
        return self.server.max_concurrency

    def wait_for(self, predicate, timeout, since=0):
        return self.server.wait_for(predicate, timeout, since)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
