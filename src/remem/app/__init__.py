"""The application kernel and its use cases (internal: users call :class:`remem.Memory`).

:mod:`remem.app.kernel` holds :class:`~remem.app.kernel.Engine` (what one ``Memory``
shares: the backend, the policy book, the clock, the open agents) and
:class:`~remem.app.kernel.Kernel` (one call: the trusted envelope, that agent's live
state, visibility, scope resolution, limits and the event envelope). Every use-case
module (``remember``, ``change``, ``reading``, ``review``, ``settings``, ``rules``,
``recall``, ``formation``, ``learn``, ``commands``, ``compaction``, ``erasure``) takes a
``Kernel`` and calls only its public methods; none imports ``Memory``.

:class:`~remem.app.memory_impl.MemoryImpl` is what ``Memory`` delegates to (one method
per public method); :class:`~remem.app.local.LocalMemory` implements it over an
``Engine``, building each call's ``Kernel`` and running its use case.
"""
