"""Pattern templates, one module per source family.

Every module here is imported by :func:`hasbench.build.adaptation.load_templates` and
registers its templates with :func:`hasbench.build.adaptation.template`.
"""
