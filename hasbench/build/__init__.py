"""Task construction: shared builder helpers, per-domain task generators and importers."""

TASK_GENERATORS: dict[str, str] = {
    "retail": "hasbench.build.retail_tasks",
    "airline": "hasbench.build.airline_tasks",
    "telecom": "hasbench.build.telecom_tasks",
    "coding": "hasbench.build.coding_tasks",
}
"""Domain -> module with ``write(path=OUTPUT, seed=SEED) -> Path`` (its seeded generator)."""
