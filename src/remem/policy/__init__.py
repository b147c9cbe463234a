"""Policy: authorization (:mod:`~remem.policy.authz`), the policy layers, review, write
policy and the credential screens. Internal: users meet it through :class:`remem.Memory`
and ``remem.toml``.
"""
