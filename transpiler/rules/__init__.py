"""Rewrite rules, one concern per module, each a ``gast.NodeTransformer``.

`PIPELINE` is the one ordered list of rules the front end runs; each entry carries a
comment saying why it must come where it does.  (The rules arrive with the front end.)
"""
PIPELINE: list = []
