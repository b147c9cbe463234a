"""The PostgreSQL backend (``remem[postgres]``): see :mod:`remem.store.postgres.backend`.

Importing this package needs no psycopg; opening a backend does (a clear error names the
extra to install when it is missing).
"""
