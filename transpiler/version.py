"""The transpiler's version: part of every generated module's header and content hash."""
__version__ = "0.1.0"
