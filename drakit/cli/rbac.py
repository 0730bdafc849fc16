"""``drakit rbac``: the least-privilege roles drakit needs, printed as manifests to apply."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from drakit.cli.options import DEFAULT_NAMESPACE
from drakit.errors import UsageError


def register(app: typer.Typer) -> None:
    @app.command("rbac")
    def rbac_cmd(
        role: Annotated[
            str, typer.Argument(metavar="ROLE", help="reader, reader-namespaced, profile-applier, queue-explainer or runner.")
        ] = "reader",
        namespace: Annotated[
            str, typer.Option("-n", "--namespace", metavar="NS", help="Namespace of the Role and the ServiceAccount.")
        ] = DEFAULT_NAMESPACE,
        serviceaccount: Annotated[
            str | None, typer.Option("--serviceaccount", metavar="NS:NAME", help="Bind to this ServiceAccount (default NS:drakit).")
        ] = None,
        user: Annotated[str | None, typer.Option("--user", metavar="NAME", help="Bind to this user instead.")] = None,
        group: Annotated[str | None, typer.Option("--group", metavar="NAME", help="Bind to this group instead.")] = None,
    ) -> None:
        """Print ClusterRole/Role and bindings: read-only (cluster-wide or one namespace), profile apply, queue explain or runs.

        The same manifests, for ServiceAccount default:drakit, are in deploy/rbac/.
        """
        from drakit.live.rbac import ROLES, Subject, manifests
        from drakit.profiles.render import to_yaml

        if role not in ROLES:
            raise UsageError(f"role {role!r}: want {', '.join(ROLES)}")
        if sum(x is not None for x in (serviceaccount, user, group)) > 1:
            raise UsageError("--serviceaccount, --user and --group exclude each other")
        subject = Subject(namespace=namespace)
        if serviceaccount is not None:
            sa_ns, sep, sa_name = serviceaccount.partition(":")
            if not sep or not sa_ns or not sa_name:
                raise UsageError(f"--serviceaccount {serviceaccount!r}: want NAMESPACE:NAME")
            subject = Subject("ServiceAccount", sa_name, sa_ns)
        elif user is not None:
            subject = Subject("User", user)
        elif group is not None:
            subject = Subject("Group", group)
        sys.stdout.write(to_yaml(manifests(role, namespace=namespace, subject=subject)))
