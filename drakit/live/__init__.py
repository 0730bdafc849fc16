"""The live cluster, an edge: the client seam, its real and in-memory implementations, and
what is built on the seam (snapshots, watches, ``profile apply``).

Nothing below the edges imports this package.  ``drakit.live.kube`` is the only module that
imports the ``kubernetes`` client library, lazily, so offline verbs never pay for it.
"""

from drakit.live.client import ClusterClient, ClusterError, ErrorCode, Page, ServerInfo, WatchEvent
from drakit.live.memory import MemoryCluster
from drakit.live.snapshot import Scope, read_snapshot

__all__ = [
    "ClusterClient",
    "ClusterError",
    "ErrorCode",
    "MemoryCluster",
    "Page",
    "Scope",
    "ServerInfo",
    "WatchEvent",
    "read_snapshot",
]
