"""The policy in force: ``remem.toml`` (reloaded when it changes) merged with channel
policy and participant choices.

A broken edit of ``remem.toml`` keeps the last good policy in force and says
so in :attr:`PolicyBook.warning`; a file that is broken from the start is an
error (never a silent default).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from remem.errors import ConfigError
from remem.policy.layers import Merged, PolicyFile, channel_settings, merge, parse_policy_file
from remem.store.base import Backend

_EMPTY = PolicyFile()


class PolicyBook:
    """Reads the policy file on use and merges layers (cached per input)."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self._file: PolicyFile | None = None
        self._lock = threading.Lock()
        self._cache: dict[tuple[Any, ...], Merged] = {}
        self.warning: str | None = None

    def file(self) -> PolicyFile:
        source = self._backend.policy_source()
        with self._lock:
            if source is None:
                self._file, self.warning = _EMPTY, None
                return _EMPTY
            text, version = source
            if self._file is not None and self._file.version == version:
                return self._file
            try:
                parsed = parse_policy_file(text, version)
            except ConfigError as exc:
                if self._file is None:
                    raise
                self.warning = (
                    f"remem.toml was edited but is invalid ({exc}); the last good policy "
                    "stays in force until it is fixed"
                )
                return self._file
            self._file, self.warning = parsed, None
            self._cache.clear()
            return parsed

    def merged(
        self,
        agent: str,
        channel: str | None = None,
        channel_policy: Mapping[str, Any] | None = None,
    ) -> Merged:
        """Admin → agent → channel limits for ``agent`` (and ``channel`` when given)."""
        policy = self.file()
        # Keyed by content, not id(): a freed dict's id can be reused by a newer policy.
        settings_key = (
            tuple(sorted((k, repr(v)) for k, v in channel_policy.items()))
            if channel_policy
            else None
        )
        key = (policy.version, agent, channel, settings_key)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        layers: list[tuple[str, Mapping[str, Any]]] = [
            ("admin", policy.admin),
            ("agent", policy.agents.get(agent, {})),
        ]
        if channel is not None and channel_policy:
            settings = {k: v for k, v in channel_policy.items() if k != "stewards"}
            layers.append(("channel", channel_settings(settings)))
        merged = merge(layers)
        if len(self._cache) > 4096:
            self._cache.clear()
        self._cache[key] = merged
        return merged
