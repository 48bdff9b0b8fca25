"""Storage adapters for compliance_core's repository Protocols.

Each adapter package offers ``open_store(url)`` and is found by URL scheme through the
``compliance.stores`` entry points: ``memory://``, ``sqlite:///path.db`` (the embedded
default) and ``postgresql://user@host/db`` (shared by many processes on many machines).
"""
