"""The HTTP service (``remem serve``): a thin adapter over :class:`remem.Memory`.

:mod:`remem.http.tokens` (host tokens; no web framework) is used by the command line
too; :mod:`remem.http.app` builds the FastAPI application and needs the ``server``
extra (``pip install 'remem[server]'``). Importing this package imports neither.
"""
