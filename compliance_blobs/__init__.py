"""Blob store adapters: where evidence files and attachments are kept.

Core declares the port (``compliance_core.kernel.blobs.BlobStore``) and finds these adapters by URL
scheme through the ``compliance.blobs`` entry points, so it imports neither them nor boto3:

- ``file:///path`` (``compliance_blobs.local``): a local directory, the default beside a SQLite
  database; atomic and durable (fsync, then a hard link into place);
- ``s3://bucket/prefix?endpoint=...&region=...`` (``compliance_blobs.s3``): S3-compatible object
  storage through boto3, multipart for large files;
- ``memory://`` (``compliance_blobs.memory``): a dictionary, for tests and short-lived embedding.

Each accepts ``max_bytes=N`` in its URL's query (the largest file it takes; 1 GiB by default).
"""
