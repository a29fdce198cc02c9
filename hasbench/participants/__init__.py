"""Participants: agents, simulated humans and judges (LLM-backed and scripted policies).

``base`` defines observations, actions and the policy interfaces; ``backends`` the
registry of backends by name and the factories ``make_agents``, ``make_user`` and
``make_judge``; ``agents`` the LLM agent; ``users`` the LLM user simulator; ``scripted``
the deterministic reference policies; ``standin`` the honest offline stand-ins and
``playbooks`` their domain playbooks; ``human`` a real person in a human's seat;
``judges`` the judge interface, with the rule judge in ``judges.rule`` and the LLM rubric
judge in ``judges.llm``.
"""
