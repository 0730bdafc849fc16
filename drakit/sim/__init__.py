"""Cluster simulator: a workload replayed over a cluster with the control plane around the allocator.

Public API::

    parse_scenario(text) -> Scenario           # YAML with line-numbered errors (files: drakit.sources.load_scenario)
    parse_scenario(text, source) -> Scenario
    scenario_from_objects(header, objects) -> Scenario   # the same checks, on objects in memory
    run_scenario(scenario, seed, options=SimOptions(fast=True)) -> SimulationResult

Stages: ``scenario`` (file -> Scenario), ``controller`` (claims from templates), ``cluster``
(in-memory objects and versions), ``scheduler`` (one scheduling cycle; ``fastpath`` holds its
per-shape node verdicts), ``runner`` (the event loop), ``result`` (outcomes and summaries),
``report`` (text, JSON, charts).
"""

from drakit.sim.result import PodResult, SimEvent, SimulationResult
from drakit.sim.runner import SimOptions, run_scenario
from drakit.sim.scenario import (
    NodeGroup,
    Scenario,
    parse_add_nodes,
    parse_scenario,
    scenario_from_objects,
)

__all__ = [
    "NodeGroup",
    "PodResult",
    "Scenario",
    "SimEvent",
    "SimOptions",
    "SimulationResult",
    "parse_add_nodes",
    "parse_scenario",
    "run_scenario",
    "scenario_from_objects",
]
