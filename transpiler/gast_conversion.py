"""Parsing into gast, faster: the stdlib parser, then a direct conversion to gast nodes.

`gast.parse` converts the stdlib tree with an `ast.NodeTransformer` that builds each gast
node through keyword arguments and its Python ``__init__``; for the functions the
decorator transpiles, that conversion costs several times the parse itself.  `to_gast`
builds the same tree (the same node classes, fields, positions, and new context objects
per node) by filling each new node's ``__dict__`` from the stdlib node's, with gast's own
special cases: ``Name`` gains ``annotation`` and ``type_comment``; an ``arg`` becomes a
``Name`` in a ``Param`` context; an ``except E as name`` handler's name becomes a ``Name``;
``FunctionDef``, ``AsyncFunctionDef`` and ``ClassDef`` gain empty ``type_params``.

Those are gast 0.7's rules for Python 3.8 to 3.11 (tests/test_gast_conversion.py
compares the trees with `gast.ast_to_gast`'s over many files); on other versions `to_gast`
is `gast.ast_to_gast`.
"""
from __future__ import annotations

import ast
import sys

import gast

_AST = ast.AST
FAST = (3, 8) <= sys.version_info[:2] < (3, 12)
_LOCATION = ("lineno", "col_offset", "end_lineno", "end_col_offset")
_LINES = frozenset({"lineno", "end_lineno"})


def parse(text: str) -> gast.Module:
    """``gast.parse(text)``."""
    return to_gast(ast.parse(text))


def to_gast(node: ast.AST, line_offset: int = 0):
    """``gast.ast_to_gast(node)``, with ``line_offset`` taken from every line number (a
    function parsed with its whole file, numbered as if parsed from its own text)."""
    if FAST:
        return _convert(node, line_offset)
    converted = gast.ast_to_gast(node)
    if line_offset:
        gast.increment_lineno(converted, -line_offset)
    return converted


def _new(cls, fields: dict):
    node = cls.__new__(cls)   # no gast __init__: the fields go straight into the dict
    node.__dict__.update(fields)
    return node


def _value(value, offset):
    if isinstance(value, _AST):
        return _convert(value, offset)
    if isinstance(value, list):
        return [_convert(item, offset) if isinstance(item, _AST) else item for item in value]
    return value


def _generic_converter(node_class, target):
    """The conversion of ``node_class``'s nodes to ``target``'s, as gast's generic one
    makes them: the fields the node has, converted, and its positions."""
    names = node_class._fields
    positions = node_class._attributes
    if not names and not positions:   # contexts, operators: a new, empty node
        return lambda node, offset: target.__new__(target)

    def convert(node, offset):
        source = node.__dict__
        new = target.__new__(target)
        fields = new.__dict__
        for field in names:
            if field in source:
                value = source[field]
                if isinstance(value, _AST):
                    value = _convert(value, offset)
                elif value.__class__ is list:
                    value = [_convert(item, offset) if isinstance(item, _AST) else item
                             for item in value]
                fields[field] = value
        for attribute in positions:
            if attribute in source:
                value = source[attribute]
                if offset and attribute in _LINES and value is not None:
                    value -= offset
                fields[attribute] = value
        return new
    return convert


def _located(new, node, offset):
    """`ast.copy_location` from ``node`` onto ``new`` (less ``offset`` lines)."""
    source = node.__dict__
    for attribute in _LOCATION:
        value = source.get(attribute)
        if value is not None or (attribute in source and attribute.startswith("end_")):
            if offset and value is not None and attribute in _LINES:
                value -= offset
            new.__dict__[attribute] = value
    return new


def _name(node, offset):
    return _located(_new(gast.Name, {"id": node.id, "ctx": _convert(node.ctx, offset),
                                     "annotation": None, "type_comment": None}), node, offset)


def _arg(node, offset):
    return _located(_new(gast.Name, {"id": node.arg, "ctx": gast.Param(),
                                     "annotation": _value(node.annotation, offset),
                                     "type_comment": _value(node.type_comment, offset)}),
                    node, offset)


def _except_handler(node, offset):
    if not node.name:
        return _unnamed_handler(node, offset)
    name = gast.Name(node.name, gast.Store(), None, None)
    return _located(_new(gast.ExceptHandler, {"type": _value(node.type, offset),
                                              "name": name,
                                              "body": _value(node.body, offset)}),
                    node, offset)


def _with_type_params(target, names):
    def convert(node, offset):
        fields = {field: _value(getattr(node, field), offset) for field in names}
        fields["type_params"] = []
        return _located(_new(target, fields), node, offset)
    return convert


_unnamed_handler = _generic_converter(ast.ExceptHandler, gast.ExceptHandler)
_FUNCTION_FIELDS = ("name", "args", "body", "decorator_list", "returns", "type_comment")
_SPECIAL = {
    ast.Name: _name,
    ast.arg: _arg,
    ast.ExceptHandler: _except_handler,
    ast.FunctionDef: _with_type_params(gast.FunctionDef, _FUNCTION_FIELDS),
    ast.AsyncFunctionDef: _with_type_params(gast.AsyncFunctionDef, _FUNCTION_FIELDS),
    ast.ClassDef: _with_type_params(gast.ClassDef, ("name", "bases", "keywords", "body",
                                                    "decorator_list")),
}
_CONVERTERS: dict = {}   # stdlib node class -> function making its gast node (or None)


def _converter(cls):
    special = _SPECIAL.get(cls)
    if special is None:
        target = getattr(gast, cls.__name__, None)
        # not a gast node class: gast's conversion drops it (None)
        special = _dropped if target is None else _generic_converter(cls, target)
    _CONVERTERS[cls] = special
    return special


def _dropped(node, offset):
    return None


def _convert(node, offset):
    converter = _CONVERTERS.get(node.__class__)
    if converter is None:
        converter = _converter(node.__class__)
    return converter(node, offset)
