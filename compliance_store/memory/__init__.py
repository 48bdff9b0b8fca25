"""An in-memory store: real behaviour (transactions, uniqueness, filters), no persistence.

Used by tests and by apps that want a throwaway platform. Writers are serialised by one lock and
every change is journalled, so a failed write rolls back completely.
"""

from .store import MemoryStore, open_store

__all__ = ["MemoryStore", "open_store"]
