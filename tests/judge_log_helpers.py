"""A small judge-log episode on the mock domain, read by the transcript and judge tests.

A plain module on pytest's pythonpath (not a conftest), imported by a name no other test
folder shares.
"""

from hasbench.trace import Trace, TraceHeader


def sample_trace() -> Trace:
    """A locked account: a reply, two identical questions, a control request, a finish."""
    header = TraceHeader(
        scenario_id="mock_A_001",
        scenario_hash="0" * 16,
        domain="mock",
        pattern="A",
        setting={},
        backends={},
        seed=0,
        package_version="0",
        participants={"agent": "agent", "user": "human"},
    )
    t = Trace(header=header)
    t.append(
        step=0,
        actor="user",
        type="message",
        target="agent",
        payload={"text": "My account is locked."},
    )
    t.append(
        step=1,
        actor="agent",
        type="message",
        target="user",
        payload={"text": "I can help with the locked account."},
    )
    t.append(
        step=2,
        actor="agent",
        type="channel_request",
        target="user",
        channel="clarification",
        initiator="agent",
        payload={"request_id": "q1", "form": "question", "content": "Which account?"},
    )
    t.append(
        step=2,
        actor="user",
        type="channel_response",
        target="agent",
        channel="clarification",
        payload={"request_id": "q1", "form": "question", "content": "A101"},
    )
    t.append(
        step=3,
        actor="agent",
        type="channel_request",
        target="user",
        channel="clarification",
        initiator="agent",
        payload={"request_id": "q2", "form": "question", "content": "Which account?"},
    )
    t.append(
        step=3,
        actor="user",
        type="channel_response",
        target="agent",
        channel="clarification",
        payload={"request_id": "q2", "form": "question", "content": "A101"},
    )
    t.append(
        step=4,
        actor="agent",
        type="channel_request",
        target="user",
        channel="control",
        initiator="agent",
        payload={
            "request_id": "k1",
            "form": "approval",
            "content": "May I read the note?",
            "action": {"name": "get_record", "arguments": {"account_id": "A101"}},
        },
    )
    t.append(
        step=5,
        actor="agent",
        type="finish",
        payload={"deliverable": "Your account is active again."},
    )
    return t
