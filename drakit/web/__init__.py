"""``drakit serve``: the REST API (and the pages) over the CLI's core, an edge like ``cli/``.

:mod:`~drakit.web.app` builds the ASGI app from values the caller resolved (snapshot source,
store, token store, clock); :mod:`~drakit.web.state` holds the current snapshot revision and its
caches; :mod:`~drakit.web.views` computes every answer (the CLI's ``-o json`` shapes) with the
caller's tenancy applied; :mod:`~drakit.web.routes` are thin handlers; :mod:`~drakit.web.auth`
maps bearer tokens to teams.  Needs the ``drakit[web]`` extra (FastAPI, uvicorn, Jinja2).
"""
