"""Cluster simulator: a workload replayed over a cluster with the control plane around the allocator.

Public API::

    load_scenario(path) -> Scenario            # YAML with line-numbered errors
    parse_scenario(text, source) -> Scenario
    run_scenario(scenario, seed) -> SimulationResult

Stages: ``scenario`` (file -> Scenario), ``controller`` (claims from templates), ``cluster``
(in-memory objects and versions), ``scheduler`` (one scheduling cycle), ``runner`` (the
event loop), ``result`` (outcomes and summaries), ``report`` (text, JSON, charts).
"""

from drakit.sim.result import PodResult, SimEvent, SimulationResult
from drakit.sim.runner import run_scenario
from drakit.sim.scenario import NodeGroup, Scenario, load_scenario, parse_add_nodes, parse_scenario

__all__ = [
    "NodeGroup",
    "PodResult",
    "Scenario",
    "SimEvent",
    "SimulationResult",
    "load_scenario",
    "parse_add_nodes",
    "parse_scenario",
    "run_scenario",
]
