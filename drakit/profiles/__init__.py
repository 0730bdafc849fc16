"""Capability profiles: hardware contracts compiled into DeviceClasses, claim templates and pod fragments.

Pipeline: :mod:`loader` (YAML -> validated, merged :class:`ResolvedProfile`, errors with file,
line and field) -> :mod:`compile` (profile + driver schema -> manifests, pure) ->
:mod:`eligibility` (which inventory devices qualify and why not) / :mod:`apply` (merge into
workloads by text splicing) / :mod:`lint`.  :mod:`trial` is the platform trial's table.
"""

from drakit.profiles.compile import CompiledProfile, PodFragment, compile_profile, drivers_for
from drakit.profiles.eligibility import Eligibility, eligibility
from drakit.profiles.loader import ProfileSet, ResolvedProfile, parse_profiles
from drakit.profiles.model import Profile, profile_json_schema
from drakit.profiles.trial import TrialTable, trial_table

__all__ = [
    "CompiledProfile",
    "Eligibility",
    "PodFragment",
    "Profile",
    "ProfileSet",
    "ResolvedProfile",
    "TrialTable",
    "compile_profile",
    "drivers_for",
    "eligibility",
    "parse_profiles",
    "profile_json_schema",
    "trial_table",
]
