"""Participants: agents, simulated humans and judges (LLM-backed and scripted policies).

``base`` defines observations, actions and the policy interfaces; ``agents`` the LLM
agent and the agent factory; ``users`` the LLM user simulator and the user factory;
``scripted`` the deterministic reference policies; ``judges`` the rule and LLM judges.
"""
