"""What a diagnosis reads: a :class:`~drakit.inventory.snapshot.ClusterSnapshot`.

``ExplainInput`` was the diagnosis's own snapshot type; it is now the one snapshot every verb
takes, and this name stays only so that callers written against it keep working.
"""

from drakit.inventory.snapshot import ClusterSnapshot, Obj, key_of, name_of, namespace_of

ExplainInput = ClusterSnapshot

__all__ = ["ClusterSnapshot", "ExplainInput", "Obj", "key_of", "name_of", "namespace_of"]
