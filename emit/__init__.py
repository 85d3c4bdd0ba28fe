"""The emitter: rewritten AST -> a readable, deterministic module of builder code.

(Arrives with the front end.)
"""
