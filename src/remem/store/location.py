"""A data location as the operator may see it: the one redaction of passwords from
connection strings, for every message, log line and CLI output that names a location."""

from __future__ import annotations

import re

#: A URL's userinfo password (``user:secret@``): everything from the colon to the last
#: ``@`` before the host (a password may hold an unescaped ``@``, never ``/ ? #``). The
#: scheme's length is bounded: unbounded, a long word would be scanned from each letter.
_USERINFO_PASSWORD = re.compile(r"([A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s:/@?#]*):[^\s/?#]*@")


def _spelled(word: str) -> str:
    """A pattern for ``word`` with any of its letters percent-encoded: libpq decodes a
    URI query's keys as well as its values (``%70assword`` is ``password``)."""
    return "".join(f"(?:{c}|%{ord(c):02x}|%{ord(c.upper()):02x})" for c in word)


#: A ``password`` or ``sslpassword`` parameter: a URL's query (``?password=…&``, the key
#: percent-encoded or not) or a key=value connection string's (``password='a b'``,
#: quoted with backslash escapes). A match starts only where a run of blanks starts:
#: from each blank of a long run, the blanks would be scanned again (quadratic).
_PASSWORD_PARAM = re.compile(
    rf"(?i)(?<![ \t])[ \t]*(?<![A-Za-z0-9_])(?:{_spelled('ssl')})?{_spelled('password')}"
    r"\s*=\s*(?:'(?:[^'\\]|\\.)*'?|[^\s&#]*)"
)


def redact(text: str) -> str:
    """``text`` (a connection URL, a key=value connection string, or a message quoting
    either) with every password removed: a URL's ``user:password@``, and ``password=``
    and ``sslpassword=`` parameters in a query or a key=value string. Host, port, role
    and database stay: the CLI may name them, a service's answers never carry them."""
    out = _USERINFO_PASSWORD.sub(r"\1@", text) if "://" in text else text
    if "assword" not in out.lower() and "%" not in out:
        return out
    out = _PASSWORD_PARAM.sub("", out)
    out = re.sub(r"\?&+", "?", re.sub(r"&{2,}", "&", out))
    return re.sub(r"[?&](?=$|[\s#])", "", out).strip()


__all__ = ["redact"]
