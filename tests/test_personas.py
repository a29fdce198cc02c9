import pytest

from hasbench.personas import (
    CHANNEL_DIMENSIONS,
    DEFAULT_PERSONA,
    DIMENSIONS,
    PersonaError,
    domain_personas,
    get_persona,
    load_personas,
)

DOMAINS = ("retail", "airline", "telecom", "coding", "research", "bargaining", "mock")


def test_three_personas_per_domain_with_every_dimension():
    personas = load_personas()
    for domain in DOMAINS:
        entries = domain_personas(domain)
        assert len(entries) == 3, domain
        for persona in entries:
            assert persona.persona_id.startswith(domain)
            assert set(persona.dimensions()) == set(DIMENSIONS)
        # the three personas of a domain really differ in style
        assert len({tuple(p.dimensions().values()) for p in entries}) == 3
    assert set(DOMAINS) <= set(personas)


def test_channels_use_the_dimensions_of_the_paper():
    assert CHANNEL_DIMENSIONS["clarification"] == ("patience", "cooperativeness")
    assert set(CHANNEL_DIMENSIONS["feedback"]) == {"patience", "cooperativeness", "assertiveness"}
    assert set(CHANNEL_DIMENSIONS["control"]) == {
        "risk_tolerance", "assertiveness", "cooperativeness",
    }  # fmt: skip
    persona = get_persona("mock_cautious")
    assert set(persona.dimensions("control")) == set(CHANNEL_DIMENSIONS["control"])
    control_text = persona.describe("control")
    assert "refuse consequential actions" in control_text  # low risk tolerance
    assert "refuse consequential" not in persona.describe("clarification")


def test_lookup_and_errors(tmp_path):
    assert get_persona(None) is DEFAULT_PERSONA
    assert get_persona("telecom_tinkerer").risk_tolerance == 0.9
    with pytest.raises(PersonaError, match="no persona named 'nobody'"):
        get_persona("nobody")
    bad = tmp_path / "personas.yaml"
    bad.write_text(
        "retail:\n  - persona_id: x\n    name: X\n    description: d\n"
        "    patience: 2\n    cooperativeness: 0.5\n    assertiveness: 0.5\n"
        "    risk_tolerance: 0.5\n"
    )
    with pytest.raises(PersonaError, match=r"retail\[0\]\.patience"):
        load_personas(bad)
