"""Labelled corpus for the write-time content guard (:mod:`remem.policy.guard`).

Written for remem: short third-person notes in the style a chat bot would
remember. Every credential below is fake: random characters in the right
format, generated once with a fixed seed and pasted here as literals so the
corpus is readable and stable. None of them was ever issued by a provider.

``SECRET_NOTES`` pairs each note with the detector expected to fire;
``SENSITIVE_NOTES`` pairs each note with the expected category.
"""

from __future__ import annotations

#: Notes that carry a credential, with the expected detector.
SECRET_NOTES: list[tuple[str, str]] = [
    (
        (
            "Priya pasted her OpenAI key 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 "
            "into #ml-infra and asked the bot to keep it handy."
        ),
        "openai_key",
    ),
    (
        (
            "Marco uses sk-proj-dbWB2dC4_DSDC6Lc1mxLpQ2yMK_Ye9FZ1wUVl4nuYV-d8fNYvvDbzDZST6IaX"
            "qA2T3BlbkFJh9Uz0-T1SaQ6dDwxlGejkc5bJFIoxSLivuGvIL6P_8odNXR1yHnGA3cCcYseu52C for "
            "the eval harness."
        ),
        "openai_key",
    ),
    (
        (
            "The shared OpenAI project key for the support bot is "
            "sk-proj-5CdYP2hMqBgNjjNMu1GqbeB6veWzSmA3y_nXL_cPZKcuzPrR2BImWS-EifkrvvBIT3BlbkFJ"
            "QGVRRoLE-rnPf0jWsqRoWjCkIULo6JnfLbbl0ofyE1uo5vEun3WLG9OmAOfdbLO5"
        ),
        "openai_key",
    ),
    (
        (
            "Jun said to call the API with sk-proj-YOZiiO6oGB8THxANzFUkJl5lRDXNfPxOMFQmlFCcFZ"
            "jIjjcbLT_8tmPjwwtsONnLqAseOAwM3ugFGi53G46bYRvH-d1chTrqrHJYZwlD-awO4CEO_9C0RJCg "
            "when testing embeddings."
        ),
        "openai_key",
    ),
    (
        (
            "Team uses the key sk-6eWGP4xkGXY4nttSt2JxkSSVDMf2h5M9GKyljqBn8KUWYdFR for the "
            "nightly summariser."
        ),
        "openai_key",
    ),
    (
        (
            "Leo's personal OpenAI key: sk-svcacct-YSXvflGmIkrk4EW3YvP4q-Bp30pLJFWay4cdFHAwKs"
            "zING5vT-1pAXAKndpbLrjVN3TPap45SNZR_oWW"
        ),
        "openai_key",
    ),
    (
        (
            "OPENAI_API_KEY=sk-nJarOMU4V1UGm7DM1HA7VTtSkCNQHmxHaRyLBzv3NLUS59Ve is what Sam "
            "exports before running the notebook."
        ),
        "openai_key",
    ),
    (
        (
            "Dana's Anthropic key is sk-ant-api03-_FLc0tYIwjbSH0Mt7H-v7fIm2iTi4cvulZJMAAEQIij"
            "V7gvMITDYZw9HQCHFdZO3FIyjv4sH6urr4UNZEoANinDYP_mxfAA."
        ),
        "anthropic_key",
    ),
    (
        (
            "The triage bot authenticates to Claude with "
            "sk-ant-api03-hcBe_4RJpwmCZD_5WvDEK7XB5HQ_oBkfba9OXKzZutdbXshWGqk7MbehqfJp3lyd_qJ"
            "y5XQIHFFhwS2hT0z2iIjGwmthAAA"
        ),
        "anthropic_key",
    ),
    (
        (
            "ANTHROPIC_API_KEY='sk-ant-api03-2fgl8VmOfqe4qY5dIlGPkMeXhHOqHWoMm2FAQRY9nq5dLuzV"
            "XPm0SqifMO1MOTIPbptOPPi5J96UWkhrg-GFRUVZN7RvdAA' goes in Rui's .env for the demo."
        ),
        "anthropic_key",
    ),
    (
        (
            "Kai shared an admin key sk-ant-admin01-sGCrox0gmInAHikjBw3cV-KCz_E25Uy9jG0zbW-jZ"
            "2fT6ayMapMOK00N5Mq4ruGb2eV1ZKcllaXI7IV9RX6o9Ts1scwHVAA for usage reports."
        ),
        "anthropic_key",
    ),
    ("Build role access key id is AKIAIS2QS2R3V7N7Z3FE (Omar set it up).", "aws_access_key"),
    (
        "Ines pasted AKIAINJOBGQJ6GZLAF3D along with the bucket name for the data drop.",
        "aws_access_key",
    ),
    (
        ("Temporary creds from STS start with ASIAN3WDG2HQRL6DNFYH; Hugo reuses them all day."),
        "aws_access_key",
    ),
    ("aws_access_key_id = AKIA4S7ZH6GJYMKQ2S7N", "aws_access_key"),
    (
        (
            "Nadia keeps the legacy uploader running with key AKIAV7GAWRD4TGORRP2J on the "
            "old EC2 box."
        ),
        "aws_access_key",
    ),
    (
        (
            "The aws secret access key for the backup user is "
            "qGy0ht0IJ9NI+B/V8ERwx5thPrBO/9QpqrGClgwo"
        ),
        "aws_secret_key",
    ),
    (
        "Omar's AWS secret: CzN2PacNCkCJRIWcpQSroGsfSjlnMOFIgUdkrZVE (region eu-west-1).",
        "aws_secret_key",
    ),
    ('aws_secret_access_key = "mQJbPoTqIZl81YMCMrgowEB3JcGIH8qZnViUdN5q"', "aws_secret_key"),
    (
        (
            "The secret key for the s3-sync IAM user is "
            "tjsB9QULutW4ZpsILbbqWm6d32JV0Z7gm8eaforT and should work until Friday."
        ),
        "aws_secret_key",
    ),
    ("Alex's GitHub token is ghp_JrYK69PwZE0Sp7ZNpgJ8w3khXc6TuB4UwqQO.", "github_token"),
    (
        (
            "CI pushes tags using ghp_5X6dNBAywsW0vCZSpONHjdvRh5GlIPOF5vWT from the release "
            "bot account."
        ),
        "github_token",
    ),
    (
        (
            "Mei created a fine-grained PAT github_pat_hLbE5nyO18lzTogpvvQpYR_DVExFPXQU7mBCzI"
            "hKF7r1ijayAgZbPe8lDXyQGZ0s6jjH0g8qbDzZOTVY6o for the docs repo."
        ),
        "github_token",
    ),
    (
        (
            "The OAuth app token gho_ISzaIZpB6kQlvQpeXI7J9klyLbGnBpYc7HUm belongs to the "
            "dashboard integration."
        ),
        "github_token",
    ),
    (
        (
            "App installation token ghs_SGSNPIepzXDhKPdyfJgP0EcHpXab92tDrUAk expires in an "
            "hour, Tom says."
        ),
        "github_token",
    ),
    (
        (
            "Use ghu_MiJT0uXIOCGZAJkSzSyZmF0rx7jqKr2lXUNf for the user-to-server calls in "
            "the prototype."
        ),
        "github_token",
    ),
    ("GitLab PAT for the mirror job: glpat-URsHGGSXJ7btqGCzjz2E", "gitlab_token"),
    ("Runner registration uses glrt-r6YzkjthdZW1rqjEWrKz on the build hosts.", "gitlab_token"),
    (
        "Sofia's deploy token gldt-YTwCMsS-LlMA7cLnV4GhgOuq lets the cluster pull images.",
        "gitlab_token",
    ),
    (
        "The standup bot token is xoxb-1169338861368-2940139678934-cOkQQ6JGo2A9rXQAzrFgQ11i",
        "slack_token",
    ),
    (
        (
            "Grace's user token xoxp-280707368531-106732983868-5335915070922-9f12c2c9c8bf1f0d"
            "9a482bdc03103aab can post as her."
        ),
        "slack_token",
    ),
    (
        (
            "Socket mode app token: xapp-1-A09CXE5F82V-8802553292916-adba8b1278c92258d2498763"
            "8f1962aa941eb10ad51d5673438e61beab700f15"
        ),
        "slack_token",
    ),
    (
        (
            "Alerts go to https://hooks.slack.com/services/TQ9CAOF7L/BC7MN2SP56X/uz8PemMlmRNt"
            "97LBNExbFb7g per Ivan."
        ),
        "slack_token",
    ),
    (
        (
            "Legacy workspace token xoxa-2-996955163879-988799797248-9c88901eeb7e6fa4cd13b081"
            "9c0aa916 still powers the old bot."
        ),
        "slack_token",
    ),
    (
        "Maps API key for the store locator is AIzakQpiqL0RDdxUMLW17jz0DfECFYWAtMUaN4_",
        "google_api_key",
    ),
    (
        "Ravi uses AIzavsdV3R-OoLJ2bNl-oCH3VDgnuqLgiBah2ci for the Gemini quick tests.",
        "google_api_key",
    ),
    (
        ('Firebase config apiKey: "AIzahbeRQcbB8zILGDxAYhE5eQP0pcxlxBCwMmh" was pasted by Elif.'),
        "google_api_key",
    ),
    (
        "OAuth client secret for the Google login is 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",
        "google_oauth",
    ),
    (
        (
            "Pedro's access token ya29.yPST6WXl2F-RwoEj3JMQV06UTOY8cVqMvMqtv6trukGETOvJ8Nj2tT"
            "5ntOix9efyTUTVRpxWeIAhFMPZFUgDLazmrCVIsuDjN348xTz3jJADsrAcu-UxgUkE works for "
            "Drive uploads today."
        ),
        "google_oauth",
    ),
    ("HF token for gated models: hf_RS3nfCPPmMvkKS11QT7bnu4EJc5d2xFJwi", "huggingface_token"),
    (
        ("Lena downloads Llama weights with hf_FeGuQV7KQtMu4YKfEvA2eqeQP2ubl6uouq on the GPU box."),
        "huggingface_token",
    ),
    (
        ("Write token hf_10q3t8FA8askOsdhBB7NnrwXPUKFKsMqRl pushes the fine-tuned checkpoints."),
        "huggingface_token",
    ),
    ("Live Stripe secret key: sk_live_ujwgzwHVKS3mzCj1ESpcUOpf", "stripe_key"),
    (
        ("Billing service restricted key rk_live_VecHGEKESu6HYkKTFzayJUJ1 (read-only charges)."),
        "stripe_key",
    ),
    (
        (
            "Test mode key sk_test_VCkLLxd1Ux0wCpSPQIt2fCW3wmkiC71c9xKvZlKFEaKo44NdCPkGnzDhuq"
            "ikvilZ6VNHtoJTBDDGJtkHNG9tL1YnsRjRa0vhByT is what Zoe uses locally."
        ),
        "stripe_key",
    ),
    (
        (
            "Webhook signing secret whsec_PGVlN4CC0ICx1ndfUggIyiCzlECH2LcL for the invoices "
            "endpoint."
        ),
        "stripe_key",
    ),
    (
        "npm publish token npm_m8LCFys6wXWl1Mrl4XbJdZQe7JoC2uCv4Vgy lives on Theo's laptop.",
        "npm_token",
    ),
    (
        (
            "The .npmrc line is //registry.npmjs.org/:_authToken=npm_dVDr7ADvGgkzI3B44NV2EGju"
            "jwiNmoYZn4DP"
        ),
        "npm_token",
    ),
    (
        (
            "PyPI upload token pypi-AgEIcHlwaS5vcmctnn2g6tVPJYbX-5MMXOLwm-x5t6npOO_RO7P-YBvEz"
            "FgPhQ1dSUU0AKCOYXwbXSCDiOXALm3aSl0towRsW3PJAyuvusp4q3rQOrc was shared for the "
            "release."
        ),
        "pypi_token",
    ),
    (
        (
            "Transactional email uses SendGrid key SG.TwCE_-elr8sAUrJSiX8d7z.EAaMfIyjnoZQn59J"
            "s3VSX03VAzisEEcEY64mgwaf3J1"
        ),
        "sendgrid_key",
    ),
    ("Twilio API key SK47bda1e4b1b373d40b4490f0f2d2f34c sends the SMS reminders.", "twilio_key"),
    (
        (
            "The Twilio account SID ACd7cfae326b33b36320d729f1d9c108fe pairs with the auth "
            "token in the vault."
        ),
        "twilio_key",
    ),
    (
        "Newsletter API key 78afe185ee95acdcf79024f3b899434e-us14 (Mailchimp) from Bea.",
        "mailchimp_key",
    ),
    (
        (
            "Discord bot token Me58PVqbzIi7KbIcZomP5l_Rfy.T3IrKF.iHhc3K823ixBe21TTswCDhUi5PB "
            "runs the raid bot."
        ),
        "discord_token",
    ),
    (
        (
            "Community alerts webhook https://discord.com/api/webhooks/342861790744432606/6dq"
            "D_mL3zQmFF-ow_T3Z1dZs2qhLX3mzI92HnPtHdmV6HmKrk0Wd9qY-DdWh0kFf6kLf"
        ),
        "discord_webhook",
    ),
    (
        (
            "Telegram bot token 5011094541:8TPvTFPDFBNNPMa9GDsEukHZzrvjOXBue5B is for the "
            "on-call notifier."
        ),
        "telegram_token",
    ),
    (
        (
            "Square OAuth secret sq0csp-ZoNCL5RkijDp76bv63oybFNBLNHSIKgdb4fAjO5MoFo is in "
            "use for the POS pilot."
        ),
        "square_token",
    ),
    (
        (
            "Storage connection: DefaultEndpointsProtocol=https;AccountName=logsprod;AccountK"
            "ey=ydyrd4dD8wbCricrPkHyYbJTHXZ7Jlx9YrAdgOsCOYf08ieq0XIfByMWMcIyuDlA9vgZKbtmf38wB"
            "7nZCiqR8/==;EndpointSuffix=core.windows.net"
        ),
        "azure_storage_key",
    ),
    (
        ("Shopify admin token 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 for the storefront sync."),
        "api_key",
    ),
    (
        (
            "DigitalOcean token dop_v1_e7fc0839802a57925ebcef3f211081895fa0ea77b10e6c4572c15a"
            "0e51d78e61 manages the droplets."
        ),
        "api_key",
    ),
    (
        (
            "Linear API key lin_api_M1TyAzGBrCvK7bfE1UVAk5Bk1IGXGUGNlrAVEs9w powers the "
            "triage script."
        ),
        "api_key",
    ),
    ("Databricks PAT dapiecc97b78028c588f05f3743c1523ee01 for the notebooks.", "api_key"),
    (
        (
            "Groq key 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 is Nico's for "
            "the latency tests."
        ),
        "api_key",
    ),
    (
        (
            "Vault token hvs.wsoA9DTuAMvrZ2-SejdVFtBY4I2R9Rkhr8wlbidxJy6ZIHXnY7EjOrdWhLSc4ObO"
            "Yg5m2Zpcb0SwZfsK0v8LGeY0sP from Ana's session."
        ),
        "api_key",
    ),
    ("Mailgun key-5ec42c8cf1958c838033e4e771723313 sends the signup emails.", "api_key"),
    ("New Relic user key NRAK-CQ0JWHDYOK85KWZ6KU7EDATG2FA for dashboards.", "api_key"),
    (
        (
            "Postman API key PMAK-1898ec37940be3d483b86a47-07fb4dade3819a6677cb80f4df28373dc4"
            " from Wen."
        ),
        "api_key",
    ),
    (
        (
            "Backup encryption uses AGE-SECRET-KEY-1H27NKNRXUWQJBOQ48BVBLMQOE1XXMGAZVV0VQZRWE"
            "1O4WSBG7DKO82S1ZA"
        ),
        "api_key",
    ),
    ("Replicate token r8_ezjULn16EQ7zFgA6YP6k5TQFnPt9JXc3tsYiq for the image jobs.", "api_key"),
    (
        (
            "Doppler service token dp.st.0PGtEiBvHunrctG63KsFtqksqZ5vjqy4RC8Q14FUk54 for "
            "prod config."
        ),
        "api_key",
    ),
    (
        (
            "Hana pasted the deploy key: -----BEGIN OPENSSH PRIVATE KEY----- "
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQhlkUvNGBeu3YV4IedU7OW2vwEDdwPwrUx51UTU"
            "5uZ7F+J/T67S6+CPvI9NM0 -----END OPENSSH PRIVATE KEY-----"
        ),
        "private_key",
    ),
    (
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEANA+UjRbynhgIDnrIFAh2ehUUwFdkoid"
            "fcVGquxaXfFteaSoKR+dN5fHZt8ClOnd5\n-----END RSA PRIVATE KEY-----"
        ),
        "private_key",
    ),
    (
        (
            "Signing cert key for the mobile app: -----BEGIN PRIVATE KEY----- "
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCqY+PsRHH1crhGequvm6DeFD4jGkDUG2JateX0uolEnmcxDnB"
        ),
        "private_key",
    ),
    (
        (
            "-----BEGIN EC PRIVATE KEY----- MHcCAQEEId76NWBA32cg1xm9UcpULVNc0mnNzc5h0+7AjaKdV"
            "NjC+yoVY7r -----END EC PRIVATE KEY----- (Jon's TLS key)"
        ),
        "private_key",
    ),
    (
        (
            "Paul's release signing key block: -----BEGIN PGP PRIVATE KEY BLOCK----- "
            "lQdGBFSYpGppkQYBnd8f/LT6sVI991+LYDu+H2kmjTws1ileqLXDQ4wKot2mQF"
        ),
        "private_key",
    ),
    (
        (
            "-----BEGIN ENCRYPTED PRIVATE KEY----- MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQ"
            "wwGvu7EZTs74dXxYg9JZG08UQkCyZWbO77wmcZBXBm is the cert key Ada uploaded."
        ),
        "private_key",
    ),
    (
        (
            "Session token for the admin panel: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIi"
            "OiI2ODM0OTkzNyIsImlhdCI6MTcxNzg0MzI1M30.rb39Gw7AjSa-i-Q6I6dkSwZGrgu_W7LtbK7aUeW4"
            "AN_"
        ),
        "jwt",
    ),
    (
        (
            "Ola copies eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJvbGEiLCJyb2xlIjoiYWRt"
            "aW4ifQ.r9MjHOMQNYlAYtlNfD6DJhooWUBOTjQ6Uv_4L7r4BIP into Postman to test the "
            "gateway."
        ),
        "jwt",
    ),
    (
        (
            "Authorization: Bearer eyJhbGciOiJIUzUxMiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJzdmMtcmVwb"
            "3J0cyIsImV4cCI6MTk5OTk5OTk5OX0.umE8yVxTrrDIWZRJPZLjVNY9wHT49lxOWqdnSvTj3bP"
        ),
        "jwt",
    ),
    (
        (
            "The long-lived service JWT eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJhdXRo"
            "LmludGVybmFsIiwiYXVkIjoiYmlsbGluZyJ9.EXK8tUOz_msAQGs1UGlRyFEfRVhswi34IqPoRYDgY8-"
            " never expires."
        ),
        "jwt",
    ),
    (
        (
            "Kim's Supabase anon role token is eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlI"
            "joic2VydmljZV9yb2xlIiwiaXNzIjoic3VwYWJhc2UifQ.Ol_Z6v0X5fn5qpwjYN6bGnSCwds2lR7g8E"
            "i9rdrhgza"
        ),
        "jwt",
    ),
    ("my password is hunter2", "password_in_prose"),
    ("Mark's wifi password: Tr0ub4dor&3", "password_in_prose"),
    ("The office wifi password is BlueFalcon77", "password_in_prose"),
    ("Her PIN is 4412.", "password_in_prose"),
    ("Luis's bank PIN is 0937", "password_in_prose"),
    ("Building passcode 998877 gets you in after 7pm.", "password_in_prose"),
    ("The staging db password is s3cr3t-Stag!ng", "password_in_prose"),
    ("pw=Winter2024! for the shared admin account", "password_in_prose"),
    ("login: bob / pass: x7Hq!2", "password_in_prose"),
    ("Admin login for the router: admin / password: Netgear$91", "password_in_prose"),
    ("Password for the test tenant is 'correct horse battery staple'", "password_in_prose"),
    ("Sara said her password is sunshine", "password_in_prose"),
    ("The door code is 4729#.", "password_in_prose"),
    ("Garage code: 3318", "password_in_prose"),
    ("The alarm code is 0621, disarm within 30 seconds.", "password_in_prose"),
    ("Ben's laptop passcode is 271828", "password_in_prose"),
    ("The VPN password was changed to Q3-rollout-77", "password_in_prose"),
    ("The password for the jenkins box is Jenk1ns!Admin", "password_in_prose"),
    ("Mira uses passw0rd123 as her password everywhere, per her own message", "password_in_prose"),
    ("The shared 1Password vault's master password: Orchid-Lantern-42", "password_in_prose"),
    ("Credentials for the demo: demo@acme.test / Demo#2024", "password_in_prose"),
    ("His phone unlock PIN: 1590", "password_in_prose"),
    ("Safe combination is 12-34-56", "password_in_prose"),
    ("The wifi key for the guest network is CoffeeBeans2024", "password_in_prose"),
    ('SSH passphrase is "midnight-otter-19"', "password_in_prose"),
    ("Root password on the NAS = Zx81!spectrum", "password_in_prose"),
    ("Password: Kangaroo#88 (Tim's Jira test account)", "password_in_prose"),
    ("The verification code is 602114, Eva said to use it quickly.", "password_in_prose"),
    ("Bike lock combination 7391", "password_in_prose"),
    ("Anna's email password is Tulip2020", "password_in_prose"),
    ("Server=db01;Database=crm;User Id=app;Password=Cr4ml1ne;", "password_in_prose"),
    ("The PIN number for the corporate card is 8824", "password_in_prose"),
    ("Alicia's passcode is 310519 for the iPad kiosk", "password_in_prose"),
    ("Database password: kL9$vQ2m", "password_in_prose"),
    ("Temp password for the new hire account was set to Welcome123!", "password_in_prose"),
    (
        "Analytics DB: postgres://report_user:00HvRH4pixFaiI@db.internal:5432/analytics",
        "url_credentials",
    ),
    (
        ("Connection string mongodb+srv://app:hpgDnZdNnOyvNP2z@cluster0.abcde.mongodb.net/prod"),
        "url_credentials",
    ),
    (
        "Cache at redis://default:57THGX6RkGg10jO9nlym@cache.internal:6379/0 per Ivo.",
        "url_credentials",
    ),
    ("Queue broker amqp://guest:VX30o1jMuc@rabbit.local:5672/", "url_credentials"),
    (
        ("Clone with https://ci-bot:SmgiOSI6lW9fR53DOs9nk0uS0r25HK@git.example.com/team/app.git"),
        "url_credentials",
    ),
    ("The legacy MySQL is mysql://root:toor123@10.0.4.7/legacy", "url_credentials"),
    ("Proxy is http://proxyuser:eA5AQUcDtQ3h@proxy.corp.example:3128", "url_credentials"),
    ("FTP drop ftp://uploads:Sp1ng-4036@files.partner.example/in", "url_credentials"),
    (
        "Call the legacy API with Authorization: Basic c3ZjLWxlZ2FjeTp2cUlVekxIVjc1bUJYaQ==",
        "basic_auth",
    ),
    ("Olga's corporate Visa is 4775 6794 9397 7371 exp 09/27.", "card_number"),
    ("Team card for SaaS bills: 5295-4125-9739-9245 exp 09/27.", "card_number"),
    ("The Amex on file for travel is 3738 410035 05845 exp 09/27.", "card_number"),
    ("Discover card 6011571670499239 exp 09/27.", "card_number"),
    ("Use card 4229619741773299 exp 09/27.", "card_number"),
    ("Hiro paid with 5243 3959 9686 3387 exp 09/27.", "card_number"),
    ("Backup card number: 4043-2966-1766-7642 exp 09/27.", "card_number"),
    ("Amex 343330881980061 exp 09/27.", "card_number"),
    ("The ads account is billed to 5566 3841 5858 7918 exp 09/27.", "card_number"),
    ("Old Visa 4734007022353 exp 09/27.", "card_number"),
    ("The staging API key is pIdNjPs8WgPJIfRQiBTictGQrEd8JwWv", "high_entropy_token"),
    ("Authorization: Bearer mUnSUJ9KtdfR3bSgj321ExufcTxLcfFCZiUoiFDy", "high_entropy_token"),
    (
        "Client secret for the partner integration: naZkJCgZ2qt2q6Vgx435u_qSscGxt0G487",
        "high_entropy_token",
    ),
    (
        "mBBrXowWO8c0zN1bBt71b6JEKqRr is Ola's personal access token for the wiki.",
        "high_entropy_token",
    ),
    ("Twilio auth token is 7eebe75e9bd37c3dee2cebb5475def5d", "high_entropy_token"),
    ("The Heroku API key is 8ac98a0c-16e3-430b-a5a2-fc7e30b09f41", "high_entropy_token"),
    (
        "api_key=avzEP5Na4EO6KnoVNukvtX1zKMUFDWrf in the curl example Yusuf shared",
        "high_entropy_token",
    ),
    (
        "Cloudflare API token BUEUVxECA7EYIAuaZ8Uxzx-arABak6zxIYcbUoNe can purge the cache.",
        "high_entropy_token",
    ),
    (
        "Webhook secret for GitHub events: bfc32e54e284f299062d459e61ae147b936470a3",
        "high_entropy_token",
    ),
    ("The Datadog API key for staging is 83b24b4d6900a4214fdbf99243024b49", "high_entropy_token"),
    ("Her Notion integration token was XKR47Iif7oKUXVoZvf4lQBnAPQc1vB", "high_entropy_token"),
    ("X-API-Key: 7FPJw7lH9hQ3ciR8yjAXWVoOrNIS5hfG1KUN", "high_entropy_token"),
    (
        "Session secret in prod is wzjOqEE6Z6nODgSnYcoHTER2DfrvqvYtnM27ao2amey3",
        "high_entropy_token",
    ),
    (
        (
            "Sentry auth token 06ca45888799dffc9c5d9eda208de2f856b376d46c529e42b571d1c975c767"
            "88 lets CI upload sourcemaps."
        ),
        "high_entropy_token",
    ),
    ("Refresh token: HudZgh-yPLf7Qx5gAVG4HGgPb1CxX9r2Ljwg1itcdUB83Qna", "high_entropy_token"),
    ("The license key for the IDE is ENB77-GYL0A-PNK18-GX5LN", "high_entropy_token"),
    (
        "Algolia admin key 6c90279b99192f4b9dd35742e24f04c6 is what Mo uses for reindexing.",
        "high_entropy_token",
    ),
    (
        "OpenRouter key for the prototype is ExHPiB8mgvvtBipLqEZu7aU61cahnsdYC7GWonp1",
        "high_entropy_token",
    ),
    ("Jira API token for the sync script: jedoXo12ddwpzCkJIoxMzlwd", "high_entropy_token"),
    ("App secret for the Facebook login is 03ee007a2783562d8f384ac776fe3fca", "high_entropy_token"),
    ("Ana's SSN is 161-68-1686 for the payroll form.", "national_id"),
    ("Social security number 539-68-4916 belongs to the contractor.", "national_id"),
    ("Passport number: X86808641 (Lars, for the visa letter).", "national_id"),
    (
        (
            "Nina dropped her key in chat: sk-proj-EqV8ib8HDy88YtDtXbiufMdI8X2Y4rUmer_BH3M1XS"
            "0DRdJuPnBIKpi99lSi0tcL21pffWQJEeNajnez0LHtfROUrWW6XnI3EM3H"
        ),
        "openai_key",
    ),
    (
        (
            "claude key for the hackathon = sk-ant-api03-MRb1OcWrhQ7TTJ-chcVG6MOwUxOVHMWndqNC"
            "IEPx3mnPQC4vkRB5ICpeyOxJRkSq1LI7S1L10e0tza93Ce6KRDiKpFfezAA"
        ),
        "anthropic_key",
    ),
    (
        (
            "Kofi's IAM user key AKIA3DA6HKTPB2DHVIQ6 / secret "
            "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"
        ),
        "aws_access_key",
    ),
    ("token: ghp_xqmvBhiJaTUyYfKlcxDMPYIyOZcN4BdxOFWS", "github_token"),
    ("slack bot: xoxb-566703384916-3620558417186-QgUuKIgZLTaEjpXycHfKgQ4y", "slack_token"),
    ("gemini key AIzawdRpdo9KMleEnmhPxjExF6YGVYS1kWE0u19 (Farah's)", "google_api_key"),
    ("hugging face read token hf_jPz54jkgFVE6SH8CLU2lirWmjLGu7o2SI9", "huggingface_token"),
    ("stripe prod key sk_live_XsQT2AM2LLr4ntbrEZymlKxp - do not share", "stripe_key"),
    (
        (
            "Bearer eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1XzEyMyIsInNjb3BlIjoiYWRt"
            "aW4ifQ.P9s19A7d9jZf7DEiBGEyHrxeGvfOx2lkplHLeT5RadQ"
        ),
        "jwt",
    ),
    ("The code for the side gate is 5521.", "password_in_prose"),
    ("Her Netflix password is Pineapple99", "password_in_prose"),
    ("wifi: CafeNero / pw: espresso2024", "password_in_prose"),
    ("Locker combo is 08-15-42", "password_in_prose"),
    ("The root password is toor", "password_in_prose"),
    ("Mo's phone passcode: 424242", "password_in_prose"),
    ("pin for the printer is 1357", "password_in_prose"),
    ("The password to the shared mailbox is Spring#Rain7", "password_in_prose"),
    ("Julia set her wifi password to 'blue-otter-cookie'", "password_in_prose"),
    ("Admin password on the staging Grafana is admin123", "password_in_prose"),
    ("db url: postgresql://svc:vByFenPLV9FziIuh4r@10.2.3.4:5432/main", "url_credentials"),
    ("mongodb://admin:eQBhC4H6qgH8@mongo-0.mongo:27017/?authSource=admin", "url_credentials"),
    ("Visa 4557 4415 9881 7851, cvv 123", "card_number"),
    ("Mastercard 5304922257118254 exp 11/26", "card_number"),
    (
        (
            "The Mapbox secret token is sk.PUPMAJtPlDEtYlTegTlWJIKVzwgrryd3icEGrpSXGw4v8zCIZX"
            "ewF2hjrLgR.hKX6UhlSmKAQVz0ViLMj3z"
        ),
        "high_entropy_token",
    ),
    ("private token for the registry: ZmIHkKlm3qxYsb1ZC5A8", "high_entropy_token"),
    ("Heroku API key 8d779cfd-50e1-4f69-a215-e050d083d4ce", "high_entropy_token"),
    ("OKTA api token N_M9dyanD-w6zyBe4oKtr7lgdUDj_cRPQSrkekRAiz", "high_entropy_token"),
    ("our openai key: sk-BSWoFugYcAe2mTkzFESeI2BnPFtbDDWSzClD5cUqx2xCHxMz", "openai_key"),
    ("secret=oaZnqYxj2DImknbkLzGkObih", "high_entropy_token"),
    ("The Zapier webhook secret is MkCFld1bzCuAcTTdpzczFb694opgyEmk", "high_entropy_token"),
    (
        (
            "-----BEGIN DSA PRIVATE KEY----- QoSpgLJ7M+FIdRSOlh3landlcve9gyQz9R9SeWNYlLx0oXQZ"
            "wXTxU14D49SI"
        ),
        "private_key",
    ),
    ("gitlab token glpat-vX-ftvc7lmOEhg57QVaj for CI", "gitlab_token"),
    ("npm token: npm_mzY96gvKthCf0PnpSdj7PjLahos9no2JGAGX", "npm_token"),
    (
        "SendGrid: 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",
        "sendgrid_key",
    ),
    ("Telegram 210248807:fyAJ-3eS7zKsn4M04jAt-KWVu3N78CUKKd7", "telegram_token"),
    ("My SSN is 512-44-9812", "national_id"),
    (
        ("access key XWTP7AAI7J8BKDAN3WX9 and secret key e+xEbJ3Rgm5NHF/1HRfd2evFr0RrJcvfc+h671Vv"),
        "aws_secret_key",
    ),
    ("client_secret: Lxjrn0T46JG5KtOre0-D6IdOo-qJIn3jVe-5yNSx", "high_entropy_token"),
    ("Login for the kiosk is kiosk01, password Blu3Sky!", "password_in_prose"),
    ("Tom's password hint answer is rex, and his password is Rex2015", "password_in_prose"),
    ("The PIN for her debit card is 7781", "password_in_prose"),
    ("Kiosk admin pin: 2580", "password_in_prose"),
    ("Her iCloud password is Sunflower!88 (she said it in DM)", "password_in_prose"),
    ("password = 'Qwerty!234'", "password_in_prose"),
    ("The shared account is ops@acme.test with password Rainbow7Bridge", "password_in_prose"),
    ("wifi pass is 'lemonade'", "password_in_prose"),
    ("passcode for the meeting room screen: 5150", "password_in_prose"),
    ("The lockbox code is 1-9-7-3", "password_in_prose"),
    ("The Jira API token is EMnY9tlicZLhCUJwnHBdHIyv", "high_entropy_token"),
    ("bot token -> tsO3U9224xf2MvQyGplpErf87038J1ta6sKT4t2WGmABM", "high_entropy_token"),
    (
        "He uses sBCkotq0ZcfcDOrHIPESvjRmeA6mOOCr as the API key for the weather service",
        "high_entropy_token",
    ),
    ("signing secret: 5bda6a317873a59e01b29a0a9a4d296e", "high_entropy_token"),
    (
        (
            "Airtable PAT patsiqyM9kvKaxcDk.bb93e6d63111541f7a139d6f67edf17de7d6f61188767d84a"
            "1a3c1fc2d65a9fa"
        ),
        "api_key",
    ),
    ("amqps://worker:0AHnPZRZrv7z9Fe2@broker.internal/vhost", "url_credentials"),
    ("Card: 4430 6924 0279 7662", "card_number"),
    ("Amex 3730-320941-66388", "card_number"),
    (
        "https://hooks.slack.com/services/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",
        "slack_token",
    ),
    ("AWS keys: AKIA7ZGEHX324EMT63HK + VuwtP/RHavaNpo+9jF0LTDxagO7N44YsGURr3ksw", "aws_access_key"),
    (
        (
            "Lin's fine-grained token github_pat_s58xmKYwRN4fezP75lvPxu_lt4bMbH8W1fZwZ09gklLF"
            "QK8eW79hlPER4VoNY1Qt27Sz4Mp5FTotxoVuIO"
        ),
        "github_token",
    ),
    (
        (
            "The id_token was eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2FjY2"
            "91bnRzLmdvb2dsZS5jb20iLCJzdWIiOiI4NzY4NjU0NzY5MDQyODc4OTU2NjkifQ.dti6SNlH9C9itEi"
            "MqguYHcFumAeOkpIhKwt1qkUat0t"
        ),
        "jwt",
    ),
]

#: Notes that look technical or talk about secrets but hold none.
BENIGN_NOTES: list[str] = [
    "Prefers short replies with a code example first.",
    "Alice works in the Berlin office and is usually online from 9 to 17 CET.",
    "Wants PR summaries as bullet lists, not paragraphs.",
    "Bob maintains the billing service and reviews its migrations.",
    "Likes to be addressed as Sam, not Samuel.",
    "Is the on-call lead for the payments team this quarter.",
    "Asked to be reminded about the design review every Thursday.",
    "Prefers Python examples over TypeScript.",
    "Uses vim keybindings and dislikes screenshots of code.",
    "Their team ships on Tuesdays and freezes deploys on Fridays.",
    "Mentioned that the quarterly planning doc lives in the product wiki.",
    "Channel #ml-infra prefers threads for long discussions.",
    "Dana is the point of contact for the SOC 2 audit.",
    "Carlos prefers metric units in all reports.",
    "Kim reads the digest on mobile, so keep tables narrow.",
    "Jon is migrating the search cluster to OpenSearch 2.11.",
    "The team calls the nightly ETL 'the big sweep'.",
    "Asked the bot not to post before 8am in #general.",
    "Emma owns the onboarding checklist for new engineers.",
    "Prefers dark-mode screenshots in docs.",
    "Leo is learning Rust and likes links to the Rust book.",
    "Ravi wants weekly status in one message, not several.",
    "Mei likes emoji reactions instead of 'thanks' replies.",
    "Usually replies in Spanish when the question is in Spanish.",
    "Hugo leads the accessibility guild.",
    "Grace is on parental-leave coverage for Omar's reviews until March.",
    "Ines prefers being tagged only for blocking questions.",
    "Keeps meeting notes in Obsidian, not Google Docs.",
    "The channel runs a retro every second Friday.",
    "Theo prefers tabs over spaces and will say so at length.",
    "Password reset emails go to support, not to the on-call engineer.",
    "Rotate the API key monthly; Priya owns the reminder.",
    "The token bucket rate limiter allows 50 requests per second.",
    "My PIN code expired and I need to visit the branch.",
    "The password is required for the admin panel only.",
    "The PIN must be 6 digits long.",
    "Passwords must be at least 12 characters.",
    "The API key lives in the team vault under 'stg-openai'.",
    "Never paste secrets in Slack; use the vault share link.",
    "The staging credentials are stored in 1Password, in the Platform vault.",
    "Her password manager is Bitwarden.",
    "The password is in the vault, ask Omar for access.",
    "Wants a reminder to rotate the GitHub token before it expires on the 30th.",
    "The JWT expiry is 15 minutes and refresh tokens last 7 days.",
    "Bearer auth is required for every /v2 endpoint.",
    "The session token expires after 30 minutes of inactivity.",
    "The model has a context window of 200k tokens.",
    "Each request uses about 4k tokens of prompt.",
    "The tokenizer is tiktoken cl100k_base.",
    "Secrets are injected at deploy time from AWS Secrets Manager.",
    "The secret sauce of the ranking is recency weighting.",
    "Key takeaway from the incident: alerts need owners.",
    "The key insight was that the cache was cold after deploys.",
    "Uses SSH keys, not passwords, for the bastion.",
    "Password rotation for service accounts is quarterly.",
    "The wifi password changes every Monday; ask reception.",
    "Forgot his password twice this week and was locked out.",
    "The PIN pad at the front door is broken.",
    "2FA codes come from the Authy app on her phone.",
    "The door code changed; the new one is on the intranet page.",
    "Boarding pass: gate 12, seat 14C for the offsite flight.",
    "Credentials are rotated by the platform team, not by app teams.",
    "He asked how AWS access keys differ from IAM roles.",
    "Asked what an sk- prefix means in OpenAI keys.",
    "Thinks GitHub fine-grained tokens are better than classic PATs.",
    "The AKIA prefix marks long-term AWS access keys, she explained.",
    "Auth: SSO via Okta for all internal tools.",
    "The auth service owns the login and signup flows.",
    "Authorization headers are stripped by the proxy.",
    "The license key is in the procurement ticket, not in chat.",
    "Primary key of the events table is (tenant_id, event_id).",
    "The cache key is user:42:profile in Redis.",
    "The idempotency key header is Idempotency-Key.",
    "The passport photo must be taken against a white wall.",
    "Asked for the password policy document link.",
    "Pass the flag --dry-run first.",
    "Prefers pass-through auth for the internal proxy.",
    "The combination of React and Vue in one app confused him.",
    "Access code reviews happen in the #reviews channel.",
    "PIN the announcement in #general for a week.",
    "The fix landed in commit 8b0e7153bf7c3706d85c524e440066559a6656c9.",
    "Reverted 0bd5482 because it broke the nightly build.",
    "The bisect points at a90a29b9fa5f in the auth service.",
    "Cherry-pick f5180bc0db onto the release branch.",
    "The auth bug fix landed in c0e15637ebb8e3b91d26ab4a829a95249f512c17 last night.",
    "Incident id d3881a50-5805-4ed0-980d-c6ffbd953dc2 covers the outage on 3 May.",
    "Her test tenant id is 6bf84914-a6a5-4c99-b4a6-77c6400db00d.",
    "Ticket ea83854a-faa3-4fac-8e42-d43c2547f19c tracks the migration.",
    "The request id 7e5a3930-cd39-4158-8860-6af8a36939ef shows the timeout in the logs.",
    "Trace a644d35db41d94e5efaf89fc43c5fa52 shows the slow span.",
    "Brand colour is #ff8800 with #1a1a2e for text.",
    "Uses #0af and #c0ffee in the dashboards.",
    "Docs are at https://docs.example.com/guide/getting-started.",
    "The status page is https://status.example.io.",
    "Repo: https://github.com/acme/platform-tools",
    "Clone via git@github.com:acme/platform-tools.git",
    "Grafana lives at https://grafana.internal.example.com/d/abc123/api-latency",
    "The RSS feed is https://blog.example.org/feed.xml?format=rss&lang=en",
    "Use ssh://git@git.example.com:2222/team/app.git for the mirror.",
    "Postgres runs on postgres://db.internal:5432/analytics (no auth inside the VPC).",
    "Upgrading to v1.2.3 fixed the crash.",
    "Runs Python 3.11.7 on the build hosts.",
    "Node 20.11.1 is the minimum version.",
    "Kubernetes 1.29 upgrade is scheduled for June.",
    "The bastion is at 10.0.3.17 and the VPN gateway at 192.168.1.1.",
    "The public IP of the office is 203.0.113.42.",
    "IPv6 prefix 2001:db8:85a3::/48 is reserved for the lab.",
    "Started on 2024-03-18 and moved teams on 2024-09-02.",
    "The launch date is 14/11/2024.",
    "Standup is at 09:30 UTC.",
    "Call her on +1 415 555 0132 for urgent issues.",
    "Office phone +44 20 7946 0958.",
    "Mobile: 0176 12345678",
    "Order number 4412-9981-22 was delayed.",
    "Order #1002938475 shipped on Monday.",
    "Amazon order 112-7488851-5904584 is the replacement keyboard.",
    "Tracking number 1Z999AA10123456784.",
    "Invoice INV-2024-00123 is overdue.",
    "The epic is JIRA-1234 and the bug is OPS-77.",
    "Working on PLAT-4521 this sprint.",
    "GitHub issue #8812 is the one about flaky tests.",
    "PR 4471 adds the retry logic.",
    "The build number was 20240501.3.",
    "Deployed image registry.example.com/team/api:2024.05.01-3.",
    (
        "Image digest sha256:f89a50f8a8e9bb8bdb5eba456bf92d5d98065e5751f75143a5f61debc267"
        "b0bc is the known-good build."
    ),
    "Config is in /etc/remem/remem.toml on the hosts.",
    "Logs go to ~/Library/Logs/remem/agent.log on her Mac.",
    "The script is at scripts/release/cut_branch.py.",
    "Windows path C:\\Users\\dana\\AppData\\Local\\remem.",
    "Hostname web-01.prod.eu-west-1.example.com is the canary.",
    "The canary runs on ip-10-0-3-17.ec2.internal.",
    "S3 bucket s3://acme-data-lake-prod/raw/events/2024/05/.",
    "Object key reports/2024/q1/summary.csv holds the export.",
    "Slack channel id C04ABCD1234 is #incidents.",
    "Her Slack user id is U012AB3CD4E.",
    "The YouTube demo is dQw4w9WgXcQ.",
    "Short link id aZ3xQ9 points to the survey.",
    "Base64 id J0oVeMmLRLTq10V7suW9zr is the Firestore document for the demo.",
    "The Firestore doc Mfw05QayguK6NIjuO45K holds the feature flags.",
    ("Stripe publishable key is pk_live_51Hq2xAbCdEfGhIjKlMnOpQrStUv (it is meant to be public)."),
    "His GPG key id is 4AEE18F83AFDEB23.",
    (
        "Her SSH public key is ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIW23C/L9WXuHM/G1cON+Ks"
        "9dp4FLfrYb9JF8eF+ItKL/ dana@laptop."
    ),
    ("OAuth client id 1234567890-abc123def456.apps.googleusercontent.com is for the web app."),
    "The AWS account id is 123456789012.",
    "The ARN is arn:aws:iam::123456789012:role/ci-deployer.",
    "Region eu-central-1 is the default.",
    "Instance type m6i.2xlarge for the workers.",
    "The Kafka topic is events.v2.user-signup.",
    "Feature flag new_checkout_flow_v2 is on for 10%.",
    "Env var DATABASE_URL points at the replica in staging.",
    "Set OPENAI_API_KEY in your shell, never in the repo.",
    "MAX_TOKENS=4096 is the default in the config.",
    "Her employee number is 004512.",
    "Room 4.12 in building B.",
    "The meeting id is 845 2291 0076.",
    "Zoom passcode is shared in the calendar invite.",
    "The 6-digit code from the authenticator expires in 30 seconds.",
    "Sprint velocity averaged 42 points.",
    "Latency p99 dropped from 840ms to 310ms.",
    "The error code 503 appears when the pool is exhausted.",
    "Zip code 94110, area code 415.",
    "Temperature in the server room hit 27.5C.",
    "ISBN 978-0-13-468599-1 is the book she recommended.",
    "The DOI is 10.1145/3290605.3300233.",
    "Lottery numbers are a running joke: 4 8 15 16 23 42.",
    "His bib number at the marathon was 40217.",
    "Credit card payments are handled by Stripe, never stored by us.",
    "Last four digits of the team card are 4242.",
    "Card ending in 1881 is the backup for AWS billing.",
    "The test card 4242 4242 4242 4242 is for Stripe test mode only.",
    "Uses the Visa sandbox card numbers from the Stripe docs.",
    "Phone-like number 5555 5555 5555 5555 failed validation in the form.",
    "Timestamp 1717000000123 was the first bad event.",
    "Epoch 1700000000 is in November 2023.",
    "Counted 1234567890123 events in the lake last year.",
    "The ticket queue is at 1,204,332 items.",
    "Gift card balance lookups go through the POS team.",
    "Prefers the 'hex' theme in the terminal.",
    "The base64 encoder bug only affects padding.",
    "Wrote a blog post about Shannon entropy in passwords.",
    "Thinks 'correct horse battery staple' is a good password pattern.",
    "Asked whether passphrases beat random passwords.",
    "Keeps his dotfiles at github.com/theo/dotfiles.",
    "The ssh config alias is 'prod-bastion'.",
    "Runs make test before every push.",
    "The Dockerfile pins python:3.11-slim-bookworm.",
    "Uses pyenv to switch between 3.10 and 3.12.",
    "The regex ^[a-z0-9_-]{3,16}$ validates usernames.",
    "The cron expression is 0 3 * * 1-5.",
    "Semantic version 2.0.0-rc.1+build.5 is the release candidate.",
    "The CSP header allows scripts from cdn.example.com only.",
    "CORS allows https://app.example.com and https://admin.example.com.",
    "The Helm chart version is 0.14.2.",
    "Terraform state lives in the tf-state-prod bucket.",
    "The IBAN format check lives in payments/validators.py.",
    "Sort code checks are done by the bank partner.",
    "Her desk is next to the window on floor 3.",
    "Birthday lunch is planned for the 12th.",
    "Lives in Lisbon and visits the London office monthly.",
    "Speaks Portuguese, English and some Japanese.",
    "Is allergic to long meetings, jokingly.",
    "Drinks oat milk flat whites.",
    "Likes climbing and goes bouldering on Wednesdays.",
    "Has a dog named Pixel.",
    "Supports Benfica and will talk about it on Mondays.",
    "Plays bass in a band called The Segfaults.",
    "Is reading 'Designing Data-Intensive Applications'.",
    "Wants the bot to summarise long threads in three bullets.",
    "Asked the bot to stop suggesting emojis.",
    "Uses a Kinesis keyboard and a trackball.",
    "The keynote slides are in the shared drive.",
    "Keyboard shortcuts: Ctrl+K opens the command palette.",
    "Monkey patching the client broke the tests.",
    "The hockey team meets on Thursdays.",
    "The keystore for Android builds is handled by the mobile team.",
    "The tokens in the design system are defined in tokens.json.",
    "Design tokens for spacing are 4, 8, 12, 16 and 24.",
    "Token ring networks came up as a joke in the retro.",
    "The API gateway throttles at 1000 rps per key.",
    "The API returns 429 when the key is over quota.",
    "API key rotation runbook: https://wiki.example.com/runbooks/api-key-rotation",
    "The secret santa draw is on 1 December.",
    "Keeps a secret stash of snacks in the second drawer.",
    "The key for the bike shed is at reception.",
    "The keys to the server cage are with facilities.",
    "Their password-less login uses WebAuthn passkeys.",
    "Passkeys replaced passwords for the admin console in May.",
    "Pin the Node version to 20 in .nvmrc.",
    "The PIN reset flow sends an SMS.",
    "The passcode screen times out after 5 minutes.",
    "Her old password was leaked in a breach, so she changed it.",
    "Password complexity rules were relaxed in 2023.",
    "The password field should mask input.",
    "Credentials: ask the platform team via the access request form.",
    "Access tokens are short-lived; refresh tokens are rotated.",
    "Auth tokens are signed with RS256.",
    "The bearer token goes in the Authorization header.",
    "Secret rotation happens via the vault operator.",
    "Client secrets are never logged by the gateway.",
    "Commit f30499a90ebb4108e360ddfcfc69e290d9f945ff introduced the token refresh fix.",
    "The key commit is a4d1278 in the migration branch.",
    "Build 220ad2cf from the release branch passed QA.",
    "Session id 1f52c148-d791-4ac1-9f95-817d0c843f2b is the one with the bad trace.",
    "The api request id was 7349e455d52613c2813c40d2affbb149.",
    "Prefers Celsius and 24-hour time.",
    "Says the password policy is too strict.",
    "Keeps forgetting the VPN password and asks IT each month.",
    "The API key is revoked; Omar issued a new one in the vault.",
    "Asked to keep tokens out of the logs.",
    "Secret scanning runs in CI on every push.",
    "The key rotation script is rotate_keys.py.",
    "Deploy 2f8104fba08f6d3682da2bd8e369316bf60b7d9b is live in prod.",
    "Sentry issue 3263896cf7460650a9bcc94f15dc3e72 keeps coming back.",
    "Customer id cus_5MQ34CCY1yYeHB is the pilot account.",
    "Stripe customer cus_EtT0A8fmVRrCFU has a failed payment.",
    "Price id price_Y9lbbIhqLZxmqGCv7HqA74AN is the annual plan.",
    "Run id 79868623-9a3c-4967-8497-8d497c43799c produced the best eval.",
    "PIN codes for the lockers are handed out by facilities.",
    "Her phone number ends in 0132.",
    "Called the bank about the card, the issue is resolved.",
    "Uses passphrase-protected SSH keys.",
    "The password field has a show/hide toggle.",
    "Pass the --verbose flag when debugging.",
    "The pass rate of the test suite is 98%.",
    "Security code reviews are mandatory for the auth service.",
    "Verification code emails are sent by SES.",
    "The gate code is on the welcome sheet at reception.",
    "Token usage dashboards are in Grafana.",
    "The auth token TTL is 3600 seconds.",
    "Bearer tokens must not be cached by the CDN.",
    "ChatGPT keeps suggesting sk-learn instead of scikit-learn.",
    "Uses the scikit-learn 1.4.2 release.",
    "Node id 7f3a9c2e on the cluster is flaky.",
    'The ETag is "ff4cf9eab5c8acf590e1503bbf16480d".',
    "The blob sha is f2f73bb47a41331fe204258ef046efee8f29b9b1 in the LFS store.",
    "Sequence number 9780134685991 appeared twice in the log.",
    "The container id is 3f4e5d6c7b8a.",
    "Her GitHub handle is @dana-dev.",
    "The Jenkins job is release/api-gateway/main.",
    "Email her at dana@example.com rather than Slack.",
    "Recipe: 200g flour, 2 eggs, 300ml milk.",
    "The meeting room passcode display is broken.",
    "The combination lock arrived from the supplier.",
    "Loves crossword puzzles and the NYT spelling bee.",
    "Account number format is validated by the partner bank.",
    "His badge number is 55123.",
    "The model id is claude-3-5-sonnet-20241022.",
    "The model id is gpt-4o-2024-08-06.",
    "Release tag v2024.06.11-rc2.",
    "Kubernetes namespace team-payments-prod-eu.",
    "Rails secret_key_base is set from the environment.",
    "The Vault path is secret/data/payments/stripe.",
    "Set the OPENAI_API_KEY variable before running the evals.",
    "Secret Manager entry projects/acme/secrets/db-password/versions/3.",
    "The API key header is X-API-Key.",
    "Token: see the vault entry 'ci-bot-token'.",
    "Password: ask Omar.",
    "The password is the same as the VPN one, per Lee.",
    "The key is on the hook behind the door.",
    "Access token expiry was raised to 1 hour.",
    "The auth header was missing in the failing request.",
    "Credit card 4111 is not how we refer to customers, use the account id.",
    "Uses card numbers only via the Stripe Elements iframe.",
    "His favourite number is 4 8 15 16 23 42.",
    "Always asks for the password requirements before signing up.",
    "Password is one of the things she never shares in chat.",
    "The admin password is stored in the vault; ask Omar.",
    "The password: see the onboarding doc.",
    "Her password expired yesterday.",
    "The password was too short so the form rejected it.",
    "His PIN is the same as his birthday, he joked, without saying it.",
    "The PIN was blocked after three wrong attempts.",
    "Door codes are rotated monthly.",
    "The gate code for visitors is on the booking confirmation.",
    "The alarm code panel beeps at 7am.",
    "Pin the thread about the outage.",
    "Pinned version 3.2.1 of the SDK.",
    "The pins on the map show all office locations.",
    "Uses PIN-based login on her Windows laptop.",
    "The token is valid for 24 hours.",
    "The token was revoked after the leak.",
    "API keys for partners are issued via the portal.",
    "Our API key format is prefix plus 32 characters.",
    "The secret is to preheat the oven.",
    "Keys: the team uses Ed25519 keys everywhere.",
    "The key is to keep PRs small.",
    "Credentials: managed by Okta.",
    "Bearer of bad news this week was the CFO.",
    "Auth: the login page uses WebAuthn.",
    "Token budget for the summariser is 2000 tokens.",
    "Commit a4c123b1612dd272d1371c17149d439536b3216f removed the hard-coded secret.",
    "The key commit daeeb975729fae923d5a4fd12aabfe228f219e9c changed the schema.",
    "Card 4242 is the Stripe test card everyone uses.",
    "The phone number 020 7946 0958 is the reception desk.",
    "Bank holiday on 27 May, no deploys.",
    "The pass mark for the certification is 70%.",
    "Season pass: Tim has one for the ski trip.",
    "Passport renewals take 6 weeks this year.",
    "The security code review checklist is in the wiki.",
    "The backup code sheet is printed and kept in the safe.",
    "Recovery codes were regenerated after the device loss.",
    "One-time codes arrive by SMS.",
    "Verification codes expire after 10 minutes.",
    "Uses the code word 'pineapple' to mean the build is green.",
    "The combination of Rust and WASM is her favourite stack.",
    "Says 'hunter2' as a joke about old IRC logs.",
    "The password is not the problem; the 2FA app is.",
    "The password is long and random, generated by 1Password.",
    "Private key handling is documented in SECURITY.md.",
    "BEGIN and END markers confuse the YAML parser.",
    "The JWT library is PyJWT 2.8.0.",
    "Uses the eyJ prefix to spot JWTs in logs.",
    "The sk- prefix shows up in the OpenAI docs.",
    "AIza is the prefix of Google API keys.",
    "Connection string format is postgres://user:****@host:5432/db in the runbook.",
    "The template reads postgres://<user>:<password>@<host>/<db>.",
    "DATABASE_URL=postgres://app:${DB_PASSWORD}@db.internal/app is set by the chart.",
    "Says 'Authorization: Basic' headers are banned on the new gateway.",
]

#: Inferred notes on sensitive topics, with the expected category.
SENSITIVE_NOTES: list[tuple[str, str]] = [
    ("Seems to have been diagnosed with ADHD recently.", "health"),
    ("Is probably on antidepressants; mentioned feeling flat since starting them.", "health"),
    ("Is pregnant and due in October.", "health"),
    ("Sees a therapist on Tuesday afternoons.", "health"),
    ("Appears to struggle with anxiety before big demos.", "health"),
    ("Likely has diabetes; always checks insulin before lunch.", "health"),
    ("Was hospitalized last week after a fall.", "health"),
    ("Takes medication that makes mornings hard.", "health"),
    ("Is recovering from burnout and working reduced hours.", "health"),
    ("Had surgery on her knee in spring.", "health"),
    ("Might be dealing with depression, judging by recent messages.", "health"),
    ("Gets migraines and avoids bright screens.", "health"),
    ("Is autistic and prefers written instructions.", "health"),
    ("Is a recovering alcoholic, so avoid suggesting pub socials.", "health"),
    ("Is allergic to penicillin.", "health"),
    ("Has been off sick for two weeks with long covid.", "health"),
    ("Is going through IVF this year.", "health"),
    ("Mentioned mental health struggles during the reorg.", "health"),
    ("Earns about $140k a year.", "finances"),
    ("Is in debt after the house purchase.", "finances"),
    ("Seems to be struggling to pay the mortgage.", "finances"),
    ("His salary is below the band for his level.", "finances"),
    ("Has a bad credit score and was refused a loan.", "finances"),
    ("Can't afford the conference ticket this year.", "finances"),
    ("Her bank balance is low until payday.", "finances"),
    ("Is having financial difficulties since the layoff.", "finances"),
    ("Has student loans he is still paying off.", "finances"),
    ("Went bankrupt with his previous startup.", "finances"),
    ("Is gay and came out to the team last year.", "sexuality"),
    ("Appears to be bisexual.", "sexuality"),
    ("Is probably transgender, based on the name change.", "sexuality"),
    ("Identifies as non-binary.", "sexuality"),
    ("Is in a same-sex relationship.", "sexuality"),
    ("Talked about their sexual orientation in the DM.", "sexuality"),
    ("Is a devout Muslim and fasts during Ramadan.", "religion"),
    ("Goes to church every Sunday morning.", "religion"),
    ("Is Jewish and does not work on Shabbat.", "religion"),
    ("Is an atheist and dislikes religious holiday messages.", "religion"),
    ("Is a practicing Catholic.", "religion"),
    ("Only eats halal food at team lunches.", "religion"),
    ("Takes prayer breaks during the afternoon.", "religion"),
    ("Votes Labour.", "politics"),
    ("Is a registered Republican.", "politics"),
    ("Seems to hold left-wing political views.", "politics"),
    ("Is a member of the Green Party.", "politics"),
    ("Campaigned for the Democrats in the midterms.", "politics"),
    ("Strongly supports Trump.", "politics"),
    ("Is politically conservative.", "politics"),
    ("Her husband is cheating on her.", "others_private"),
    ("Is going through his divorce this spring.", "others_private"),
    ("Her brother was arrested last month.", "others_private"),
    ("His mother passed away in January.", "others_private"),
    ("Their sister is in rehab.", "others_private"),
    ("Dana's wife was diagnosed with cancer.", "others_private"),
    ("Got fired from the previous job for misconduct.", "others_private"),
    ("Is in a custody battle over the kids.", "others_private"),
    ("His partner has a gambling debt.", "others_private"),
    ("Broke up with her boyfriend last week.", "others_private"),
    ("Her son is being sued by a former landlord.", "others_private"),
    ("Has been seeing a psychiatrist since spring.", "health"),
    ("Is on chemo, so may be slow to reply.", "health"),
    ("Suffers from chronic pain in her back.", "health"),
    ("Is probably bipolar.", "health"),
    ("Owes about $20k on credit cards.", "finances"),
    ("Was laid off in March and is job hunting.", "finances"),
    ("Makes $95k and thinks it's unfair.", "finances"),
    ("Is a lesbian.", "sexuality"),
    ("Is Hindu and celebrates Diwali with family.", "religion"),
    ("Is a born-again Christian.", "religion"),
    ("Voted Leave in the referendum.", "politics"),
    ("Is a socialist.", "politics"),
    ("Her dad is in prison.", "others_private"),
    ("His wife is having an affair with a coworker.", "others_private"),
    ("Is separated from his wife.", "others_private"),
]

#: Ordinary notes, including near-misses for the sensitive rules.
NON_SENSITIVE_NOTES: list[str] = [
    "Prefers short replies.",
    "Works on the finance team's dashboard.",
    "Owns the health-check endpoint for the API.",
    "Runs the weekly tech debt cleanup.",
    "Paid down a lot of technical debt in the auth service.",
    "The new release came out on Tuesday.",
    "Converted the docs to Markdown.",
    "Disabled notifications for #random.",
    "The alert fired twice overnight.",
    "Organises the team party in December.",
    "Christian prefers meetings before noon.",
    "Prefers conservative estimates for deadlines.",
    "Makes liberal use of emoji.",
    "Is the budget owner for the cloud bill.",
    "Reviews the cost breakdown every month.",
    "Cares about service health dashboards.",
    "Wrote the incident post-mortem for the database outage.",
    "Gave a talk on memory leaks in Node.",
    "Triages issues labelled 'bug' and 'needs-repro'.",
    "Wants the bot to mention the ticket number in replies.",
    "Leads the payments squad.",
    "Asked for a summary of the salary-band spreadsheet format, not its contents.",
    "Maintains the banking integration for the invoicing feature.",
    "The loan calculator feature is owned by the lending team.",
    "Likes the Church of Emacs jokes.",
    "Prefers the Republic of Ireland office for offsites.",
    "Uses the Greens colour palette in charts.",
    "Voted for the blue logo in the design poll.",
    "Attends the Thursday architecture forum.",
    "Runs the pre-commit hooks locally.",
    "Is the party responsible for the vendor contract.",
    "Is a big fan of the Democratic process in RFC reviews.",
    "Mentioned the cost savings from the reserved instances.",
    "The service broke after the deploy, he fixed it.",
    "Broke the build twice this week and fixed it quickly.",
    "The process died after the OOM kill.",
    "The container was killed and restarted by Kubernetes.",
    "Let the old cron job go after the migration.",
    "Inherits from BaseModel in all schema classes.",
    "Pinned the dependency after the regression.",
    "Recovering the cluster took two hours.",
    "The team is expecting a baby sloth mascot sticker order.",
    "Prefers a light theme.",
    "Is based in Toronto.",
    "Speaks French and German.",
    "Keeps a running doc of onboarding questions.",
    "Prefers async standups.",
    "Wants code review comments to be direct.",
    "Runs the ML reading group.",
    "Uses Linux on the desktop.",
    "Travels to the Singapore office quarterly.",
    "Often works late on Wednesdays.",
    "Likes cycling to work.",
    "Is the release captain this month.",
    "Has a cat named Kernel.",
    "Has two kids and leaves at 5pm for pickup.",
    "Her husband also works in fintech.",
    "Is getting married in June and will take two weeks off.",
    "Gave the keynote at the internal tech summit.",
    "Prefers the wiki over Google Docs.",
    "The patient-records feature is behind a flag.",
    "Works on the clinic scheduling app.",
    "Wrote the data-retention policy for the HR tool.",
    "Thinks the new logo is a disaster.",
    "Asked to be reminded about the dentist appointment reminder feature launch.",
    "Is training for a marathon.",
    "Plays chess online at lunch.",
    "Is the team's go-to person for regex questions.",
    "Loves spicy food.",
    "Said the demo gave him a heart attack, jokingly, when it crashed.",
    "Prefers to work from home on Fridays.",
    "Is the payroll system's tech lead.",
    "Reviews the HR tool's access model.",
    "Likes tennis.",
    "Built the healthcare claims parser.",
    "Fixed the memory leak in the worker.",
    "Mentors two junior engineers.",
    "Manages the incident rota.",
    "The pipeline died after the disk filled.",
    "The deploy broke staging for an hour.",
    "Has a strong opinion on monorepos.",
    "Is vegetarian.",
    "Wants notes in plain English.",
    "The Python process was killed by the OOM killer.",
    "Runs the sprint planning.",
]
