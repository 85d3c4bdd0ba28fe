"""Analyses: they annotate nodes (`transpiler.anno`) and never rewrite."""
