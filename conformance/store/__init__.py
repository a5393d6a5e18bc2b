"""The fake object store every plane uses: S3-style presigned GET and POST,
GCS-style V4 signed PUT, on one loopback server.

    store = ObjectStore(root_dir)                 # loopback server on port 0
    token = store.new_token()                     # "CANARY..." (a secret canary)
    url = store.presign_get("in/a.bin", token)    # GET origin/in/a.bin?X-Amz-...
    post = store.presign_post("out/run-1/", token)  # {"url", "fields", "key_prefix"}
    put = store.sign_put("bucket", "runs/7/part-0003.ndjson", headers)  # PUT origin/bucket/...
    ...
    store.objects()["out/run-1/result.json"].sha256
    store.close()

The package, one module per concern:

    core.py       StoreCore: objects on disk (sha256, size, generation, write
                  timeline), generated objects, tokens and secrets, the store
                  clock, the LoopbackServer (routes, faults, observations);
                  and the Dialect interface the wire formats plug into
    s3.py         S3Dialect: presigned GET and POST, S3 error XML, the 405 for
                  anything no route serves (S3 is the store's voice)
    multipart.py  the presigned POST's streaming multipart/form-data reader
    gcs.py        GcsDialect: V4 signed PUT, GCS error XML

ObjectStore below is the composition every plane uses: the core with the S3
and GCS dialects, their methods and observations shown on the store object.
A future provider adds a module with a Dialect subclass and composes it (here
or in its own store class); core.py does not change.
"""

from conformance.store.core import (
    GENERATED_BLOCK_BYTES, MAX_CLOCK_SKEW_S, GeneratedSource, Obj, StoreCore, dialect_attribute,
    dialect_method,
)
from conformance.store.gcs import (
    GCS_ALGORITHM, GCS_EMPTY_CONTENT_TYPE, GCS_MAX_EXPIRES_S, GCS_MESSAGES, GCS_META_PREFIX,
    GCS_PAYLOAD_HASH, GCS_QUERY_PARAMS, GCS_SCOPE_TAIL, GCS_SERVER_HEADER, GCS_SIGNATURE_DETAILS,
    GCS_SIGNER_EMAIL, GCS_XML_CONTENT_TYPE, GcsDialect, gcs_error_xml,
)
from conformance.store.multipart import FIELD_READ_BYTES, MAX_PRE_DATA_BYTES
from conformance.store.s3 import ALGORITHM, DEFAULT_MAX_BYTES, REGION, UPLOAD_PATH, S3Dialect

__all__ = ["ObjectStore", "Obj", "GeneratedSource", "UPLOAD_PATH", "gcs_error_xml",
           "GCS_SIGNER_EMAIL", "GCS_QUERY_PARAMS"]


class ObjectStore(StoreCore):
    """An S3-like store on a LoopbackServer, with GCS's signed PUT; see the package docstring.

    root_dir   where object files and upload temporaries go (created).
    tls        serve HTTPS with the test CA (conformance/ca/).
    seed       seeds fault probabilities and nothing else.
    fsync      fsync each upload before its rename (off: tests are faster and
               the store's own crash safety is not under test).
    cert_chain (certificate, key) files to serve instead of the test CA's.
    """

    # The first dialect is the store's voice (Server: AmazonS3, 405 for the rest).
    DIALECTS = (S3Dialect, GcsDialect)

    def __init__(self, root_dir, tls=False, seed=0, fsync=False, name="store", cert_chain=None):
        StoreCore.__init__(self, root_dir, self.DIALECTS, tls=tls, seed=seed, fsync=fsync,
                           name=name, cert_chain=cert_chain)

    # ---- S3 (s3.py): presigned GET and POST
    access_key_id = dialect_attribute("s3", "access_key_id", "The access key id in every credential.")
    presign_get = dialect_method("s3", S3Dialect.presign_get)
    presign_post = dialect_method("s3", S3Dialect.presign_post)

    # ---- GCS (gcs.py): V4 signed PUT, and what checks observe of each PUT
    sign_put = dialect_method("gcs", GcsDialect.sign_put)
    revoke_signature = dialect_method("gcs", GcsDialect.revoke_signature)
    put_targets = dialect_attribute("gcs", "put_targets",
                                    "The raw request target of each PUT (a secret: the transcript "
                                    "masks it; this keeps it for byte-exact comparison).")
    on_put = dialect_attribute("gcs", "on_put", "None, or a hook called as each PUT's head arrives.")
    put_observed = dialect_attribute("gcs", "put_observed", "What on_put returned, PUT by PUT.")
    put_success_status = dialect_attribute("gcs", "put_success_status",
                                           "The status answered after a commit (200).")
