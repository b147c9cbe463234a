"""More labelled cases for the secret guard: the classes added for issue 11 and evasions.

Hugging Face tokens, user/password pairs in prose, bank accounts (IBANs, labelled
account numbers), BIP-39 wallet seed phrases, and credentials disguised with
invisible characters, fullwidth forms and look-alike letters. Every value is
fake: tokens are random letters, IBANs and seed phrases were generated once with
a fixed seed (valid checksums, no real account or wallet behind them) and pasted
here as literals. Invisible characters are written as escapes so they can be seen.

The benign cases are the near misses of each class: IBAN-shaped strings whose
checksum fails, long runs of ordinary words, talk about logins and passwords
without a value, ``hf_`` names that are not tokens, non-Latin text.
"""

from __future__ import annotations

ZWSP, ZWJ, ZWNJ, SHY, WJ, BOM = "\u200b", "\u200d", "\u200c", "\u00ad", "\u2060", "\ufeff"
RLO, PDF, LRM, VS16 = "\u202e", "\u202c", "\u200e", "\ufe0f"
TAG_A = "\U000e0061"

#: Notes that carry a credential, with the expected detector.
MORE_SECRET_NOTES: list[tuple[str, str]] = [
    # Hugging Face tokens: "hf_" and 34 letters.
    ("Priya's Hugging Face token is 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", "huggingface_token"),
    ("HF_TOKEN=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 for the eval runner.", "huggingface_token"),
    (
        "Uses 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 to pull gated weights.",
        "huggingface_token",
    ),
    (
        "Org token 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 uploads data.",
        "huggingface_token",
    ),
    ("huggingface-cli login --token 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", "huggingface_token"),
    (
        "Jun's read token: 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 (not write).",
        "huggingface_token",
    ),
    ("Space secrets: 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", "huggingface_token"),
    ("Bo pasted 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 into #ml by mistake.", "huggingface_token"),
    ("Inference endpoint auth uses 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.", "huggingface_token"),
    ("Mira keeps 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 in her notebook env.", "huggingface_token"),
    # User names with their passwords, in prose (a pair whose password alone is stated
    # with its value is caught first as a password).
    ("Her login is bob.k and the password is hunter2.", "password_in_prose"),
    ("Staging Jenkins: user deploy, password deploy", "login_pair"),
    ("username marta password tulips for the office printer", "login_pair"),
    ("The shared account is ops@acme.io with password rainbow", "login_pair"),
    ("The router login is admin/admin.", "login_pair"),
    ("Login for the wiki is guest / guest", "login_pair"),
    ("use admin:changeme to log into the grafana box", "login_pair"),
    ("Logs in to the NAS as jdoe with Winter2024!", "login_pair"),
    ("email kim@acme.com and password letmein for the test shop", "login_pair"),
    ("Printer admin login is admin and the pass is 1234", "login_pair"),
    ("VPN: username jsmith, password bluebird", "login_pair"),
    ("Login for the staging CMS: editor/Edit0r#1", "login_pair"),
    ("Logging in as svc-backup with B4ckup!Now works for the restore drill.", "login_pair"),
    ("Test tenant creds: qa_user / Qa-Pass-77", "password_in_prose"),
    ("Signs into the vendor portal as ravi.s with password Blue-Otter", "password_in_prose"),
    # Bank accounts: IBANs (valid checksum) and labelled account numbers.
    ("Rent goes to IBAN DE17 7511 7201 2177 4098 24.", "iban"),
    ("Olga's account: GB63 NWBK 3412 4031 1564 03", "iban"),
    ("Pay the landlord at FR31 1588 3722 8500 6036 7790 260", "iban"),
    ("Refunds go to NL81ABNA4058470081 (Sam's)", "iban"),
    ("His Spanish account is ES54 0053 8168 3674 7615 7225.", "iban"),
    ("IT16 8720 2783 3161 6516 1650 108 is where the grant is paid.", "iban"),
    ("Belgian IBAN for the club: BE81 6566 0584 3575", "iban"),
    ("Salary account CH40 1291 5490 1575 5043 5", "iban"),
    ("Transfer to pl46 5034 3161 8867 8024 8545 2075 for the invoice", "iban"),
    ("Send the deposit to IE50 AIBK 9264 5931 4158 78", "iban"),
    ("Ola's Norwegian account NO85 5293 5797 743", "iban"),
    ("Sort code 20-00-00, account number 55779911", "bank_account"),
    ("Checking account 000123456789 at Chase, routing 021000021", "bank_account"),
    ("Her savings account number is 4401-2290-1187.", "bank_account"),
    # BIP-39 seed phrases (checksummed, or named as such).
    (
        "moon auction permit dove dentist opera absorb first olympic pride force spawn",
        "seed_phrase",
    ),
    (
        "Dana's MetaMask recovery phrase: moon escape spawn debris genre scare once gossip "
        "cream spy decide scout",
        "seed_phrase",
    ),
    (
        "profit glass spread code spatial private estate lawsuit pave tank hand donate "
        "is the backup for the team wallet",
        "seed_phrase",
    ),
    (
        "crop kidney rice scan eight climb push knee travel mesh boring text beach kick three",
        "seed_phrase",
    ),
    (
        "Seed words: 1. over 2. cotton 3. unusual 4. kangaroo 5. wolf 6. surround 7. direct "
        "8. assume 9. either 10. turkey 11. cram 12. basic 13. margin 14. warm 15. capital "
        "16. error 17. nation 18. deal",
        "seed_phrase",
    ),
    (
        "pizza canvas black mask east olympic laundry reveal because weekend order citizen "
        "forget like airport peace shoulder animal naive salute execute ivory prosper gold",
        "seed_phrase",
    ),
    (
        "Ledger backup: immense, holiday, frog, soda, thunder, earth, coin, cattle, globe, "
        "oval, embark, never",
        "seed_phrase",
    ),
    (
        "issue-come-omit-light-phrase-fetch-you-royal-video-evidence-cover-tennis",
        "seed_phrase",
    ),
    (
        "Keep: pigeon donor dress fatigue funny ranch offer side country fun silk share",
        "seed_phrase",
    ),
    (
        "Picnic Subject Tone Few Alpha Auto Leave Sleep Supply Wealth Gorilla Case",
        "seed_phrase",
    ),
    # Evasions: invisible characters, fullwidth and mathematical forms, look-alike letters.
    (f"CI uses gh{ZWSP}p_R8nq2LkV5xTz1MwY7cHb3JfA9dGs6PeU0iQo to push tags.", "github_token"),
    (f"Key: sk-ant-api03-{ZWJ}hcBe_4RJpwmCZD_5WvDEK7XB5HQ_oBkfba9OXKzZu", "anthropic_key"),
    (f"AKIA{SHY}7ZGEHX324EMT63HK is the deploy user's key id", "aws_access_key"),
    (f"my pass{ZWNJ}word is hunter2", "password_in_prose"),
    (f"The door code is 4{WJ}7{WJ}2{WJ}9", "password_in_prose"),
    (f"hf_{BOM}jORfMHwMGOsHeBulwGFQKgckIrrlpnGKjS is Lea's token", "huggingface_token"),
    (f"{RLO}password: tr0ub4dor{PDF}", "password_in_prose"),
    (f"g{TAG_A}hp_R8nq2LkV5xTz1MwY7cHb3JfA9dGs6PeU0iQo", "github_token"),
    (f"Visa 4556{LRM} 7375 8689 9855 is Olga's", "card_number"),
    ("ｇｈｐ＿R8nq2LkV5xTz1MwY7cHb3JfA9dGs6PeU0iQo (fullwidth)", "github_token"),
    ("Olga's Visa is ４５５６ ７３７５ ８６８９ ９８５５.", "card_number"),
    ("my раssword is hunter2", "password_in_prose"),  # Cyrillic р and а
    ("Токен: ghр_R8nq2LkV5xTz1MwY7cHb3JfA9dGs6PeU0iQo", "github_token"),  # Cyrillic р
    ("𝐀𝐊𝐈𝐀7ZGEHX324EMT63HK is in the deploy script", "aws_access_key"),
    ("the wifi ρassword is blue-otter-cookie", "password_in_prose"),  # Greek rho
    (f"s{VS16}k-proj-Qm3vT8xLw2ZrN6pYk1HsA9dFj4GcE7bU0oRiVtMy5XaWnPe", "openai_key"),
    ("IBAN ＤＥ１７ ７５１１ ７２０１ ２１７７ ４０９８ ２４", "iban"),
    (f"PIN{ZWSP}: 4{ZWSP}4{ZWSP}1{ZWSP}2", "password_in_prose"),
    ("Her PIN is ٤٤١٢.", "password_in_prose"),  # Arabic-Indic digits
    (f"user: marta / pa{SHY}ss: tulips", "password_in_prose"),
]

#: Near misses of the new classes and non-Latin text: none holds a credential.
MORE_BENIGN_NOTES: list[str] = [
    # IBAN-shaped, checksum fails or country/length wrong.
    "The old IBAN DE17 7511 7201 2177 4098 25 was mistyped on the invoice.",
    "Reference GB46 4140 8974 6504 0259 18 is the ticket from the bank portal.",
    "Order FR31 1588 3722 8500 6036 7790 261 shipped on Monday.",
    "Build NL14 7963 5904 7304 65 failed the checksum step.",
    "Part number ES55 0053 8168 3674 7615 7225 is out of stock.",
    "Ticket XX12 3456 7890 1234 56 is a placeholder in the docs.",
    "Use DE00 0000 0000 0000 0000 00 as the example IBAN in tests.",
    "Release AB12CD34EF56GH78 was tagged last night.",
    "Room booking code US20 2024 0612 for the offsite.",
    "Serial SN45 8812 0031 7790 belongs to the lab scope.",
    # Account numbers without a bank, routing numbers alone.
    "The AWS account number 123456789012 belongs to the staging org.",
    "Customer account 88213 at the printer vendor is Ana's team.",
    "Routing for support tickets goes through the triage channel.",
    "Bank holidays: the office is closed and nobody answers the account manager.",
    # Runs of ordinary words; list words without checksum or name.
    "abandon ability able about above absent absorb abstract absurd abuse access accident",
    "Likes coffee music travel photo garden movie guitar dinner soccer puzzle piano poetry",
    "Office supplies: paper pencil glue tape scissors stapler folder marker label ribbon",
    "Dinner ideas: pasta salad soup pizza chicken rice bean curry tomato lemon garlic onion",
    "Colours for the deck: blue green orange purple yellow black white silver gold pink",
    "Team names: falcon tiger eagle shark panther wolf cobra dragon phoenix lion bear",
    "Standup order is Alice, Bob, Carol, Dan, Erin, Frank, Grace, Heidi, Ivan, Judy, Ken.",
    "Prefers short answers with one example and a link to the relevant docs page please.",
    "Packing list: tent, stove, lamp, rope, boots, jacket, gloves, socks, water, snack",
    "The game uses twelve cards: apple, ocean, rocket, candy, castle, forest, island, "
    "planet, dragon, pirate, robot, wizard",
    # Talk about logins and passwords without a value.
    "Login with SSO; the password field is only for the break-glass account.",
    "User name and password are required on the first visit.",
    "Her username is her email address; the password lives in 1Password.",
    "The login page asks for the password twice after a reset.",
    "Signs in as an admin with her YubiKey, never with a password.",
    "Logs in as root with SSH keys only.",
    "The account email and password reset flow is owned by the auth team.",
    "Login: via Okta for everyone except contractors.",
    "Creds are in the vault under ops/staging, ask Dana.",
    "Username or password incorrect errors spike after each deploy.",
    "Use the guest login; no password needed in the lobby.",
    "Log in as the service account with the token from the vault.",
    "Login/logout events go to the audit log.",
    "The user:group for the data dir is app:app.",
    "Meeting at 10:30 about the login redesign.",
    # hf_ names that are not tokens.
    "Set HF_HOME to the shared cache before running hf_transfer.",
    "hf_hub_download caches files under ~/.cache/huggingface.",
    "The hf_dataset_loader_v2 script needs a rewrite.",
    "Uses 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 as a class name, sadly.",
    # Non-Latin and mixed text (the folding must not invent secrets).
    "Спасибо за помощь, пароль пришлю позже через менеджер паролей.",
    "Ο κωδικός βρίσκεται στο vault της ομάδας.",
    "Bevorzugt kurze Antworten auf Deutsch, gern mit Beispielcode.",
    "東京オフィスの会議は毎週月曜日の10時からです。",
    "Prefers replies with emoji 👍🏽 and the occasional 🎉.",
    "مرحبا، يفضل الردود القصيرة باللغة العربية.",
    "Café meet-ups are on Fridays at 16:00 in the Zürich office.",
    "Naïve Bayes baseline scores 0.81 on the dev set.",
    f"Prefers{ZWSP} short{ZWSP} replies.",
    "Uses ｆｕｌｌｗｉｄｔｈ text in her display name.",
]
