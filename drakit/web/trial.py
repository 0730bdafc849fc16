"""The platform trial over the served snapshot: ``drakit trial -o json``'s table and checks, and the
executed results the store holds.

The table (what each trial profile may use, and the exclusion and retention checks the profiles
imply) is :func:`drakit.profiles.trial.trial_table` on the revision's snapshot, computed once per
revision.  The executed half is read, not run: the runs ``drakit trial --execute --store`` left in
the trial's namespace, grouped by profile and product with
:class:`drakit.executors.trial.Measured`, the numbers its Markdown report prints.
"""

from __future__ import annotations

from typing import Any

from drakit.web.auth import Principal
from drakit.web.state import Revision, WebState

__all__ = ["TRIAL_NAMESPACE", "trial"]

TRIAL_NAMESPACE = "drakit-trial"
"""Where ``drakit trial --execute`` records its runs (:func:`drakit.executors.trial.execute_trial`)."""


def _table(rev: Revision) -> dict[str, Any]:
    from drakit.profiles.trial import TRIAL_PROFILES, trial_profiles, trial_table

    def compute() -> dict[str, Any]:
        table = trial_table(rev.snapshot, trial_profiles())
        return {"source": rev.snapshot.provenance.source, "profilesFrom": list(TRIAL_PROFILES),
                "profiles": table.to_json(), "passed": table.passed}

    return rev.answers.get_or("trial", compute)


def _executed(state: WebState, who: Principal) -> dict[str, Any]:
    from drakit.executors.trial import MODES, Measured

    if state.store is None or not who.sees(TRIAL_NAMESPACE):
        return {"products": [], "passed": True}
    groups: dict[tuple[str, str], list[Any]] = {}
    for run in state.store.runs():
        if run.namespace != TRIAL_NAMESPACE or run.recipe not in MODES:
            continue
        record = state.store.get(run.id)
        product = next((d.product for d in record.devices if d.product), "")
        groups.setdefault((run.recipe, product), []).append(record)
    measured = [Measured(p, product, tuple(runs)) for (p, product), runs in sorted(groups.items())]
    return {"passed": all(m.passed for m in measured), "products": [
        {"profile": m.profile, "product": m.product, "runs": [r.run.id for r in m.runs], "placed": m.placed,
         "correct": m.correct, "startupMedianSeconds": m.median("startup"), "runtimeMedianSeconds": m.median("runtime"),
         "worstError": m.worst_error(), "passed": m.passed} for m in measured]}


def trial(state: WebState, rev: Revision, who: Principal) -> dict[str, Any]:
    """The trial report: the table on ``rev`` and, where the store has them, the executed runs ``who`` sees."""
    table = _table(rev)
    executed = _executed(state, who)
    return {**table, "executed": executed, "passed": table["passed"] and executed["passed"]}
