"""``mixvox serve``: a local, OpenAI-compatible speech server (optional extra ``mixvox[server]``).

Modules: :mod:`.security` (API keys, bind rules), :mod:`.worker` (the one shared engine, its
queue and threads), :mod:`.app` (the ASGI app: endpoints, limits, errors, logs, metrics),
:mod:`.voices`, :mod:`.metrics`, :mod:`.cli` (the ``serve`` command) and ``static/`` (the web
page). Importing this package needs no server dependency; :mod:`.app` needs FastAPI.
"""
