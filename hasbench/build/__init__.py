"""Task construction: shared builder helpers, per-domain task generators and importers.

Each domain names its seeded generator in its registration
(:attr:`hasbench.registry.Domain.generator`).
"""
