"""Memory commands in chat ("remember that ...", "forget that").

:mod:`~remem.commands.intents` (the :class:`~remem.commands.intents.CommandRecognizer`
protocol and its intents) is public; the rule recognizer and its parts
(``recognize``, ``utterance``, ``payloads``) are internal.
"""
