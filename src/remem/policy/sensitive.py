"""Sensitive personal topics in note text (English keyword rules).

:func:`scan_sensitive` flags notes that state or imply something about a
person's health, finances, sexuality, religion or politics, or about other
people's private business (affairs, divorces, arrests ...). It is meant for
*inferred* notes: a bot may remember what a person chose to tell it, but it
must not conclude such things on its own.

The rules aim for precision over recall. Each category lists phrases that are
unambiguous in a note about a person, and leaves out words that are mostly
used for something else in team chat: "health" alone (health checks),
"disabled" (feature flags), "debt" after "tech", "came out" (releases),
"fired" (alerts), "party" (socials), "converted to" (file formats), bare
"Christian" (a first name), "liberal"/"conservative" (estimates, use of
emoji). Casual idioms that still name a condition ("a bit OCD about
formatting") do fire: an inferred note should not carry them either.
"""

from __future__ import annotations

import re

_RELATIVES = (
    r"husband|wife|partner|spouse|ex|ex-wife|ex-husband|boyfriend|girlfriend|fianc[ée]e?"
    r"|brother|sister|mother|father|mom|mum|dad|parents?|son|daughter|kids?|children|child"
    r"|baby|uncle|aunt|cousin|grand(?:mother|father|ma|pa|parents?)|in-laws?|roommate"
    r"|flatmate|neighbou?r|best friend|friend|boss|manager|coworker|colleague"
)
#: A third person's life: "her husband ...", "his mother's ...", "Dana's sister ...".
_THIRD_PARTY = re.compile(rf"(?i)\b(?:his|her|their|\w+'s)\s+(?:{_RELATIVES})\b")

_OTHERS_PRIVATE = (
    r"cheat(?:s|ed|ing)\s+on|(?:having|had|has)\s+an\s+affair|affair\s+with|divorc\w*"
    r"|separated\s+from|custody\s+(?:battle|dispute|of|hearing)|restraining\s+order"
    r"|domestic\s+(?:violence|abuse)|abusive\s+(?:relationship|partner|husband|wife)"
    r"|(?:was|been|got|getting)\s+arrested|in\s+(?:jail|prison)|criminal\s+record|convicted"
    r"|\bdui\b|on\s+parole|lawsuit|being\s+sued|(?:is|are)\s+suing|court\s+case"
    r"|immigration\s+status|undocumented|visa\s+(?:issues|problems|trouble)|deported"
    r"|passed\s+away|funeral|grieving|bereave\w*|broke\s+up\s+with|break-?up|split\s+up"
    r"|(?:got|was|been|getting)\s+fired|fired\s+from|(?:was|been)\s+let\s+go|on\s+a\s+pip\b"
    r"|performance\s+improvement\s+plan|disciplinary|demoted"
    rf"|(?:{_RELATIVES})\s+(?:died|is\s+dying)"
)
_HEALTH = (
    r"diagnos(?:ed|is|es)|cancer|tumou?r|chemo(?:therapy)?|radiotherapy|leukemia|lymphoma"
    r"|diabet(?:es|ic)|insulin|epilep(?:sy|tic)|asthma(?:tic)?|arthritis|multiple\s+sclerosis"
    r"|crohn'?s|c[oe]eliac|lupus|fibromyalgia|endometriosis|\bhiv\b|hepatitis|dementia"
    r"|alzheimer'?s|parkinson'?s|(?:had|suffered)\s+a\s+(?:stroke|heart\s+attack)|heart\s+(?:condition|surgery|disease)"
    r"|seizures?|migraines?|long\s+covid|(?:had|has|got|caught)\s+covid|tested\s+positive"
    r"|chronic\s+(?:pain|illness|fatigue|condition)|depress(?:ion|ed)|anxiety|panic\s+attacks?"
    r"|bipolar|schizophreni\w*|\bptsd\b|\bocd\b|\badhd\b|autis(?:m|tic)|asperger'?s"
    r"|eating\s+disorder|anorexi\w*|bulimi\w*|self[- ]harm|suicid\w*"
    r"|mental\s+(?:health|illness|breakdown)|nervous\s+breakdown|burn(?:ed|t)?[- ]?out"
    r"|therap(?:y|ist)|psychiatr\w+|psychologist|counsel(?:l?ing|l?or)|rehab\b"
    r"|medication|\bmeds\b|prescri(?:bed|ption)|antidepressants?|\bssris?\b|xanax|adderall"
    r"|ritalin|prozac|zoloft|lexapro|ozempic|wegovy|metformin|painkillers?|opioids?"
    r"|(?:on|off)\s+sick(?:\s+leave)?|called\s+in\s+sick|out\s+sick|medical\s+(?:leave|condition"
    r"|issues?|appointment|procedure)|doctor'?s\s+appointment|hospitali[sz]ed"
    r"|in\s+(?:the\s+)?hospital|surgery|\bivf\b|pregnan\w*|miscarr\w*|expecting\s+a\s+baby(?=\s*(?:in|this|next|soon|[.,;!]|$))"
    r"|fertility|maternity\s+leave|disabilit(?:y|ies)|wheelchair|hearing\s+(?:loss|aids?)"
    r"|(?:is|being)\s+(?:legally\s+)?(?:deaf|blind)|visually\s+impaired"
    r"|(?:is|stays|stayed|been|getting)\s+sober|sobriety|alcoholi\w*|addiction|\baddicts?\b"
    r"|substance\s+abuse|relapsed?|allerg(?:y|ies|ic)|health\s+(?:issues?|problems?"
    r"|condition|scare)|injur(?:y|ies|ed)|broke\s+(?:his|her|their)\s+(?:leg|arm|wrist|ankle)"
)
_FINANCES = (
    r"salar(?:y|ies)|paycheck|pay\s?check|(?:his|her|their|household|annual|monthly|yearly"
    r"|low|high|side)\s+income|income\s+(?:is|of)|minimum\s+wage|earns?\s+(?:[$£€]|\d+k\b|\d[\d,.]*\s+(?:a|per)|about"
    r"|around|over|under|six|seven|good\s+money|a\s+lot)|makes\s+(?:[$£€]\s?\d[\d,.]*k?|\d+k\b)|net\s+worth"
    r"|bank\s+(?:balance|account\s+balance)|(?:his|her|their|life)\s+savings|savings\s+account"
    r"|(?<!tech\s)(?<!technical\s)(?<!design\s)\bdebts?\b|owes?\s+.{0,24}?(?:[$£€]\s?\d[\d,.]*[km]?|\d[\d,.]*\s*(?:dollars|pounds|euros|k)"
    r"|money)"
    r"|(?:student|personal|car|payday|home|business|bank)\s+loans?|(?:took\s+out|refused|denied)\s+a\s+loan"
    r"|loan\s+repayments?|paying\s+off\s+(?:a|the|his|her|their)\s+loan|mortgage|credit\s+(?:score|card\s+debt|rating|history)|bankrupt\w*"
    r"|(?:is|was|went|flat|totally)\s+broke\b|can'?t\s+afford|cannot\s+afford"
    r"|financial\s+(?:trouble|difficult\w*|problems?|stress|situation|hardship|struggles?)"
    r"|(?:his|her|their|personal)\s+finances|overdra(?:ft|wn)|foreclos\w*|evict\w*"
    r"|inherit(?:ed|ance)\s+(?:[$£€]|money|a\s+fortune|from)|pay\s+(?:cut|raise|rise)"
    r"|(?:annual|year-end|performance|signing)\s+bonus|stock\s+options|\b401\(?k\)?"
    r"|pension|(?:is|was|been|currently)\s+unemployed|unemployment\s+benefits|laid\s+off|food\s+stamps|on\s+welfare|behind\s+on\s+(?:rent|bills)"
    r"|gambling\s+(?:debts?|problem|addiction)|[$£€]\s?\d+k?\s+(?:a|per)\s+(?:year|month)"
)
_SEXUALITY = (
    r"\bgay\b|lesbian|bi-?sexual|homosexual|heterosexual|asexual|pansexual|\bqueer\b"
    r"|\blgbt\w*\+?|transgender|\btrans\s+(?:woman|man|person|kid)|non-?binary"
    r"|sexual\s+(?:orientation|identity|preferences?|history|partners?)|sexuality|sex\s+life"
    r"|came\s+out\s+(?:as|to\s+(?:his|her|their)\s+(?:family|parents))|coming\s+out\s+as"
    r"|closeted|in\s+the\s+closet|same-sex|dating\s+(?:a|another)\s+(?:man|woman|guy|girl)"
    r"|\bkinks?\b|kinky|fetish\w*"
)
_FAITHS = (
    r"christian|muslim|jew|jewish|hindu|buddhist|sikh|catholic|protestant|mormon|evangelical"
    r"|atheist|agnostic|pagan|jain|baptist|methodist|lutheran|quaker|jehovah'?s\s+witness"
)
_RELIGION = (
    r"religio(?:n|us|usly)|devout|(?:is|are|a|as|practicing|practising|born-again|observant"
    rf"|orthodox|raised)\s+(?:{_FAITHS})|muslim|jewish|hindu|buddhist|\bsikh\b|catholic|mormon"
    r"|evangelical|atheist|agnostic|\bislam(?:ic)?\b|judaism|christianity|hinduism|buddhism"
    r"|sikhism|(?:goes\s+to|attends|at|in|from|after)\s+(?:the\s+)?(?:church|temple|mosque|synagogue"
    r"|gurdwara)|(?:church|mosque|synagogue)\s+(?:on|every|services?|choir|group|community)"
    r"|\bprays\b|prayers?|ramadan|\beid\b|yom\s+kippur|rosh\s+hashanah|passover"
    r"|(?:for|during)\s+lent\b|sabbath|shabbat|(?:keeps|eats|only\s+eats)\s+(?:kosher|halal)"
    r"|(?:kosher|halal)\s+(?:food|meals?|diet|options)|bible\s+(?:study|verses?)"
    r"|reads\s+the\s+bible|quran|koran|torah|(?:his|her|their)\s+faith\b|goes\s+to\s+mass"
    r"|bapti[sz]ed|bar\s+mitzvah|bat\s+mitzvah|converted\s+to\s+(?:islam|christianity"
    r"|judaism|catholicism|buddhism|hinduism)|spiritual(?:ity)?"
)
_POLITICS = (
    r"vot(?:es|ed|ing)\s+(?:for\s+(?:labour|tory|the\s+tories|conservatives?|democrats?"
    r"|republicans?|the\s+greens?|reform|trump|biden|harris|the\s+\w+\s+party)|labour|tory"
    r"|conservative|democrat\w*|republican|green|reform|leave|remain)|\bdemocrats?\b"
    r"|democratic\s+party|republicans?|\bgop\b|labour\s+(?:party|voter|member|supporter)"
    r"|\btor(?:y|ies)\b|conservative\s+(?:party|voter|politics|mp)|liberal\s+democrats?"
    r"|lib\s?dems?|green\s+party|\bsnp\b|\bukip\b|reform\s+uk|\bafd\b|\bmaga\b|brexit\w*"
    r"|remainer|left-wing|right-wing|far[- ](?:left|right)|centrist|socialist|communist"
    r"|marxist|libertarian|anarchist|political\s+(?:views?|beliefs?|affiliation|leanings?"
    r"|party|activis[mt]|opinions?|rally)|politically|party\s+member(?:ship)?"
    r"|member\s+of\s+the\s+\w+\s+party|(?:campaign(?:s|ed|ing)?|canvass(?:es|ed|ing)?)\s+for"
    r"|(?:joined|attended|went\s+to)\s+(?:a|the)\s+(?:protest|rally|march)|pro-?(?:life|choice)"
    r"|\btrump\b|\bbiden\b|kamala|obama|bernie\s+sanders|starmer|sunak|farage|corbyn|macron"
    r"|le\s+pen|\bmodi\b|\bputin\b"
)

_CATEGORIES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (name, what, re.compile(rf"(?i)(?<![\w-])(?:{pattern})(?![\w-])"))
    for name, what, pattern in (
        ("others_private", "another person's private life", _OTHERS_PRIVATE),
        ("health", "health or medical details", _HEALTH),
        ("finances", "personal finances", _FINANCES),
        ("sexuality", "sexual orientation or gender identity", _SEXUALITY),
        ("religion", "religious belief or practice", _RELIGION),
        ("politics", "political views or affiliation", _POLITICS),
    )
)


def scan_sensitive(text: str) -> tuple[str, str] | None:
    """Return ``(category, what)`` for the first sensitive topic in ``text``, else ``None``.

    A topic that concerns a named relation ("her husband", "Dana's sister") is
    reported as ``others_private``: it is a third person's business even when it
    also falls under health, finances and the rest.
    """
    for name, what, pattern in _CATEGORIES:
        m = pattern.search(text)
        if m is None:
            continue
        if name != "others_private" and _THIRD_PARTY.search(text, 0, m.start()):
            return _CATEGORIES[0][0], _CATEGORIES[0][1]
        return name, what
    return None
