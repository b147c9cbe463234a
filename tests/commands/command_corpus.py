"""Labelled English corpus for the memory-command recognizer.

Each entry is ``Case(text, kind, payload)``: ``kind`` is the expected
:class:`IntentKind` or ``None`` for "not a memory command"; ``payload`` is the
expected statement for REMEMBER/CORRECT and ``None`` otherwise.

The utterances were written the way people type in chat (mentions, greetings,
politeness, emoji, curly apostrophes, missing punctuation) *before* the rules
were written, and were not rephrased to fit them. A few entries are known
misses of the rules; they stay here so the measured recall is honest.

:data:`SECOND_BATCH` was written after the first version of the rules, as a
held-out check of generalization, and labelled before it was run.
"""

from __future__ import annotations

from typing import NamedTuple

from remem.commands.recognize import IntentKind

K = IntentKind


class Case(NamedTuple):
    text: str
    kind: IntentKind | None
    payload: str | None = None


REMEMBER: list[Case] = [
    Case(
        "Remember that I prefer short status reports.", K.REMEMBER, "I prefer short status reports"
    ),
    Case(
        "@remem remember that I'm on parental leave until March",
        K.REMEMBER,
        "I'm on parental leave until March",
    ),
    Case(
        "<@U024BE7LH> please remember that my pronouns are they/them",
        K.REMEMBER,
        "my pronouns are they/them",
    ),
    Case(
        "Hey bot, could you remember that I take my coffee black?",
        K.REMEMBER,
        "I take my coffee black",
    ),
    Case("remember: I work from Lisbon on Fridays", K.REMEMBER, "I work from Lisbon on Fridays"),
    Case(
        "Please remember I don’t like being pinged after 6pm 🙏",
        K.REMEMBER,
        "I don’t like being pinged after 6pm",
    ),
    Case("REMEMBER THAT I AM ALLERGIC TO PEANUTS", K.REMEMBER, "I AM ALLERGIC TO PEANUTS"),
    Case("Can you remember that my manager is Priya?", K.REMEMBER, "my manager is Priya"),
    Case(
        "please make a note that I prefer Python over Go",
        K.REMEMBER,
        "I prefer Python over Go",
    ),
    Case(
        "Keep in mind that I'm colorblind, so avoid red/green charts.",
        K.REMEMBER,
        "I'm colorblind, so avoid red/green charts",
    ),
    Case(
        "remember for this channel that we ship on Thursdays",
        K.REMEMBER,
        "we ship on Thursdays",
    ),
    Case("Don't forget that I'm vegetarian", K.REMEMBER, "I'm vegetarian"),
    Case("remember that the standup moved to 9:30", K.REMEMBER, "the standup moved to 9:30"),
    Case(
        "Save this to memory: I prefer tabs over spaces",
        K.REMEMBER,
        "I prefer tabs over spaces",
    ),
    Case("yo bot remember my birthday is June 4th!", K.REMEMBER, "my birthday is June 4th"),
    Case("Memorize that I use vim keybindings", K.REMEMBER, "I use vim keybindings"),
    Case(
        "pls remember that I'd rather get updates by email",
        K.REMEMBER,
        "I'd rather get updates by email",
    ),
    Case("remember, I'm in the Tokyo timezone", K.REMEMBER, "I'm in the Tokyo timezone"),
    Case("remember this: the meeting is at 3", K.REMEMBER, "the meeting is at 3"),
    Case(
        "Remember that I prefer bullet points, just for this channel.",
        K.REMEMBER,
        "I prefer bullet points",
    ),
    Case(
        "hi! please remember that we use British spelling in docs",
        K.REMEMBER,
        "we use British spelling in docs",
    ),
]

SCOPE_TO_CHANNEL: list[Case] = [
    Case("Only remember that for this channel.", K.SCOPE_TO_CHANNEL),
    Case("keep that to this channel only", K.SCOPE_TO_CHANNEL),
    Case("@remem that's just for this channel, please", K.SCOPE_TO_CHANNEL),
    Case("Please limit that memory to this channel", K.SCOPE_TO_CHANNEL),
    Case("That only applies in this channel.", K.SCOPE_TO_CHANNEL),
    Case("could you restrict that note to this channel?", K.SCOPE_TO_CHANNEL),
    Case("keep that one in this channel", K.SCOPE_TO_CHANNEL),
    Case("only use that here, not in other channels", K.SCOPE_TO_CHANNEL),
    Case("That should stay in this channel.", K.SCOPE_TO_CHANNEL),
    Case("make that channel-only", K.SCOPE_TO_CHANNEL),
    Case("scope that to this channel", K.SCOPE_TO_CHANNEL),
    Case("Remember that for this channel only", K.SCOPE_TO_CHANNEL),
]

LIST_ABOUT_ME: list[Case] = [
    Case("What do you remember about me?", K.LIST_ABOUT_ME),
    Case("what do you know about me", K.LIST_ABOUT_ME),
    Case("show my memories", K.LIST_ABOUT_ME),
    Case("@yuko what have you stored about me?", K.LIST_ABOUT_ME),
    Case("Can you show me what you remember about me?", K.LIST_ABOUT_ME),
    Case("list everything you know about me", K.LIST_ABOUT_ME),
    Case("What notes do you have on me?", K.LIST_ABOUT_ME),
    Case("what info do you have about me", K.LIST_ABOUT_ME),
    Case("tell me what you remember about me", K.LIST_ABOUT_ME),
    Case("What’s in your memory about me?", K.LIST_ABOUT_ME),
    Case("do you remember anything about me?", K.LIST_ABOUT_ME),
    Case("what have you learned about me so far?", K.LIST_ABOUT_ME),
]

CORRECT: list[Case] = [
    Case("That's wrong, I prefer weekly updates.", K.CORRECT, "I prefer weekly updates"),
    Case(
        "that’s not right — I actually prefer weekly updates",
        K.CORRECT,
        "I actually prefer weekly updates",
    ),
    Case(
        "No, that's wrong. My manager is Dana, not Priya.",
        K.CORRECT,
        "My manager is Dana, not Priya",
    ),
    Case(
        "That note is wrong: I moved to Berlin last year",
        K.CORRECT,
        "I moved to Berlin last year",
    ),
    Case("correction: I'm vegetarian, not vegan", K.CORRECT, "I'm vegetarian, not vegan"),
    Case(
        "That's outdated, I now work on the payments team",
        K.CORRECT,
        "I now work on the payments team",
    ),
    Case(
        "that memory is incorrect, it should be: I prefer async standups",
        K.CORRECT,
        "I prefer async standups",
    ),
    Case(
        "Update that memory: I now prefer Slack over email",
        K.CORRECT,
        "I now prefer Slack over email",
    ),
    Case("That's not true anymore, I switched to decaf.", K.CORRECT, "I switched to decaf"),
    Case(
        "actually that's wrong, my birthday is June 5th",
        K.CORRECT,
        "my birthday is June 5th",
    ),
    Case(
        "you got that wrong, I'm in the Berlin office",
        K.CORRECT,
        "I'm in the Berlin office",
    ),
    Case(
        "That's incorrect; we deploy on Tuesdays now",
        K.CORRECT,
        "we deploy on Tuesdays now",
    ),
]

DISABLE: list[Case] = [
    Case("That note is wrong.", K.DISABLE),
    Case("that's not right", K.DISABLE),
    Case("That's wrong.", K.DISABLE),
    Case("that memory is outdated", K.DISABLE),
    Case("That's not true anymore.", K.DISABLE),
    Case("please stop using that note", K.DISABLE),
    Case("don't use that memory anymore", K.DISABLE),
    Case("That's incorrect!", K.DISABLE),
    Case("that's no longer accurate", K.DISABLE),
    Case("disable that note", K.DISABLE),
    Case("you got that wrong", K.DISABLE),
    Case("hmm, that's out of date", K.DISABLE),
    Case("ignore that memory from now on", K.DISABLE),
]

FORGET_LAST: list[Case] = [
    Case("Forget that.", K.FORGET_LAST),
    Case("please delete that memory", K.FORGET_LAST),
    Case("scratch that from memory", K.FORGET_LAST),
    Case("<@U1> forget that please", K.FORGET_LAST),
    Case("Could you forget what I just said?", K.FORGET_LAST),
    Case("remove that from your memory", K.FORGET_LAST),
    Case("delete that note", K.FORGET_LAST),
    Case("Forget I said that 😅", K.FORGET_LAST),
    Case("don't remember that", K.FORGET_LAST),
    Case("please erase that memory", K.FORGET_LAST),
    Case("forget the last thing I told you", K.FORGET_LAST),
    Case("drop that note", K.FORGET_LAST),
    Case("Actually, forget that.", K.FORGET_LAST),
]

FORGET_ALL_ABOUT_ME: list[Case] = [
    Case("Forget everything about me.", K.FORGET_ALL_ABOUT_ME),
    Case("erase all my data", K.FORGET_ALL_ABOUT_ME),
    Case("wipe what you know about me", K.FORGET_ALL_ABOUT_ME),
    Case("Please delete all my memories", K.FORGET_ALL_ABOUT_ME),
    Case("Can you forget everything you know about me?", K.FORGET_ALL_ABOUT_ME),
    Case("remove everything you've stored about me", K.FORGET_ALL_ABOUT_ME),
    Case("clear all notes about me", K.FORGET_ALL_ABOUT_ME),
    Case("I want you to forget me completely.", K.FORGET_ALL_ABOUT_ME),
    Case("delete everything you remember about me", K.FORGET_ALL_ABOUT_ME),
    Case("purge my data please", K.FORGET_ALL_ABOUT_ME),
    Case("forget all about me", K.FORGET_ALL_ABOUT_ME),
    Case("Wipe all memories of me", K.FORGET_ALL_ABOUT_ME),
    Case("erase me from your memory", K.FORGET_ALL_ABOUT_ME),
]

NO_CROSS_CHANNEL: list[Case] = [
    Case("Don't use memories about me across channels.", K.NO_CROSS_CHANNEL),
    Case("please don't share what you know about me with other channels", K.NO_CROSS_CHANNEL),
    Case("Keep my memories in this channel only.", K.NO_CROSS_CHANNEL),
    Case("don't bring up my stuff in other channels", K.NO_CROSS_CHANNEL),
    Case("Stop using what you know about me in other channels", K.NO_CROSS_CHANNEL),
    Case("I don't want my notes used outside this channel", K.NO_CROSS_CHANNEL),
    Case("don't carry anything about me over to other channels", K.NO_CROSS_CHANNEL),
    Case("turn off cross-channel memory for me", K.NO_CROSS_CHANNEL),
    Case("What I tell you here shouldn't follow me to other channels.", K.NO_CROSS_CHANNEL),
    Case(
        "Please don’t use anything you remember about me in other channels",
        K.NO_CROSS_CHANNEL,
    ),
    Case("no cross-channel memories for me, please", K.NO_CROSS_CHANNEL),
    Case("Don't mention my preferences in other channels", K.NO_CROSS_CHANNEL),
]

ALLOW_CROSS_CHANNEL: list[Case] = [
    Case("You can use what you know about me in other channels.", K.ALLOW_CROSS_CHANNEL),
    Case("feel free to use my memories across channels", K.ALLOW_CROSS_CHANNEL),
    Case("It's ok to use my notes in other channels", K.ALLOW_CROSS_CHANNEL),
    Case("you may use what you remember about me everywhere", K.ALLOW_CROSS_CHANNEL),
    Case("turn cross-channel memory back on for me", K.ALLOW_CROSS_CHANNEL),
    Case("Go ahead and share my preferences across channels", K.ALLOW_CROSS_CHANNEL),
    Case("you're allowed to use my memories in any channel", K.ALLOW_CROSS_CHANNEL),
    Case("enable cross-channel memory", K.ALLOW_CROSS_CHANNEL),
    Case("you can bring what you know about me into other channels", K.ALLOW_CROSS_CHANNEL),
    Case(
        "it's fine to use what you remember about me in other channels",
        K.ALLOW_CROSS_CHANNEL,
    ),
    Case("Use my memories in all channels.", K.ALLOW_CROSS_CHANNEL),
]

STOP_INFERRING: list[Case] = [
    Case("Stop inferring things about me.", K.STOP_INFERRING),
    Case("don't guess things about me", K.STOP_INFERRING),
    Case("Please stop making assumptions about me", K.STOP_INFERRING),
    Case("only remember what I explicitly tell you", K.STOP_INFERRING),
    Case("don't infer anything about me", K.STOP_INFERRING),
    Case("stop guessing my preferences", K.STOP_INFERRING),
    Case("No more inferences about me, please.", K.STOP_INFERRING),
    Case("turn off inference for me", K.STOP_INFERRING),
    Case("I don't want you drawing conclusions about me", K.STOP_INFERRING),
    Case("Don’t assume things about me.", K.STOP_INFERRING),
    Case("Quit guessing stuff about me", K.STOP_INFERRING),
    Case("stop learning things about me from my messages", K.STOP_INFERRING),
]

RESUME_INFERRING: list[Case] = [
    Case("You can infer things about me again.", K.RESUME_INFERRING),
    Case("feel free to guess my preferences again", K.RESUME_INFERRING),
    Case("ok, you can start inferring things about me again", K.RESUME_INFERRING),
    Case("Resume inferring things about me", K.RESUME_INFERRING),
    Case("it's fine to make assumptions about me again", K.RESUME_INFERRING),
    Case("turn inference back on", K.RESUME_INFERRING),
    Case("You may learn from my messages again.", K.RESUME_INFERRING),
    Case("go back to inferring things about me", K.RESUME_INFERRING),
    Case("you can guess things about me again", K.RESUME_INFERRING),
    Case("Re-enable inferences about me", K.RESUME_INFERRING),
    Case("you're allowed to infer my preferences again", K.RESUME_INFERRING),
    Case("It's ok to infer stuff about me", K.RESUME_INFERRING),
]

WHICH_USED: list[Case] = [
    Case("Which memories did you use?", K.WHICH_USED),
    Case("what did you remember for that answer?", K.WHICH_USED),
    Case("what memories did you use for that?", K.WHICH_USED),
    Case("Which notes did you rely on?", K.WHICH_USED),
    Case("did you use any memories for that answer?", K.WHICH_USED),
    Case("show me the memories you used", K.WHICH_USED),
    Case("what did you pull from memory for that?", K.WHICH_USED),
    Case("which of my notes did you use there?", K.WHICH_USED),
    Case("What memories was that based on?", K.WHICH_USED),
    Case("Which memories informed that reply?", K.WHICH_USED),
    Case("what do you remember that made you say that?", K.WHICH_USED),
    Case("list the memories you just used", K.WHICH_USED),
]

MEMBER_LINK: list[Case] = [
    Case("/memory", K.MEMBER_LINK),
    Case("@yuko /memory", K.MEMBER_LINK),
    Case("<@123456> /memory", K.MEMBER_LINK),
    Case("show my memory", K.MEMBER_LINK),
    Case("Show my memory!", K.MEMBER_LINK),
    Case("open my memory page", K.MEMBER_LINK),
    Case("please send me a link to my scratchpad", K.MEMBER_LINK),
    Case("give me my memory link", K.MEMBER_LINK),
]

# Near-misses and ordinary chat: none of these may be treated as a command.
NON_COMMANDS: list[Case] = [
    Case("memory", None),
    Case("my memory is terrible", None),
    Case("/memory leak in the parser", None),
    # Everyday uses of "remember"/"forget" that are not instructions to the bot.
    Case("I forgot my keys", None),
    Case("remember when we went hiking?", None),
    Case("do you remember the meeting time?", None),
    Case("don't forget to buy milk", None),
    Case("forget it, let's move on", None),
    Case("I'll remember that for next time", None),
    Case("can you remind me tomorrow at 9", None),
    Case("remember to call mom", None),
    Case("forget about the report, it's cancelled", None),
    Case("Remember that time we got locked out of the office?", None),
    Case("do you remember me?", None),
    Case("I remember that I left the oven on", None),
    Case("I can't remember the wifi password", None),
    Case("remind me to review the PR", None),
    Case("Hey, do you remember what Priya said about the launch?", None),
    Case("I don't remember saying that", None),
    Case("don't forget the standup at 10!", None),
    Case("Forget it.", None),
    Case("never mind", None),
    Case("forget the last one, use the blue button instead", None),
    Case("Scratch that, make it 4pm", None),
    Case("please forget about the old API, we're on v2 now", None),
    Case("Let's forget everything about the old design", None),
    Case("I want to forget everything about this week lol", None),
    Case("remember me to your sister", None),
    Case("Remember, remember the fifth of November", None),
    Case("I'll keep that in mind", None),
    Case("Keep in mind the deadline is Friday", None),
    Case("Note that the tests take ten minutes to run.", None),
    Case("make a note in the ticket that QA signed off", None),
    Case("note to self: buy milk", None),
    Case("remember?", None),
    Case("remember that?", None),
    Case("Do you remember that I prefer tea?", None),
    Case("you remembered that I prefer tea, nice", None),
    Case("it's nice that you remember my birthday", None),
    Case("please remember to update the changelog", None),
    Case("can you remember things?", None),
    Case("remember that song we heard yesterday?", None),
    Case("remember that one time at the offsite", None),
    Case("remember the milk", None),
    Case("I'll forget that ever happened", None),
    Case("let's just forget that happened", None),
    Case("forget that guy, he's always late", None),
    Case("forget me not", None),
    Case("don't forget me when you're famous", None),
    Case("Did you forget to run the tests?", None),
    Case("forgetting something?", None),
    Case("only remember the first three items", None),
    # "That's wrong" aimed at something other than a stored note.
    Case("that's wrong, the deploy failed again", None),
    Case("That's wrong, the answer is 42", None),
    Case("that's not right, the build is still red", None),
    Case("that's wrong, try again", None),
    Case("that's wrong, I ran the tests and they passed", None),
    Case("What's wrong with the deploy?", None),
    Case("Is that right?", None),
    Case("that's right", None),
    Case("that's not wrong", None),
    Case("that's not entirely wrong", None),
    Case("That's not how I remember it", None),
    Case("you're wrong about the deadline", None),
    Case("correct me if I'm wrong", None),
    Case("is that correct?", None),
    Case("can you correct the typo in line 3?", None),
    Case("update the ticket: QA passed", None),
    Case("No, I prefer weekly updates", None),
    Case("wrong channel, sorry", None),
    # Questions about things that are not "me".
    Case("what do you remember about the Q3 plan?", None),
    Case("what do you know about Kubernetes?", None),
    Case("what do you remember about our last sprint?", None),
    Case("what do you know about my project?", None),
    Case("what do you think about me?", None),
    Case("what do you know about meetings?", None),
    Case("what do you know?", None),
    Case("Tell me about yourself", None),
    Case("how do you remember things about me?", None),
    Case("why do you remember that about me?", None),
    Case("show me the memories from our trip", None),
    # Memory in the computing sense, notes that are documents, other data.
    Case("the memory leak is fixed", None),
    Case("my memory is terrible today", None),
    Case("how much memory does the server have?", None),
    Case("increase the memory limit to 4GB", None),
    Case("the note on the fridge says to water the plants", None),
    Case("that note about the release is in Confluence", None),
    Case("show my calendar", None),
    Case("show my open tickets", None),
    Case("delete all my files in /tmp", None),
    Case("clear my calendar for Friday", None),
    Case("wipe the staging database", None),
    Case("erase the whiteboard", None),
    Case("Delete that message", None),
    Case("delete that", None),
    Case("remove that line from the config", None),
    # Channels, sharing and permissions about things other than memories.
    Case("can you post this in other channels?", None),
    Case("use the other channel for deploy notifications", None),
    Case("you can use my laptop charger", None),
    Case("feel free to use my slides in other channels", None),
    Case("don't use emojis in other channels", None),
    Case("Do you use memories across channels?", None),
    Case("can memories be shared across channels?", None),
    Case("this channel is only for deploy alerts", None),
    Case("keep this channel on topic please", None),
    Case("only post in this channel", None),
    # Guessing/inferring in the ordinary sense.
    Case("stop guessing and just check the logs", None),
    Case("don't guess, ask me", None),
    Case("I can't infer anything from this stack trace", None),
    Case("can you infer the schema from the CSV?", None),
    Case("stop making assumptions about the data", None),
    Case("don't assume the server is up", None),
    Case("Stop inferring the types, annotate them explicitly", None),
    # "Which ... did you use" about tools and sources.
    Case("which version did you use?", None),
    Case("which library did you use for that?", None),
    Case("what did you use to generate that chart?", None),
    Case("what sources did you use?", None),
    # Plain statements: formation may learn from them, but they are not commands.
    Case("I prefer short status reports.", None),
    Case("I'm vegetarian, by the way", None),
    Case("stop", None),
    Case("", None),
    Case("   ", None),
]

SECOND_BATCH: list[Case] = [
    Case(
        "Hey @remem, remember that I'm out every other Friday.",
        K.REMEMBER,
        "I'm out every other Friday",
    ),
    Case(
        "remember that our team uses trunk-based development",
        K.REMEMBER,
        "our team uses trunk-based development",
    ),
    Case(
        "Please remember: deploys need two approvals",
        K.REMEMBER,
        "deploys need two approvals",
    ),
    Case("remember i like my reports in markdown", K.REMEMBER, "i like my reports in markdown"),
    Case("Remember that I’m allergic to shellfish!!", K.REMEMBER, "I’m allergic to shellfish"),
    Case("make a note: I'm on call next week", K.REMEMBER, "I'm on call next week"),
    Case("store this in your memory: my team is Platform", K.REMEMBER, "my team is Platform"),
    Case(
        "In this channel, remember that we write in Spanish",
        K.REMEMBER,
        "we write in Spanish",
    ),
    Case(
        "remember that I hate meetings before 10, only in this channel",
        K.REMEMBER,
        "I hate meetings before 10",
    ),
    Case("what do you remember about me so far?", K.LIST_ABOUT_ME),
    Case("what do you have on me?", K.LIST_ABOUT_ME),
    Case("show me everything you know about me", K.LIST_ABOUT_ME),
    Case("what have you got on me", K.LIST_ABOUT_ME),
    Case("What do you know about me, bot?", K.LIST_ABOUT_ME),
    Case("forget that one", K.FORGET_LAST),
    Case("pls forget that 🙏", K.FORGET_LAST),
    Case("delete the last memory", K.FORGET_LAST),
    Case("forget everything you know about me, please", K.FORGET_ALL_ABOUT_ME),
    Case("delete my data", K.FORGET_ALL_ABOUT_ME),
    Case("I want you to delete everything about me", K.FORGET_ALL_ABOUT_ME),
    Case("That’s wrong — I’m based in Osaka now", K.CORRECT, "I’m based in Osaka now"),
    Case("that's incorrect, I use Linux not Mac", K.CORRECT, "I use Linux not Mac"),
    Case(
        "That memory is wrong, the standup is at 9:15",
        K.CORRECT,
        "the standup is at 9:15",
    ),
    Case("that's not true", K.DISABLE),
    Case("that note is outdated", K.DISABLE),
    Case("that isn't right", K.DISABLE),
    Case("don't infer things about me", K.STOP_INFERRING),
    Case("please stop guessing things about me", K.STOP_INFERRING),
    Case("stop inferring", K.STOP_INFERRING),
    Case("you can go back to inferring things about me", K.RESUME_INFERRING),
    Case("ok you can make assumptions about me again", K.RESUME_INFERRING),
    Case("don't share my memories with other channels", K.NO_CROSS_CHANNEL),
    Case("keep what you know about me in this channel", K.NO_CROSS_CHANNEL),
    Case("you can share my notes across channels", K.ALLOW_CROSS_CHANNEL),
    Case("what notes did you use for that answer?", K.WHICH_USED),
    Case("which memories did you just use?", K.WHICH_USED),
    Case("what memories were used?", K.WHICH_USED),
    Case("keep that memory to this channel", K.SCOPE_TO_CHANNEL),
    # Near-misses.
    Case("could you please note that I prefer dark mode", None),
    Case("forget about me", None),
    Case("only for this channel please", None),
    Case("forget the meeting, it's cancelled", None),
    Case("forget that, it doesn't matter", None),
    Case("remember when I said I'd fix it?", None),
    Case("remember that bug from last week?", None),
    Case("I remember", None),
    Case("can you remember the last three messages?", None),
    Case("remember the password is in 1password", None),
    Case("don't forget about the retro", None),
    Case("keep in mind that the API is rate limited", None),
    Case("that's wrong!!! 😡 my build is broken", None),
    Case("that's wrong. we need to rerun CI", None),
    Case("delete that file", None),
    Case("erase my last message", None),
    Case("what do you know about me-bots", None),
    Case("what do you know about memory management?", None),
    Case("show my pull requests", None),
    Case("stop inferring types from the defaults", None),
    Case("you can use my account in other channels", None),
    Case("don't post my stuff in other channels", None),
    Case("which memory allocator did you use?", None),
    Case("what did you use for that?", None),
    Case("why did you say that?", None),
    Case("stop assuming I'm online", None),
    Case("is it ok to use memories across channels?", None),
    Case("forget everything I said about the budget", None),
    Case("clear the cache", None),
    Case("remember: ", None),
    Case("remember that", None),
    Case("that's right, I prefer weekly updates", None),
    Case("I think that's wrong, I prefer weekly updates", None),
    Case("forget what I just said about the deadline", None),
]

COMMANDS: list[Case] = [
    *REMEMBER,
    *SCOPE_TO_CHANNEL,
    *LIST_ABOUT_ME,
    *CORRECT,
    *DISABLE,
    *FORGET_LAST,
    *FORGET_ALL_ABOUT_ME,
    *NO_CROSS_CHANNEL,
    *ALLOW_CROSS_CHANNEL,
    *STOP_INFERRING,
    *RESUME_INFERRING,
    *WHICH_USED,
    *MEMBER_LINK,
    *(case for case in SECOND_BATCH if case.kind is not None),
]

NEAR_MISSES: list[Case] = [
    *NON_COMMANDS,
    *(case for case in SECOND_BATCH if case.kind is None),
]

CORPUS: list[Case] = [*COMMANDS, *NEAR_MISSES]
