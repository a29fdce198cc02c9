"""Task construction: shared builder helpers, per-domain task generators and importers."""
