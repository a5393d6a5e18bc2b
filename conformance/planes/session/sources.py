"""The session's sources: bundles (crawler results) in the store, and the acquisitions that name them.

An acquisition delivers the very document a crawler job stores (D27): a crawler result as
contract/crawler.md defines it, built here with conformance/planes/crawler_docs.py, whose
normalized content is the rows a check gives (CRAWLER-RESULT-10: a header line, then one
canonical array per row). SourceBook.add stores it at the crawler's own key layout in the plane's
object store, presigns a GET for it, and scripts the control plane so that an acquisition of the
source becomes ready with a descriptor naming that URL, size and SHA-256 (SESSION-ACQUIRE-6):

    source = plane.add_source(columns=["city", "temp"], rows=[["Oslo", 3], ["Lima", 19]])
    source.bundle.content        # the bytes a probe reads; source.bundle.raw: the stored result
    plane.add_source(rows=..., ready_after_reads=2)            # any control.set_source keyword
    plane.add_source(rows=..., declared_bytes=b"x" * 300)      # the descriptor declares other bytes
    plane.add_source(rows=..., bundle_source_id=other_id)      # a bundle for another source
    plane.add_source(rows=..., url=lambda url: url.replace(store_origin, other_origin))
    plane.add_source(rows=..., patch=descriptor_patch(bundle_size_bytes=MAX_BUNDLE_BYTES + 1))
    plane.add_source(rows=..., patch=document_patch(producer_fence=99))

Every variant the SESSION-ACQUIRE clauses name is one keyword: the document (document_patch:
misbound ids, no result_download, digests not hex), the descriptor (descriptor_patch: size, URL,
expiry, its four bindings, an extra or a missing key), the bytes served against those declared
(declared_bytes; or a store fault on source.match()), and the bundle itself (bundle_patch on the
result document, raw_patch on its bytes, content= bytes that break CRAWLER-RESULT-10,
request_digest= / egress_policy_attestation= for an acquisition the bundle is not bound to).
"""

import collections
import hashlib
import secrets as _secrets
import uuid

from conformance.faults import Match
from conformance.planes import crawler_docs as docs
from conformance.planes.session import deploy
from conformance.planes.session.control import OMIT

__all__ = ["SourceBook", "Source", "Bundle", "build_bundle", "rows_content", "descriptor_patch",
           "document_patch", "BUCKET", "MAX_BUNDLE_BYTES", "MAX_SOURCE_BYTES", "SOURCE_HOST"]

# MOSTLYRIGHT_CRAWLER_RESULTS_BUCKET: the bucket a crawler job stores its results in, and
# so the one a descriptor URL's path starts with (section *Source acquisition*).
BUCKET = "conformance-results"
# SESSION-ACQUIRE-6: the largest bundle a descriptor may declare.
MAX_BUNDLE_BYTES = 33554432
# SESSION-ACQUIRE-8: the largest decoded content a probe reads.
MAX_SOURCE_BYTES = 16777216
# The host the bundle's crawl request names (a string only: nothing is fetched there).
SOURCE_HOST = "source.conformance.test"
# How long the presigned GET stays valid: past any descriptor's expires_at (the control
# plane's DOWNLOAD_EXPIRES_IN_S, 600 s) and any check.
PRESIGN_EXPIRES_S = 3600
# The crawl request's requested_at: a fixed instant, so a bundle's digests are reproducible.
REQUESTED_AT = "2026-11-30T08:00:00Z"
MEDIA_TYPES = {"csv": "text/csv", "jsonl": "application/x-ndjson"}

Bundle = collections.namedtuple("Bundle", "raw doc content request request_digest attestation canary")
Bundle.__doc__ = """A crawler result built for a source: its canonical bytes (raw, what the store
serves), the document, the decoded content a probe reads, the crawl request it restates (never
sent to the node: only its digest is in the result), the request digest, the egress policy
attestation, and the canary planted in the receipt's source URL (SESSION-SECRET-3: no part of a
received body is ever printed)."""


class Source(object):
    """One scripted source: source_id, columns, rows, data_format, bundle (Bundle), key (the
    store key; None when not stored), url (the descriptor's URL), declared (the bytes whose size
    and SHA-256 the descriptor declares), in_scope (in the lease's source_ids)."""

    def __init__(self, source_id, columns, rows, data_format, bundle, key, url, declared, in_scope):
        self.source_id, self.columns, self.rows, self.data_format = source_id, columns, rows, data_format
        self.bundle, self.key, self.url, self.declared, self.in_scope = bundle, key, url, declared, in_scope

    @property
    def content_sha256(self):
        """What a result that read this source carries as content_sha256 (SESSION-PROBE-6)."""
        return hashlib.sha256(self.bundle.content).hexdigest()

    def match(self, **fields):
        """The store's Match for the download of this bundle (a fault on it: a 404, an endless body)."""
        return Match(**dict({"method": "GET", "key": self.key}, **fields))

    def __repr__(self):
        return "Source(%s, %d rows, %s%s)" % (self.source_id, len(self.rows or ()), self.data_format,
                                             "" if self.in_scope else ", out of scope")


def rows_content(columns, rows):
    """The normalized content of CRAWLER-RESULT-10: the canonical column list, then one
    canonical array per row, every line ending in \\n."""
    lines = [docs.canonical(list(columns))] + [docs.canonical(list(row)) for row in rows]
    return b"".join(line + b"\n" for line in lines)


def build_bundle(source_id, columns=None, rows=None, data_format="jsonl", raw=None, content=None,
                 filename=None, attestation=None, bundle_patch=None, raw_patch=None):
    """A crawler result whose content is the rows (or raw, normalised by the reference
    normaliser; or content, bytes taken as they are, well-formed or not), bound to a crawl
    request for source_id. bundle_patch(doc) and raw_patch(bytes) change it on purpose."""
    canary = "CANARY" + _secrets.token_hex(8)
    filename = filename or "data.%s" % data_format
    attestation = attestation or hashlib.sha256(("conformance:egress:" + source_id).encode()).hexdigest()
    request = docs.make_request("https://%s/%s/%s" % (SOURCE_HOST, canary, filename), attestation,
                                source_id=source_id, data_format=data_format, filename=filename,
                                requested_at=REQUESTED_AT)
    if content is None and raw is not None:
        normalized = docs.normalize_bytes(raw, data_format, request["query"]["limits"])
    else:
        content = rows_content(columns or ["value"], rows or []) if content is None else bytes(content)
        try:
            normalized = docs.read_content(content, data_format)
        except docs.ContentError:  # malformed on purpose: the summary cannot be read off it
            normalized = docs.Normalized(content, 0, list(columns or ["value"]), docs.sha256_hex(b""),
                                         docs.digest({"column_names": list(columns or ["value"]),
                                                      "data_format": data_format}))
    fetched = raw if raw is not None else normalized.content
    evidence = docs.make_evidence([docs.make_hop(request["query"]["url"], 200,
                                                 content_type=MEDIA_TYPES.get(data_format, "text/plain"),
                                                 content_length=len(fetched))],
                                  docs.sha256_hex(fetched), len(fetched))
    header = docs.input_header(request, docs.make_retrieval(request["query"]["url"], evidence), _clean_room())
    doc = docs.build_result(header, normalized)
    doc["schema_version"] = deploy.CRAWLER_RESULT_SCHEMAS[0]  # the deployment's result schema (D38)
    if bundle_patch is not None:
        patched = bundle_patch(doc)
        doc = patched if patched is not None else doc
    encoded = docs.canonical(doc)
    if raw_patch is not None:
        encoded = raw_patch(encoded)
    return Bundle(encoded, doc, normalized.content, request, docs.digest(request), attestation, canary)


def _clean_room():
    """The clean-room claim a crawler on this machine makes; a machine with no sandbox of its
    own still gets a bundle (the claim is the fixture's, never judged against this host)."""
    try:
        return docs.clean_room()
    except ValueError:
        return docs.clean_room("x86_64")


def _patch(target, changes):
    for name, value in changes.items():
        if value is OMIT:
            target.pop(name, None)
        else:
            target[name] = value


def descriptor_patch(**changes):
    """A control.set_source patch that changes result_download's keys (OMIT removes one; an
    unknown name adds it) on every ready document."""
    def patch(doc):
        if isinstance(doc.get("result_download"), dict):
            _patch(doc["result_download"], changes)
        return doc
    return patch


def document_patch(**changes):
    """A control.set_source patch that changes the acquisition document's own keys (OMIT removes
    one: result_download=OMIT, a ready acquisition without a descriptor)."""
    def patch(doc):
        _patch(doc, changes)
        return doc
    return patch


class SourceBook(object):
    """The plane's sources: builds each bundle, stores it, presigns its URL, scripts the control
    plane (SourceBook.add is plane.add_source)."""

    def __init__(self, control, store, bucket=BUCKET):
        self.control, self.store, self.bucket = control, store, bucket
        self.sources = []

    def _source_id(self, source_id, in_scope):
        used = set(s.source_id for s in self.sources)
        allowlist = self.control.source_ids  # the lease's context shares this list
        if source_id is None:
            free = [s for s in allowlist if s not in used] if in_scope else []
            source_id = free[0] if free else str(uuid.uuid4())
        if in_scope and source_id not in allowlist:
            if self.control.lease is not None:
                raise RuntimeError("add_source(%s): the lease was already issued; add sources before the node "
                                   "starts" % source_id)
            allowlist.append(source_id)
        return source_id

    def add(self, rows=None, columns=None, data_format="jsonl", source_id=None, in_scope=True, raw=None,
            content=None, filename=None, bundle_source_id=None, bundle_patch=None, raw_patch=None, url=None,
            store=True, declared_bytes=None, **script):
        """Build, store and script one source; returns its Source. See the module docstring;
        **script goes to control.set_source (ready_after_reads, fail_code, expire_once, refuse,
        retry_after_s, request_digest, source_authority_digest, egress_policy_attestation,
        download_expires_in_s, patch)."""
        source_id = self._source_id(source_id, in_scope)
        if rows is not None and columns is None:
            columns = ["c%d" % (i + 1) for i in range(len(rows[0]) if rows else 1)]
        bundle = build_bundle(bundle_source_id or source_id, columns, rows, data_format, raw, content, filename,
                              bundle_patch=bundle_patch, raw_patch=raw_patch)
        key = "%s/%s%s" % (self.bucket, docs.RESULT_PREFIX, _secrets.token_hex(32)) if store else None
        if key is not None:
            self.store.put(key, bundle.raw, content_type=docs.RESULT_MEDIA_TYPE)
        signed = self.store.presign_get(key or "%s/%sabsent" % (self.bucket, docs.RESULT_PREFIX),
                                        self.store.new_token(), expires_in_s=PRESIGN_EXPIRES_S)
        signed = url(signed) if callable(url) else (url or signed)
        declared = bundle.raw if declared_bytes is None else bytes(declared_bytes)
        script.setdefault("egress_policy_attestation", bundle.attestation)
        script.setdefault("request_digest", bundle.request_digest)
        self.control.set_source(source_id, bundle_url=signed, bundle_bytes=declared, **script)
        source = Source(source_id, list(columns) if columns else None, rows, data_format, bundle, key, signed,
                        declared, in_scope)
        self.sources.append(source)
        return source

    def find(self, source):
        """The Source of a Source or a source id (None when none was added)."""
        source_id = getattr(source, "source_id", source)
        return next((s for s in self.sources if s.source_id == source_id), None)

    def canaries(self):
        """Each bundle's canary: text of a received body that no output may repeat."""
        return [s.bundle.canary for s in self.sources]

