"""Deterministic English recognizer for memory commands.

Decides whether a chat message addressed to the bot is a memory command
("Remember that I prefer short status reports.", "Forget that.") and which
one. It is pure: no I/O, no state; executing the command is someone else's job.

How it works
------------
1. *Normalize* (:mod:`remem.commands.utterance`): collapse whitespace; strip
   leading @mentions, greetings and interjections ("hey bot,", "ok,",
   "actually"); strip politeness ("could you please", trailing "thanks"); strip
   trailing punctuation, emoji and emoticons. Curly apostrophes are folded to
   ``'`` for matching only, so the payload keeps the user's characters.
2. *Match* the whole remaining text against a table of patterns per intent,
   in a fixed order (:data:`_TABLE`). Patterns must match the *entire*
   message: a command followed by unrelated chatter ("forget that, let's move
   on") is not a command. This is the main lever for precision.
3. *Validate payloads* for REMEMBER/CORRECT: the text must look like a
   statement (see :func:`~remem.commands.payloads.is_first_person_statement`,
   :func:`~remem.commands.payloads.is_that_clause`).

Decisions about ambiguous phrasings (precision over recall: a false positive
can store junk or forget data; a miss only means the host answers normally):

* A question is not a command unless the question form *is* the command
  (LIST_ABOUT_ME, WHICH_USED) or it is a polite request ("can you forget
  that?"). So "do you remember the meeting time?" and "remember that time we
  ...?" are ``None``.
* "forget it" / "forget about X" / "never mind" are idioms for dropping a
  topic, not for deleting memory: ``None``. "forget that" alone is the
  canonical FORGET_LAST; "forget that, let's move on" is ``None`` (see 2.).
  "scratch that", "delete that" and "erase that" without a memory word are
  ``None``: they usually retract a message or act on a file.
* "forget what I just said" is FORGET_LAST; "forget what I just said about
  the deadline" is ``None`` (it targets a topic, not the last note).
* "don't remember that" is ``None``: in chat it is just as often a reply
  with a dropped subject ("(I) don't remember that").
* "remember to X" / "remind me" are reminders, not memories: ``None``.
* REMEMBER without "that"/":" ("remember my birthday is June 4") needs a
  first-person statement; "remember that X" accepts any clause but rejects
  "remember that time/song/one ..." (a reminiscence, not a statement).
  "keep in mind" / "don't forget" only count with a first-person statement:
  "keep in mind the deadline is Friday" is context for the current task.
* "that's wrong" alone is DISABLE (the brief's contract). "that's wrong, X"
  is CORRECT only when X is a first-person statement ("..., I prefer weekly
  updates") or the message names the memory ("that note is wrong: X"). So
  "that's wrong, the deploy failed again" is ``None``: it reacts to an event,
  and storing "the deploy failed again" as a correction would be junk.
  A first-person to-do or activity report ("..., we need to rerun CI",
  "..., I ran the tests") argues with the answer and is ``None`` too.
  Bare "this is wrong" / "it's wrong" are ``None`` (usually about code).
* "No, I prefer weekly updates" (no wrongness marker) is ``None``; the
  formation pipeline may still learn from it as an ordinary statement.
* LIST_ABOUT_ME must be about "me"; "what do you remember about the Q3 plan?"
  is ``None``. "do you remember me?" is social, ``None``.
* A trailing channel phrase on REMEMBER ("..., just for this channel",
  "... in this channel only") becomes ``scope_hint="channel"`` and is removed
  from the payload.
* Messages longer than :data:`~remem.commands.utterance.MAX_CHARS` are never commands.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from remem.commands.intents import CommandRecognizer, Intent, IntentKind
from remem.commands.payloads import (
    is_correction,
    is_first_person_statement,
    is_statement,
    is_that_clause,
)
from remem.commands.utterance import Utterance, prepare
from remem.core.chat_words import alt

__all__ = ["CommandRecognizer", "Intent", "IntentKind", "RuleRecognizer", "recognize"]

K = IntentKind


# --------------------------------------------------------------------------
# Shared vocabulary. Patterns run on normalized text: single spaces, folded
# apostrophes, matched case-insensitively, anchored at both ends.
# --------------------------------------------------------------------------


_DONT = alt("don't", "dont", "do not", "never")
_ABOUT_ME = alt("about", "on", "of", "regarding", "concerning") + " (?:me|myself)"
_SO_FAR = r"(?: so far| right now| currently| at the moment| now| already)?"
_THIS_CHANNEL = "(?:this|the current|our) " + alt(
    "channel", "chat", "room", "conversation", "thread", "group", "space"
)
_SCOPE_ADJUNCT = rf"(?:(?:only|just) )?(?:for|in|within) {_THIS_CHANNEL}(?: only)?"
_CHANNELS = r"(?:channels?|chats?|rooms?|conversations?)"
_ELSEWHERE = alt(
    r"(?:in|to|into|with|over to|for|across|between) (?:the |any |all )?"
    rf"(?:other|different|another|all|every|any) ?{_CHANNELS}",
    rf"across (?:all )?(?:the )?{_CHANNELS}",
    rf"outside (?:of )?{_THIS_CHANNEL}",
    "anywhere else",
    "elsewhere",
    "everywhere(?: else)?",
)

# "that" as a reference to the note the bot just wrote or used.
_THAT_ONE = r"(?:that|this|it)(?: (?:last )?(?:note|memory|entry|one|fact))?"
# An explicit reference to a stored note: names the memory itself.
_NOTE_REF = (
    alt("that", "this", "the", "your", "the last", "your last", "the latest", "the previous")
    + " "
    + alt("note", "memory", "memory entry", "entry", "remembered fact", "saved fact")
)

# What the bot knows about the speaker, as a noun phrase.
_YOU_KNOW = (
    r"you(?:'ve| have| had|'d)? "
    + alt(
        "know", "remember", "recall", "have", "keep", "store", "hold", "got", "stored", "saved",
        "learned", "learnt", "noted", "kept", "picked up", "collected", "gathered",
    )
    + r"(?: (?:stored|saved|on file|in memory))?"
)  # fmt: skip
_WHAT_YOU_KNOW = (
    alt(
        "what", "everything", "anything", "all", "whatever", "all (?:that|of (?:that|it))",
        "(?:all )?(?:of )?the (?:things|stuff|notes|memories|info|information|data|facts)",
    )
    + f" (?:that )?{_YOU_KNOW}"
)  # fmt: skip
_MY_MEMORIES = alt(
    "(?:all )?(?:of )?my "
    + alt(
        "memories", "memory", "notes", "info", "information", "data", "stuff", "details",
        "preferences", "personal (?:info|information|data|details)",
    ),
    "(?:any |the |all )?"
    + alt(
        "memories", "notes", "info", "information", "data", "stuff", "details", "things",
        "facts", "anything", "everything",
    )
    + f" {_ABOUT_ME}",
    f"{_WHAT_YOU_KNOW} {_ABOUT_ME}",
    rf"what i (?:tell|told|say|said|share|shared) (?:you )?(?:here|in {_THIS_CHANNEL})",
)  # fmt: skip

_INFER = alt(
    "infer", "guess", "assume", "deduce", "speculate",
    "make (?:assumptions|inferences|guesses)", "draw conclusions", "learn",
)  # fmt: skip
_INFERRING = alt(
    "inferring", "guessing", "assuming", "deducing", "speculating",
    "making (?:assumptions|inferences|guesses)", "drawing conclusions", "learning",
)  # fmt: skip
_FROM_MY_MESSAGES = "from " + alt(
    "my messages", "what i (?:say|write|tell you)", "our (?:chats|conversations)"
)
_INFER_OBJECT = (
    alt(
        "(?:(?:things|stuff|anything|facts|details|much|more) )?(?:about|regarding|on) me",
        "my (?:preferences|habits|likes|dislikes|interests|personality|opinions|details)",
        f"(?:things |stuff )?{_FROM_MY_MESSAGES}",
    )
    + f"(?: {_FROM_MY_MESSAGES})?"
)
_PERMIT = alt(
    "you can", "you may", "you're allowed to", "you are allowed to",
    "you have my permission to", "feel free to", "i allow you to", "i'm happy for you to",
    "it's (?:ok|okay|fine|alright|cool) (?:for you )?to",
    "it is (?:ok|okay|fine|alright) (?:for you )?to",
)  # fmt: skip
_CROSS_CHANNEL_MEMORY = r"cross[- ]?channel (?:memory|memories|recall|sharing|notes)"

_WRONG = (
    "(?:(?:totally |completely |just |all |actually |simply )?"
    + alt(
        "wrong", "incorrect", "inaccurate", "untrue", "outdated", "out of date", "out-of-date",
        "stale", "false", "mistaken", "not (?:right|correct|true|accurate|quite right)",
        "no longer (?:true|right|correct|accurate|valid|the case|relevant)",
    )
    + "(?: (?:now|anymore|any more|about me))*)"
)  # fmt: skip
_THATS = alt("that's", "thats", "that is", "that was")
_THAT_ISNT = "that (?:isn't|is not|ain't) (?:right|correct|true|accurate)(?: (?:anymore|any more))?"
_YOU_GOT_IT_WRONG = r"you(?:'ve| have)? got (?:that|it|this) (?:wrong|backwards|mixed up)"
_FROM_NOW_ON = r"(?: (?:from now on|anymore|any more|going forward))?"

# --------------------------------------------------------------------------
# Intent patterns: each string is one whole-message alternative.
# --------------------------------------------------------------------------

_WHICH = r"(?:which|what)(?: of (?:my|your|the))?"
_USED_NOTES = alt(
    "memories", "memory", "notes", "note", "facts",
    "things you remember(?:ed)?", "stuff you remember(?:ed)?",
)  # fmt: skip
_USE = alt(
    "use", "rely on", "draw on", "draw from", "pull", "pull up", "consult", "look at", "apply",
    "recall", "take into account",
)  # fmt: skip
_USED = alt(
    "used", "relied on", "drawn on", "drew on", "pulled", "pulled up", "consulted", "looked at",
    "applied", "recalled",
)  # fmt: skip
_FOR_THAT = (
    "(?:"
    + alt(
        " (?:for|in|behind|to (?:write|give|make|produce|come up with|answer)|when answering"
        "|while answering)(?: (?:that|this|it|the last|your last|your previous)"
        "(?: (?:answer|reply|response|message|one|question))?)?",
        " there", " here", " just now", " just",
    )
    + ")*"
)  # fmt: skip
_THAT_ANSWER = r"(?: (?:answer|reply|response|message|suggestion|question))?"
_WHICH_USED = (
    rf"{_WHICH} {_USED_NOTES}(?: of mine| about me)? (?:did|do|have) you(?: just| actually)?"
    rf" {_USE}{_FOR_THAT}",
    rf"{_WHICH} {_USED_NOTES} (?:were|was|got|have been) {_USED}{_FOR_THAT}",
    rf"{_WHICH} {_USED_NOTES} (?:was|were|is|are) (?:that|this|it|your (?:answer|reply|response))"
    " (?:based on|drawn from|built on|informed by|using|from)",
    f"{_WHICH} {_USED_NOTES} "
    + alt(
        "informed", "shaped", "influenced", "went into", "fed into", "were behind", "was behind",
        "are behind", "led to",
    )
    + f" (?:that|this|your|your last){_THAT_ANSWER}",
    "what did you remember (?:for|in|when answering|while answering|to answer) (?:that|this)"
    + _THAT_ANSWER,
    "what (?:did|have) you (?:pull|pull up|get|take|use|retrieve|recall) (?:from|out of)"
    f" (?:your |my )?memory{_FOR_THAT}",
    "(?:did|do) you (?:use|rely on|draw on|pull) (?:any |my |your |some |the )?"
    f"{_USED_NOTES}{_FOR_THAT}",
    f"(?:show|list|tell)(?: me)? (?:the|which|what) {_USED_NOTES}"
    f" (?:(?:that )?you(?: just)? {_USED}|(?:were |got )?used){_FOR_THAT}",
    f"(?:what (?:do|did) you remember|{_WHICH} {_USED_NOTES}) (?:that )?(?:made|led) you (?:to )?"
    "(?:say|answer|write|suggest|think) (?:that|this)",
)  # fmt: skip

#: The scratchpad page (the ``/memory`` command itself: :data:`_SLASH_MEMORY`).
_MEMBER_LINK = (
    r"(?:show|open|give|send)(?: me)? my memory(?: page| pad| scratchpad| link)?",
    r"(?:show|open|give|send)(?: me)? (?:a |the )?(?:link to )?my (?:memory page|scratchpad)",
)
_KNOW_VERB = r"(?:know|remember|recall|have(?: stored| saved| on file| in memory)?|keep|store|hold)"
_MEMORY_NOUN = r"(?:memories|notes|info|information|data|details|facts|stuff)"
_LIST_ABOUT_ME = (
    rf"what (?:else |exactly )?(?:do|did) you {_KNOW_VERB} {_ABOUT_ME}{_SO_FAR}",
    "what (?:have|'ve) you "
    + alt(
        "got", "remembered", "learned", "learnt", "stored", "saved", "noted", "kept",
        "picked up", "figured out", "gathered", "collected",
    )
    + f" {_ABOUT_ME}{_SO_FAR}",
    rf"what {_MEMORY_NOUN} (?:do|did|have) you"
    r" (?:have|keep|store|hold|remember|got|stored|saved|kept)(?: stored| saved)?"
    rf" {_ABOUT_ME}{_SO_FAR}",
    r"what(?:'s| is| do you have) (?:in|on) (?:your )?(?:memory|memories|file|records?|notes)"
    " (?:about|on|for|of) me",
    r"(?:show|list|tell|give|display|read)(?: me)? (?:all |back )?(?:of )?"
    + alt(
        f"{_WHAT_YOU_KNOW} {_ABOUT_ME}",
        "my (?:memories|memory|stored notes|saved notes|memory notes)",
        f"(?:the |all the )?(?:memories|notes|info|information|data) (?:you have )?{_ABOUT_ME}",
    ),
    rf"do you (?:remember|know|have) anything {_ABOUT_ME}",
    r"what (?:are|is) my (?:memories|memory|stored notes|saved notes)",
)  # fmt: skip

_ERASE = alt(
    "forget", "erase", "delete", "wipe", "clear", "purge", "remove", "drop", "destroy", "scrub",
    "get rid of", "wipe out", "clear out",
)  # fmt: skip
_ALL_ABOUT_ME = alt(
    f"(?:everything|all|anything|whatever|all of it)(?: (?:that )?{_YOU_KNOW})? {_ABOUT_ME}",
    f"{_WHAT_YOU_KNOW} {_ABOUT_ME}",
    "(?:all )?(?:of )?my "
    + alt(
        "data", "memories", "personal data", "personal info", "personal information", "info",
        "information", "memory profile", "stored notes", "saved notes",
    ),
    "(?:all )?(?:of )?(?:the |your )?(?:memories|notes|data|info|information|facts)"
    f" (?:you have )?{_ABOUT_ME}",
)  # fmt: skip
_FROM_MEMORY = r"(?:from|out of|off) (?:your |the )?(?:memory|memories|notes|records|database)"
_COMPLETELY = r"(?: completely| entirely| permanently)?"
_FORGET_ALL = (
    rf"{_ERASE} {_ALL_ABOUT_ME}{_COMPLETELY}(?: {_FROM_MEMORY})?(?: now)?",
    rf"(?:forget|erase|delete|remove|wipe) me{_COMPLETELY}(?: {_FROM_MEMORY})?",
)

_ERASE_ONE = alt(
    "forget", "delete", "erase", "remove", "drop", "discard", "scrap", "scratch", "clear", "wipe",
    "undo", "unlearn", "get rid of", "throw away", "throw out", "take",
)  # fmt: skip
_TOO = r"(?: too| as well| completely| entirely)?"
_FORGET_LAST = (
    rf"forget that(?: (?:last )?(?:note|memory|one|bit|entry|fact))?{_TOO}",
    rf"{_ERASE_ONE} {_NOTE_REF}{_TOO}",
    rf"{_ERASE_ONE} (?:that|this|it) {_FROM_MEMORY}",
    r"forget (?:what|everything) i (?:just )?(?:said|told you|wrote|typed|mentioned)"
    r"(?: (?:just now|earlier|a moment ago))?",
    r"forget (?:that )?i (?:ever )?(?:said|told you|mentioned) (?:that|this|it)",
    r"forget the last (?:thing|note|fact|bit) "
    + alt("i (?:told|gave) you", "i said", "you (?:saved|stored|remembered|noted|learned)"),
    r"(?:unremember|unlearn) (?:that|this)",
    r"(?:no need to|you don't need to|you do not need to) remember (?:that|this)",
)

_IN_THIS_CHANNEL_ONLY = rf"{_THIS_CHANNEL}(?: only)?"
_SCOPE_TO_CHANNEL = (
    r"(?:only |just )?remember (?:that|this|it) (?:only |just )?(?:for|in)"
    rf" {_IN_THIS_CHANNEL_ONLY}",
    rf"(?:keep|limit|restrict|scope|confine|lock) {_THAT_ONE} (?:to|in|within)"
    rf" {_IN_THIS_CHANNEL_ONLY}",
    rf"(?:{_THATS}|{_THAT_ONE} is) (?:only |just )?"
    rf"(?:for|in|about|relevant (?:to|in|for)|meant for) {_IN_THIS_CHANNEL_ONLY}",
    rf"{_THAT_ONE} (?:only )?(?:applies|is relevant|matters|counts) (?:only |just )?"
    rf"(?:to|in|for|within) {_IN_THIS_CHANNEL_ONLY}",
    rf"{_THAT_ONE} (?:should|must|can|needs to|has to) (?:only )?"
    r"(?:stay|remain|be kept|be used|apply|live) (?:only |just )?"
    rf"(?:(?:in|to|within|for) {_THIS_CHANNEL}|here)(?: only)?",
    rf"(?:only|just) use {_THAT_ONE} (?:here|in {_THIS_CHANNEL})"
    r"(?:,? (?:and )?(?:not|nowhere else)(?: (?:in|on))?"
    r"(?: (?:other|any other|the other) channels| elsewhere| anywhere else)?)?",
    rf"{_DONT} use {_THAT_ONE} "
    + alt(
        f"outside (?:of )?{_THIS_CHANNEL}", "in (?:any )?other channels", "anywhere else",
        "elsewhere",
    ),
    f"make {_THAT_ONE} "
    + alt(
        "channel-only", "channel only", "channel-specific", "channel specific",
        f"specific to {_THIS_CHANNEL}", f"local to {_THIS_CHANNEL}",
    ),
)  # fmt: skip

_SHARE = alt(
    "use", "share", "bring up", "mention", "carry", "take", "bring", "reuse", "apply", "surface",
    "reference", "repeat", "spread", "show", "leak",
)  # fmt: skip
_SHARING = alt(
    "using", "sharing", "bringing up", "mentioning", "carrying", "taking", "bringing", "reusing",
    "applying", "surfacing", "referencing", "leaking",
)  # fmt: skip
_SHARED = alt("used", "shared", "mentioned", "brought up", "carried over", "surfaced", "reused")
_NO_CROSS_CHANNEL = (
    rf"{_DONT} {_SHARE} {_MY_MEMORIES}(?: over)? {_ELSEWHERE}",
    rf"(?:stop|quit) {_SHARING} {_MY_MEMORIES}(?: over)? {_ELSEWHERE}",
    rf"keep {_MY_MEMORIES} (?:in|to|within) {_IN_THIS_CHANNEL_ONLY}",
    rf"keep {_MY_MEMORIES} (?:out of|away from) (?:the |any )?other {_CHANNELS}",
    rf"i (?:don't|do not) want {_MY_MEMORIES} (?:to be )?{_SHARED} {_ELSEWHERE}",
    rf"i (?:don't|do not) want you (?:to )?(?:{_SHARE}|{_SHARING}) {_MY_MEMORIES}(?: over)?"
    rf" {_ELSEWHERE}",
    rf"(?:turn off|disable|switch off|stop|no|no more) {_CROSS_CHANNEL_MEMORY}"
    r"(?: (?:for|about) me)?",
    rf"{_MY_MEMORIES} (?:shouldn't|should not|must not|mustn't|can't|cannot|may not) "
    + alt("follow me", "go", "travel", "leak", "spread", "carry over", f"be {_SHARED}")
    + rf"(?: over)? {_ELSEWHERE}",
)

_ALLOW_CROSS_CHANNEL = (
    rf"(?:{_PERMIT} )?(?:use|share|bring|carry|apply|reuse|mention|bring up|take) {_MY_MEMORIES}"
    rf"(?: over)? {_ELSEWHERE}(?: (?:again|too|as well|now|from now on))?",
    rf"(?:turn|switch) {_CROSS_CHANNEL_MEMORY} (?:back )?on(?: (?:for|about) me)?(?: again)?",
    rf"(?:enable|re-?enable|turn on|turn back on|switch on|allow) {_CROSS_CHANNEL_MEMORY}"
    r"(?: (?:for|about) me)?(?: again)?",
)

_INFERENCE = r"(?:inference|inferences|inferring)"
_INFERENCE_NOUN = r"(?:inferences|inference|assumptions|guesses|guessing|inferring|conclusions)"
_STOP_INFERRING = (
    rf"(?:stop|quit|cease) {_INFERRING} {_INFER_OBJECT}{_FROM_NOW_ON}",
    rf"{_DONT} {_INFER} {_INFER_OBJECT}{_FROM_NOW_ON}",
    rf"no more {_INFERENCE_NOUN}(?: {_INFER_OBJECT})?",
    r"(?:stop|quit) (?:inferring|inference)",
    r"(?:turn off|disable|switch off|pause) (?:inference|inferences|inferring"
    r"|inferred (?:notes|memories))(?: (?:for|about) me)?",
    rf"i (?:don't|do not) want you(?: to)? (?:{_INFER}|{_INFERRING}) {_INFER_OBJECT}{_FROM_NOW_ON}",
    r"(?:only|just) (?:remember|store|save|keep) (?:what|the things|things|stuff) i"
    r" (?:explicitly |actually |directly )?(?:tell|told|give|gave|ask)(?: you)?(?: to)?"
    r"(?: explicitly| directly)?",
)

_AGAIN = r"(?: (?:again|now|from now on|once more))?"
_RESUME_INFERRING = (
    rf"{_PERMIT} (?:start |go back to |resume |continue )?(?:{_INFER}|{_INFERRING})"
    rf" {_INFER_OBJECT}{_AGAIN}",
    rf"(?:start|go back to|resume|continue|keep on) {_INFERRING} {_INFER_OBJECT}(?: again)?",
    rf"{_INFER} {_INFER_OBJECT} again",
    rf"(?:resume|restart) {_INFERENCE}(?: again)?",
    r"(?:start|go back to) inferring again",
    rf"(?:turn|switch) {_INFERENCE} (?:back )?on(?: (?:for|about) me)?(?: again)?",
    rf"(?:re-?enable|turn on|turn back on|switch on|enable) {_INFERENCE}"
    r"(?: (?:for|about) me)?(?: again)?",
)

_SEP = r"(?: ?[,.;:!—–-]+ ?| )"
# Optional words between the "wrong" claim and the replacement statement.
_LEAD = (
    "(?:"
    + alt(
        "(?:it|that|this) should (?:be|say|read|have said)", "it's", "it is", "actually",
        "in fact", "instead", "rather", "the truth is",
    )
    + "[:,]? (?:that )?)?"
)  # fmt: skip
_PAYLOAD = r"(?P<payload>.+)"
_CORRECTION = _SEP + _LEAD + _PAYLOAD
_TO_SAY = r"(?: to say| to read| to)?"
# Claims that name the memory itself: any statement may follow.
_CORRECT_NAMED = (
    rf"{_NOTE_REF} (?:is|was|'s) {_WRONG}{_CORRECTION}",
    rf"(?:update|change|correct|fix|amend|edit) {_NOTE_REF}{_TO_SAY}{_CORRECTION}",
)
# Generic "that's wrong": only a first-person statement makes it a correction.
_CORRECT_GENERIC = (
    rf"(?:{_THATS} {_WRONG}|{_THAT_ISNT}|{_YOU_GOT_IT_WRONG}|correction){_CORRECTION}",
    rf"(?:update|change|correct|fix|amend) (?:that|it|this){_TO_SAY}{_CORRECTION}",
)

_DISABLE = (
    rf"(?:{_THATS}|{_NOTE_REF} (?:is|was|'s)) {_WRONG}",
    _THAT_ISNT,
    _YOU_GOT_IT_WRONG,
    alt(
        "stop using", "stop relying on", "stop applying", "don't use", "dont use", "do not use",
        "don't rely on", "disable", "ignore", "deactivate", "turn off", "switch off", "mute",
    )
    + " (?:that|this|the last|your last|the latest|the previous)"
    + rf" (?:note|memory|memory entry|entry|fact){_FROM_NOW_ON}(?: again)?",
)  # fmt: skip

_SCOPE_PREFIX = rf"(?:(?P<pre_scope>{_SCOPE_ADJUNCT}),? )?"
_SCOPE_MID = rf"(?: (?P<mid_scope>{_SCOPE_ADJUNCT}),?)?"
# Verbs that clearly ask the bot to store something.
_REMEMBER_STRONG = alt(
    "remember",
    "memori[sz]e",
    r"(?:save|store|put|add|commit|write)(?: (?:this|that|it))?"
    r" (?:to|in|into) (?:your |the )?(?:memory|memories|notes)",
    "make a note",
    "take a note",
)
# Verbs that are often just conversational ("keep in mind the deadline is Friday").
_REMEMBER_WEAK = alt(
    "keep in mind", "bear in mind", "don't forget", "dont forget", "do not forget",
    "never forget", "make a mental note", "take note",
)  # fmt: skip
_REMEMBER_THAT = (rf"{_SCOPE_PREFIX}{_REMEMBER_STRONG}{_SCOPE_MID} that {_PAYLOAD}",)
_REMEMBER_COLON = (
    rf"{_SCOPE_PREFIX}{_REMEMBER_STRONG}{_SCOPE_MID}(?: (?:this|the following))?"
    rf" ?[:—–-] ?{_PAYLOAD}",
)
_REMEMBER_BARE = (
    rf"{_SCOPE_PREFIX}{_REMEMBER_STRONG}{_SCOPE_MID},? {_PAYLOAD}",
    rf"{_SCOPE_PREFIX}{_REMEMBER_WEAK}{_SCOPE_MID}(?: that|:|,)? {_PAYLOAD}",
)

# --------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------

_PayloadCheck = Callable[[str], bool]
_PAYLOAD_TRIM = " ,;:-—–\"'"
_SCOPE_SUFFIX = re.compile(rf",? (?:but )?{_SCOPE_ADJUNCT}$", re.I)


@dataclass(frozen=True, slots=True)
class _Rule:
    """One whole-message pattern for one intent.

    ``check`` validates the ``payload`` group (payload intents only);
    ``question_ok`` lets a bare (non-polite) question match.
    """

    kind: IntentKind
    pattern: re.Pattern[str]
    check: _PayloadCheck | None = None
    question_ok: bool = False

    def apply(self, utterance: Utterance) -> Intent | None:
        if utterance.question and not (utterance.polite or self.question_ok):
            return None
        match = self.pattern.fullmatch(utterance.folded)
        if match is None:
            return None
        if self.check is None:
            return Intent(self.kind)
        return self._payload_intent(match, utterance, self.check)

    def _payload_intent(
        self, match: re.Match[str], utterance: Utterance, check: _PayloadCheck
    ) -> Intent | None:
        """Cut, trim and validate the ``payload`` group; ``None`` if it is no statement."""
        start, end = match.span("payload")
        groups = match.groupdict()
        scoped = bool(groups.get("pre_scope") or groups.get("mid_scope"))
        folded = utterance.folded[start:end]
        suffix = _SCOPE_SUFFIX.search(folded) if self.kind is K.REMEMBER else None
        if suffix is not None:
            scoped, end = True, start + suffix.start()
            folded = folded[: suffix.start()]
        # Trim on the folded text and apply the same cut to the original.
        start += len(folded) - len(folded.lstrip(_PAYLOAD_TRIM))
        end -= len(folded) - len(folded.rstrip(_PAYLOAD_TRIM))
        if start >= end or not check(utterance.folded[start:end]):
            return None
        return Intent(self.kind, utterance.text[start:end], "channel" if scoped else None)


def _compile(source: str) -> re.Pattern[str]:
    return re.compile(source, re.IGNORECASE)


def _any_of(kind: IntentKind, sources: tuple[str, ...], *, question_ok: bool = False) -> _Rule:
    """One rule matching any of ``sources`` (no payload)."""
    return _Rule(kind, _compile("|".join(f"(?:{s})" for s in sources)), None, question_ok)


def _each_of(kind: IntentKind, sources: tuple[str, ...], check: _PayloadCheck) -> list[_Rule]:
    """One rule per source: payload group names cannot repeat inside one pattern."""
    return [_Rule(kind, _compile(source), check) for source in sources]


#: Evaluation order. Questions first; specific scoped/forget forms before the
#: generic ones; CORRECT (needs a statement) before DISABLE (bare claim);
#: REMEMBER last so e.g. "remember that for this channel" is a scope change.
_TABLE: tuple[_Rule, ...] = (
    _any_of(K.MEMBER_LINK, _MEMBER_LINK, question_ok=True),
    _any_of(K.WHICH_USED, _WHICH_USED, question_ok=True),
    _any_of(K.LIST_ABOUT_ME, _LIST_ABOUT_ME, question_ok=True),
    _any_of(K.FORGET_ALL_ABOUT_ME, _FORGET_ALL),
    _any_of(K.FORGET_LAST, _FORGET_LAST),
    _any_of(K.SCOPE_TO_CHANNEL, _SCOPE_TO_CHANNEL),
    _any_of(K.NO_CROSS_CHANNEL, _NO_CROSS_CHANNEL),
    _any_of(K.ALLOW_CROSS_CHANNEL, _ALLOW_CROSS_CHANNEL),
    _any_of(K.STOP_INFERRING, _STOP_INFERRING),
    _any_of(K.RESUME_INFERRING, _RESUME_INFERRING),
    *_each_of(K.CORRECT, _CORRECT_NAMED, is_statement),
    *_each_of(K.CORRECT, _CORRECT_GENERIC, is_correction),
    _any_of(K.DISABLE, _DISABLE),
    *_each_of(K.REMEMBER, _REMEMBER_THAT, is_that_clause),
    *_each_of(K.REMEMBER, _REMEMBER_COLON, is_statement),
    *_each_of(K.REMEMBER, _REMEMBER_BARE, is_first_person_statement),
)


#: ``/memory``, alone or after one mention of the bot.
_SLASH_MEMORY = re.compile(r"\s*(?:<@!?\w{1,40}>\s*|@\S{1,40}\s+)?/memory\s*", re.IGNORECASE)


class RuleRecognizer:
    """The deterministic English :class:`CommandRecognizer`.

    Pure and total: never raises for a ``str``, never performs I/O, and
    returns the same result for the same text. Returns ``None`` unless the
    whole message (after stripping mentions, greetings, politeness and
    trailing punctuation/emoji) is a memory command.
    """

    def recognize(self, text: str) -> Intent | None:
        if isinstance(text, str) and _SLASH_MEMORY.fullmatch(text):
            return Intent(K.MEMBER_LINK)
        utterance = prepare(text)
        if utterance is None:
            return None
        for rule in _TABLE:
            intent = rule.apply(utterance)
            if intent is not None:
                return intent
        return None


_DEFAULT = RuleRecognizer()


def recognize(text: str) -> Intent | None:
    """Recognize ``text`` with the default :class:`RuleRecognizer`."""
    return _DEFAULT.recognize(text)
