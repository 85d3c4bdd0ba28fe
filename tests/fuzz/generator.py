"""Random small PSC programs, as Python source text, driven by a stream of choices.

The generator never runs the program it writes; it *types* each expression by evaluating
it with NumPy on dummy values of the variables' types (``np.ones`` of the argument's shape
and dtype), which keeps programs well-formed without a type system of its own: an
expression NumPy rejects is drawn again.  It uses that typing to stay inside what PSC
promises (README "What a PSC function may do" / "Control flow"):

* a variable assigned inside a traced ``if`` or a loop body keeps its type (shape, dtype,
  Python number or array) — PSC documents a change there as an error;
* a variable first assigned in a branch or loop body is not used after it, unless every
  branch of an ``if``/``else`` assigns it with one type;
* every ``return`` of a function gives one type;
* in-place operators only touch arrays the function created itself (never an argument or
  a view of one: modifying an argument in place is refused, and aliasing is not modelled);
* ``while`` loops count their trips against a constant bound, so every program ends.

Data are small integer-valued floats and ints and every traced comparison is against a
threshold ``n + 0.25``, which no sum, mean or extremum of such data can equal, so a
comparison cannot flip with float rounding.

Choices come from a `Chooser`: `DrawChooser` (hypothesis ``draw``: programs shrink) or
`RandomChooser` (a seeded ``random.Random``).  Every choice is an integer whose smallest
value is the simplest program, so hypothesis shrinks towards fewer statements, plainer
expressions and fewer features.
"""
from __future__ import annotations

import copy
import dataclasses
import hashlib
import warnings

import numpy as np

# The construct families the issue names; each has its own test.
EXITS = "exits"                    # (a) break/continue/return in loops over containers
EARLY_RETURN = "early_return"      # (b) return under a traced if, then a traced if/else
INPLACE = "inplace"                # (c) t = np.ones(3); t *= x
UFUNC_STAGED = "ufunc_staged"      # (d) np.add(...) & co. inside staged branches / loops
BYTEORDER = "byteorder"            # (e) arguments in non-native byte order
FAMILIES = (EXITS, EARLY_RETURN, INPLACE, UFUNC_STAGED, BYTEORDER)

FLOAT_CONSTS = ("1.0", "2.0", "0.5", "-1.0", "1.5", "3.0")
INT_CONSTS = ("1", "2", "3", "-1")
UNARY = ("np.abs", "np.negative", "np.square", "np.sin", "np.cos", "np.tanh", "np.floor")
BINARY_UFUNCS = ("np.add", "np.multiply", "np.subtract", "np.maximum", "np.minimum")
OPERATORS = ("+", "-", "*")
REDUCTIONS = (".sum()", ".max()", ".min()", ".mean()")
ARG_DTYPES = ("float64", "float32", "int64", "int32")
MAX_SIZE = 12


# --- choices ---------------------------------------------------------------------------------

class Chooser:
    """The source of every decision; ``integer`` is the only primitive."""

    def integer(self, lo: int, hi: int) -> int:
        raise NotImplementedError

    def choice(self, options):
        return options[self.integer(0, len(options) - 1)]

    def chance(self, p: float) -> bool:
        """True with probability ``p``; the smallest choice (0) is False."""
        return self.integer(0, 99) >= 100 - round(100 * p)


class RandomChooser(Chooser):
    def __init__(self, rng):
        self.rng = rng

    def integer(self, lo, hi):
        return self.rng.randint(lo, hi)


class DrawChooser(Chooser):
    """Choices drawn by hypothesis inside ``@st.composite``: programs shrink."""

    def __init__(self, draw):
        from hypothesis import strategies as st
        self._st = st
        self.draw = draw

    def integer(self, lo, hi):
        return self.draw(self._st.integers(lo, hi))


# --- programs --------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Arg:
    """One argument of one call: a NumPy array (dtype string with its byte order) or a
    Python number."""

    kind: str                 # "array", "float" or "int"
    values: tuple
    dtype: str = ""
    shape: tuple = ()

    def make(self):
        if self.kind == "float":
            return float(self.values[0])
        if self.kind == "int":
            return int(self.values[0])
        return np.array(self.values, dtype=np.dtype(self.dtype)).reshape(self.shape)

    def text(self) -> str:
        if self.kind != "array":
            return repr(self.make())
        return (f"np.array({list(self.values)!r}, dtype={self.dtype!r})"
                f".reshape({self.shape!r})")


@dataclasses.dataclass(frozen=True)
class Program:
    source: str                       # a whole module: imports and one function
    name: str                         # the function's name, unique per source
    calls: tuple                      # tuple of argument tuples (of `Arg`)
    families: frozenset               # which construct families it holds

    def repro(self) -> str:
        """A self-contained reproducer: the module, then the calls to compare."""
        lines = [self.source.rstrip(), "", "", "calls = ["]
        for call in self.calls:
            lines.append("    (" + "".join(a.text() + ", " for a in call) + "),")
        lines.append("]")
        lines.append(f"# for args in calls: compare {self.name}(*args) with "
                     f"jit_ps({self.name})(*args)")
        return "\n".join(lines) + "\n"


# --- typing by evaluation --------------------------------------------------------------------

def type_of(value):
    """The PSC-relevant type of a value: Python float/int, or (shape, dtype)."""
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        return (array.shape, array.dtype.newbyteorder("="))
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, tuple):
        return tuple(type_of(v) for v in value)
    return type(value).__name__


def usable(value) -> bool:
    """Values a program may hold in a variable: numbers and small float/int arrays."""
    t = type_of(value)
    if t in ("int", "float"):
        return True
    if not isinstance(t, tuple) or len(t) != 2 or not isinstance(t[0], tuple):
        return False
    shape, dtype = t
    return dtype.name in ARG_DTYPES and len(shape) <= 2 and int(np.prod(shape)) <= MAX_SIZE


def dummy(value):
    if isinstance(value, (np.ndarray, np.generic)):
        return np.ones(np.shape(value), dtype=np.asarray(value).dtype.newbyteorder("="))
    return value


def evaluate(text: str, scope: dict):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return eval(text, {"np": np}, {n: copy.copy(v.value) for n, v in scope.items()})


def execute(text: str, scope: dict, name: str):
    env = {n: copy.copy(v.value) for n, v in scope.items()}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(text, {"np": np}, env)
    return env[name]


def constant_of(t) -> str:
    """Source text of a constant of type ``t`` (the fallback when no drawn expression has
    the type a return or branch needs)."""
    if t == "float":
        return "0.5"
    if t == "int":
        return "1"
    shape, dtype = t
    return f"np.full({shape!r}, 1, dtype=np.{dtype.name})"


@dataclasses.dataclass
class Var:
    value: object        # a dummy of the variable's type
    fresh: bool = False  # an array this function created: in-place operators allowed
    arg: bool = False
    counter: bool = False   # a while loop's trip counter: never assigned but by += 1
    alias: bool = False     # may be an argument (PSC refuses ``+=`` on one, README)


@dataclasses.dataclass(frozen=True)
class Ctx:
    depth: int = 0
    in_loop: bool = False
    staged: bool = False          # inside a traced if or a loop body: types are carried
    force_ufunc: bool = False     # family (d): assignments here call a binary ufunc
    loop_index: str | None = None
    container_loop: bool = False  # the innermost loop is over a list/tuple (unrolled)


# --- the generator ---------------------------------------------------------------------------

class ProgramGenerator:
    def __init__(self, chooser: Chooser, focus: str | None = None, disabled=()):
        self.ch = chooser
        self.focus = focus
        self.disabled = set(disabled)
        self.counter = 0
        self.ret_type = None
        self.families = set()

    def enabled(self, family):
        return family not in self.disabled

    def fresh_name(self, prefix="v"):
        self.counter += 1
        return f"{prefix}{self.counter}"

    # --- arguments -----------------------------------------------------------------------

    def arguments(self):
        n_arrays = self.ch.integer(1, 3)
        specs = []
        for _ in range(n_arrays):
            dtype = self.ch.choice(ARG_DTYPES) if self.ch.chance(0.4) else "float64"
            shape = self.ch.choice(((3,), (2, 3), (3,), (), (4,), (1,), (2, 1), (1, 3), (3, 2)))
            specs.append(("array", dtype, shape))
        if self.ch.chance(0.4):
            specs.append((self.ch.choice(("float", "int")), "", ()))
        swap = set()
        byteorder = self.focus == BYTEORDER or (self.enabled(BYTEORDER) and self.ch.chance(0.1))
        if byteorder:
            arrays = [i for i, s in enumerate(specs) if s[0] == "array"]
            swap = {arrays[self.ch.integer(0, len(arrays) - 1)]}
            if len(arrays) > 1 and self.ch.chance(0.5):
                swap = set(arrays)
            self.families.add(BYTEORDER)
        swapped_first = not self.ch.chance(0.5)
        calls = []
        for k in range(2):
            call = []
            for i, (kind, dtype, shape) in enumerate(specs):
                size = int(np.prod(shape)) if kind == "array" else 1
                values = tuple(self.ch.integer(-3, 3) for _ in range(size))
                if kind == "array":
                    code = np.dtype(dtype).newbyteorder("=").str
                    if i in swap and (k == 0) == swapped_first:
                        code = np.dtype(dtype).newbyteorder("S").str
                    if dtype.startswith("float"):
                        values = tuple(float(v) for v in values)
                    call.append(Arg("array", values, code, shape))
                elif kind == "float":
                    call.append(Arg("float", (float(values[0]),)))
                else:
                    call.append(Arg("int", values))
            calls.append(tuple(call))
        names = [f"a{i}" if s[0] == "array" else "s" for i, s in enumerate(specs)]
        scope = {n: Var(dummy(a.make()), arg=True) for n, a in zip(names, calls[0])}
        return names, scope, tuple(calls)

    # --- expressions ---------------------------------------------------------------------

    def leaf(self, scope, ctx):
        names = list(scope)
        if names and not self.ch.chance(0.25):
            return self.ch.choice(names)
        return self.ch.choice(FLOAT_CONSTS + INT_CONSTS)

    def expr_text(self, scope, ctx, depth):
        if depth <= 0:
            return self.leaf(scope, ctx)
        kind = self.ch.integer(0, 9)
        sub = lambda: self.expr_text(scope, ctx, depth - 1)   # noqa: E731
        if kind == 0:
            return self.leaf(scope, ctx)
        if kind in (1, 2):
            return f"({sub()} {self.ch.choice(OPERATORS)} {sub()})"
        if kind == 3:
            return f"{self.ch.choice(UNARY)}({sub()})"
        if kind == 4:
            ufuncs = BINARY_UFUNCS
            if ctx.staged and not self.enabled(UFUNC_STAGED):
                ufuncs = tuple(u for u in ufuncs if u != "np.add")   # the known refusal
            return f"{self.ch.choice(ufuncs)}({sub()}, {sub()})"
        if kind == 5:
            return f"({sub()} / (np.abs({sub()}) + 1.0))"
        if kind == 6:
            return f"np.where({sub()} > {self.threshold()}, {sub()}, {sub()})"
        if kind == 7:
            return self.reduction(sub())
        if kind == 8:
            return self.index(scope, ctx)
        return f"{sub()}.astype(np.{self.ch.choice(ARG_DTYPES)})"

    def reduction(self, operand):
        form = self.ch.integer(0, 5)
        if form < 4:
            return f"({operand}){REDUCTIONS[form]}"
        if form == 4:
            return f"np.{self.ch.choice(('sum', 'max', 'mean'))}({operand}, axis=0)"
        return f"np.{self.ch.choice(('sum', 'max', 'min'))}({operand})"

    def index(self, scope, ctx):
        arrays = [n for n, v in scope.items() if np.ndim(v.value) >= 1]
        if not arrays:
            return self.leaf(scope, ctx)
        name = self.ch.choice(arrays)
        n = np.shape(scope[name].value)[0]
        form = self.ch.integer(0, 4)
        if form == 0:
            return f"{name}[{self.ch.integer(-n, n - 1)}]"
        if form == 1:
            return f"{name}[1:]" if n > 1 else f"{name}[:1]"
        if form == 2 and ctx.loop_index is not None:
            return f"{name}[{ctx.loop_index} % {n}]"
        vectors = [m for m, v in scope.items() if np.ndim(v.value) == 1
                   and np.shape(v.value)[0] == n]
        if form == 3 and vectors:
            return f"{name}[np.argmax({self.ch.choice(vectors)})]"
        return f"{name}[::-1]"

    def expr(self, scope, ctx, want=None, depth=None, prefer=None, tries=8):
        """(text, dummy value) of an expression over ``scope``; of type ``want`` if given
        (falling back to a constant of that type)."""
        for attempt in range(tries):
            d = self.ch.integer(0, 3) if depth is None else depth
            text = self.expr_text(scope, ctx, d)
            if ctx.force_ufunc or (prefer is not None and attempt < tries // 2):
                # start from the wanted variable so that a type-preserving form is likely
                base = prefer if prefer is not None else self.leaf(scope, ctx)
                if ctx.force_ufunc and self.enabled(UFUNC_STAGED):
                    text = f"{self.ch.choice(BINARY_UFUNCS)}({base}, {text})"
                    self.families.add(UFUNC_STAGED)
                else:
                    text = f"({base} {self.ch.choice(OPERATORS)} {text})"
            try:
                value = evaluate(text, scope)
            except Exception:
                continue
            if not usable(value):
                continue
            if want is None or type_of(value) == want:
                return text, dummy(value)
        if want is None:
            return "1.0", 1.0
        return constant_of(want), dummy(evaluate(constant_of(want), {}))

    def threshold(self):
        return f"{self.ch.integer(-3, 2)}.25"

    def condition(self, scope, ctx):
        """A traced comparison of a reduction against ``n + 0.25`` (sometimes combined)."""
        def one():
            names = list(scope)
            operand = self.ch.choice(names) if names else "1.0"
            if self.ch.chance(0.4):   # (a test inside a staged construct is staged too)
                operand, _ = self.expr(scope, Ctx(staged=ctx.staged or ctx.depth > 0),
                                       depth=1)
            if np.ndim(evaluate(operand, scope)) > 0 or self.ch.chance(0.3):
                operand = f"np.{self.ch.choice(('sum', 'max', 'min', 'mean'))}({operand})"
            return f"{operand} {self.ch.choice(('>', '<'))} {self.threshold()}"
        form = self.ch.integer(0, 5)
        if form == 4:
            return f"{one()} {self.ch.choice(('and', 'or'))} {one()}"
        if form == 5:
            return f"not {one()}"
        return one()

    # --- statements ----------------------------------------------------------------------

    def block(self, scope, ctx, n):
        """``n`` statements; returns (lines, ends_with_exit)."""
        lines = []
        for _ in range(n):
            new, exits = self.statement(scope, ctx)
            lines += new
            if exits:
                return lines, True
        return lines, False

    def statement(self, scope, ctx):
        kinds = ["assign", "assign", "reassign", "augassign", "setitem"]
        if ctx.depth < 2:
            kinds += ["if", "for_range", "while", "for_container"]
            if self.enabled(INPLACE):
                kinds.append("inplace_static")
        if ctx.in_loop and (self.enabled(EXITS) or not ctx.container_loop):
            kinds += ["exit", "exit"]
        if ctx.depth < 2 and self.enabled(EARLY_RETURN) and self.ch.chance(0.1):
            kinds.append("return_if")
        kind = self.ch.choice(kinds)
        return getattr(self, "stmt_" + kind)(scope, ctx)

    def assign_value(self, scope, ctx, name, want=None):
        prefer = name if name in scope else None
        return self.expr(scope, ctx, want=want, prefer=prefer)

    def stmt_assign(self, scope, ctx):
        name = self.fresh_name()
        text, value = self.expr(scope, ctx)
        line = self.bind(scope, name, text, value)
        # a new array (not a name, not a view made by indexing): in place is safe
        scope[name].fresh = not text.isidentifier() and "[" not in text
        return [line], False

    def stmt_reassign(self, scope, ctx):
        if not scope:
            return self.stmt_assign(scope, ctx)
        names = [n for n in scope if not scope[n].counter]
        if not names:
            return self.stmt_assign(scope, ctx)
        name = self.ch.choice(names)
        want = type_of(scope[name].value) if ctx.staged else None
        text, value = self.assign_value(scope, ctx, name, want)
        return [self.bind(scope, name, text, value)], False

    def inplace_targets(self, scope):
        """Variables an augmented assignment may touch: arrays this function created, and
        numbers (which are rebound)."""
        return [n for n, v in scope.items() if not v.counter and not v.alias and (
            v.fresh or (not v.arg and not isinstance(v.value, np.ndarray)))]

    def stmt_augassign(self, scope, ctx):
        targets = self.inplace_targets(scope)
        if not targets:
            return self.stmt_assign(scope, ctx)
        name = self.ch.choice(targets)
        return self.augmented(scope, ctx, name)

    def augmented(self, scope, ctx, name, tries=6):
        want = type_of(scope[name].value)
        if isinstance(scope[name].value, np.ndarray) and not self.enabled(INPLACE):
            return [], False
        for _ in range(tries):
            op = self.ch.choice(("*=", "+=", "-="))
            text, _ = self.expr(scope, ctx)
            stmt = f"{name} {op} {text}"
            try:
                value = execute(stmt, scope, name)
            except Exception:
                continue
            if usable(value) and (not ctx.staged or type_of(value) == want):
                if isinstance(scope[name].value, np.ndarray) and self.enabled(INPLACE):
                    self.families.add(INPLACE)
                scope[name] = dataclasses.replace(scope[name], value=dummy(value))
                return [stmt], False
        return [], False

    def stmt_setitem(self, scope, ctx):
        targets = [n for n, v in scope.items() if v.fresh and np.ndim(v.value) >= 1]
        if not targets:
            return self.stmt_assign(scope, ctx)
        name = self.ch.choice(targets)
        n = np.shape(scope[name].value)[0]
        index = str(self.ch.integer(-n, n - 1))
        if ctx.loop_index is not None and self.ch.chance(0.4):
            index = f"{ctx.loop_index} % {n}"
        op = self.ch.choice(("=", "+=", "*="))
        for _ in range(4):
            text, _ = self.expr(scope, ctx)
            stmt = f"{name}[{index}] {op} {text}"
            try:
                value = execute(stmt, scope, name)
            except Exception:
                continue
            if type_of(value) == type_of(scope[name].value):
                return [stmt], False
        return [], False

    def stmt_inplace_static(self, scope, ctx):
        """(c): a static array made here, then updated in place with traced values."""
        name = self.fresh_name("t")
        maker = self.ch.choice(("np.ones(3)", "np.zeros(3)", "np.ones((2, 3))",
                                "np.full(3, 2.0)", "np.arange(3.0)",
                                "np.ones(3, dtype=np.float32)", "np.ones(3, dtype=np.int64)"))
        scope[name] = Var(dummy(evaluate(maker, {})), fresh=True)
        lines = [f"{name} = {maker}"]
        self.families.add(INPLACE)
        # Only where every path reaches it: after a traced ``return`` NumPy may not get
        # here, while PSC builds (and refuses) the statement on both paths.
        if ctx.depth == 0 and self.ret_type is None and self.ch.chance(0.15):
            failing = self.failing_augmented(scope, ctx, name)
            if failing:
                return lines + [failing], True
        for _ in range(self.ch.integer(1, 2)):
            lines += self.augmented(scope, ctx, name)[0]
        return lines, False

    def failing_augmented(self, scope, ctx, name):
        """An in-place operator NumPy refuses (a cast it may not do, or a result that does
        not fit the target's shape): PSC must raise too.  The function ends there."""
        for _ in range(8):
            text, _ = self.expr(scope, ctx)
            stmt = f"{name} {self.ch.choice(('*=', '+=', '-='))} {text}"
            try:
                execute(stmt, scope, name)
            except (TypeError, ValueError):
                return stmt
        return None

    def stmt_if(self, scope, ctx, force_ufunc=False, require_new=False):
        """A traced if/elif/else; every branch assigns the same targets with one type."""
        inner = dataclasses.replace(ctx, depth=ctx.depth + 1, staged=True,
                                    force_ufunc=ctx.force_ufunc or force_ufunc)
        n_tests = self.ch.integer(1, 3)
        has_else = require_new or n_tests > 1 or self.ch.chance(0.5)
        existing = [n for n in scope if not scope[n].counter
                    and (not scope[n].arg or self.ch.chance(0.3))]
        targets = []
        if existing and self.ch.chance(0.6):
            targets.append(self.ch.choice(existing))
        new = None
        if has_else and (require_new or not targets or self.ch.chance(0.5)):
            new = self.fresh_name()
        types = {t: type_of(scope[t].value) for t in targets}
        heads = ([f"if {self.condition(scope, ctx)}:"]
                 + [f"elif {self.condition(scope, ctx)}:" for _ in range(n_tests - 1)]
                 + (["else:"] if has_else else []))
        lines, new_value, new_alias = [], None, False
        for head in heads:
            branch_scope = dict(scope)
            body, _ = self.block(branch_scope, inner, self.ch.integer(0, 1))
            for t in targets:
                text, _ = self.assign_value(branch_scope, inner, t, types[t])
                body.append(self.bind(branch_scope, t, text))
            if new is not None:
                want = None if new_value is None else type_of(new_value)
                text, value = self.expr(branch_scope, inner, want=want)
                new_value = value if new_value is None else new_value
                body.append(self.bind(branch_scope, new, text, value))
                new_alias = new_alias or branch_scope[new].alias
            self.merge_fresh(scope, branch_scope)
            lines.append(head)
            lines += indent(body or ["pass"])
        if new is not None:
            scope[new] = Var(new_value, alias=new_alias)
        return lines, False

    @staticmethod
    def merge_fresh(scope, inner):
        """After a block: a variable is fresh only if it is on every path (aliasing)."""
        for name, var in scope.items():
            if name in inner and not inner[name].fresh:
                var.fresh = False
            if name in inner and inner[name].alias:
                var.alias = True

    def bind(self, scope, name, text, value=None):
        """``name = text``; a bare name makes both variables aliases (never in place)."""
        alias = False
        if text.isidentifier() and text in scope:
            scope[text].fresh = False
            alias = scope[text].arg or scope[text].alias
        old = scope.get(name)
        if value is None:
            value = scope[name].value
        scope[name] = Var(value, fresh=False, arg=bool(old and old.arg),
                          alias=alias or bool(old and old.alias))
        return f"{name} = {text}"

    def stmt_for_range(self, scope, ctx):
        index = self.fresh_name("i")
        inner = dataclasses.replace(ctx, depth=ctx.depth + 1, staged=True, in_loop=True,
                                    loop_index=index, container_loop=False)
        body_scope = dict(scope)
        body_scope[index] = Var(0)
        before_body = dict(body_scope)
        body, _ = self.block(body_scope, inner, self.ch.integer(1, 3))
        self.carry_updates(scope, before_body, inner, body)
        self.merge_fresh(scope, body_scope)
        return [f"for {index} in range({self.ch.integer(1, 4)}):"] + indent(body or ["pass"]), False

    def carry_updates(self, scope, body_scope, inner, body):
        """Usually make the body update an outer variable first (so the loop is staged and
        carries state), keeping its type; ``body_scope`` is the scope at the body's start."""
        outer = [n for n in scope if not scope[n].arg and not scope[n].counter]
        if outer and (body == ["pass"] or not body or self.ch.chance(0.7)):
            name = self.ch.choice(outer)
            text, value = self.assign_value(body_scope, inner, name, type_of(scope[name].value))
            if scope[name].fresh and (text.isidentifier() or "[" in text):
                # the body was drawn with ``name`` fresh (in place allowed): keep it so
                text = f"({name} - 1)"
            body.insert(0, f"{name} = {text}")
            if body[1:] == ["pass"]:
                del body[1:]

    def stmt_while(self, scope, ctx):
        counter = self.fresh_name("w")
        inner = dataclasses.replace(ctx, depth=ctx.depth + 1, staged=True, in_loop=True,
                                    container_loop=False)
        scope[counter] = Var(0, counter=True)
        body_scope = dict(scope)
        before_body = dict(body_scope)
        body, _ = self.block(body_scope, inner, self.ch.integer(1, 3))
        self.carry_updates(scope, before_body, inner, body)
        self.merge_fresh(scope, body_scope)
        test = f"{counter} < {self.ch.integer(1, 4)} and ({self.condition(scope, ctx)})"
        return ([f"{counter} = 0", f"while {test}:"]
                + indent([f"{counter} += 1"] + [b for b in body if b != "pass"])), False

    def iterable(self, scope):
        """(header text, {loop variable: dummy}) of a loop over a static container, or over
        the rows of an array argument."""
        form = self.ch.integer(0, 6)
        c, k = self.fresh_name("c"), self.fresh_name("k")
        n = self.ch.integer(1, 4)
        floats = [self.ch.choice(FLOAT_CONSTS) for _ in range(n)]
        if form == 0:
            return f"for {c} in [{', '.join(floats)}]:", {c: 1.0}
        if form == 1:
            return f"for {c} in ({', '.join(floats)},):", {c: 1.0}
        if form == 2:
            return f"for {k}, {c} in enumerate([{', '.join(floats)}]):", {c: 1.0, k: 0}
        if form == 3:
            ints = [self.ch.choice(INT_CONSTS) for _ in range(n)]
            return (f"for {c}, {k} in zip([{', '.join(floats)}], [{', '.join(ints)}]):",
                    {c: 1.0, k: 1})
        arrays = [m for m, v in scope.items() if v.arg and isinstance(v.value, np.ndarray)]
        if not arrays:
            return f"for {c} in [{', '.join(floats)}]:", {c: 1.0}
        first = self.ch.choice(arrays)
        same = [m for m in arrays if type_of(scope[m].value) == type_of(scope[first].value)]
        members = [self.ch.choice(same) for _ in range(n)]
        if form == 4:
            return f"for {c} in ({', '.join(members)},):", {c: scope[first].value}
        if form == 6:
            # a traced array walked along its leading axis (a staged loop over its rows)
            rows = [m for m in arrays if np.ndim(scope[m].value) >= 1]
            if rows:
                walked = self.ch.choice(rows)
                return f"for {c} in {walked}:", {c: dummy(scope[walked].value[0])}
        return (f"for {k}, {c} in enumerate([{', '.join(members)}]):",
                {c: scope[first].value, k: 0})

    def stmt_for_container(self, scope, ctx, force_exit=False):
        """(a): a loop over a list/tuple/enumerate/zip, often with a traced exit, which is
        the body's last statement about half of the time."""
        header, loop_vars = self.iterable(scope)
        inner = dataclasses.replace(ctx, depth=ctx.depth + 1, staged=True, in_loop=True,
                                    container_loop=True)
        body_scope = dict(scope)
        for name, value in loop_vars.items():
            body_scope[name] = Var(value, alias=isinstance(value, np.ndarray))
        before_body = dict(body_scope)
        body, exits = self.block(body_scope, inner, self.ch.integer(0, 2))
        self.carry_updates(scope, before_body, inner, body)
        body = [b for b in body if b != "pass"]
        if (force_exit or self.ch.chance(0.5)) and self.enabled(EXITS) and not exits:
            body += self.exit_if(body_scope, inner)
            if self.ch.chance(0.5):     # something after the exit, else it is last
                body += self.block(body_scope, inner, 1)[0]
        self.merge_fresh(scope, body_scope)
        if self.ch.chance(0.3):
            scope.update({n: Var(v) for n, v in loop_vars.items() if n.startswith("c")
                          and not isinstance(v, np.ndarray)})
        return [header] + indent(body or ["pass"]), False

    def exit_if(self, scope, ctx):
        """``if cond: break|continue|return``, sometimes with work before the exit or an
        else branch."""
        kind = self.ch.choice(("break", "continue", "return"))
        exit_line = [kind] if kind != "return" else [self.return_stmt(scope, ctx)]
        before = []
        if self.ch.chance(0.3):
            before = self.block(dict(scope), dataclasses.replace(ctx, depth=2), 1)[0]
        lines = [f"if {self.condition(scope, ctx)}:"] + indent(before + exit_line)
        if self.ch.chance(0.2):
            other = self.block(dict(scope), dataclasses.replace(ctx, depth=2), 1)[0]
            lines += ["else:"] + indent(other or ["pass"])
        self.families.add(EXITS)
        return lines

    def stmt_exit(self, scope, ctx):
        kinds = ("break", "continue", "return") if self.enabled(EARLY_RETURN) else (
            "break", "continue")
        kind = self.ch.choice(kinds)
        line = kind if kind != "return" else self.return_stmt(scope, ctx)
        return [f"if {self.condition(scope, ctx)}:"] + indent([line]), False

    def stmt_return_if(self, scope, ctx):
        return [f"if {self.condition(scope, ctx)}:"] + indent([self.return_stmt(scope, ctx)]), False

    def return_stmt(self, scope, ctx, prefer=None):
        """``return ...`` of the function's one return type (fixed by the first return)."""
        if self.ret_type is None:
            n = 2 if self.ch.chance(0.2) else 1
            parts = [self.expr(scope, ctx, prefer=prefer) for _ in range(n)]
            self.ret_type = tuple(type_of(v) for _, v in parts)
        else:
            parts = [self.expr(scope, ctx, want=t, prefer=prefer) for t in self.ret_type]
        texts = [t for t, _ in parts]
        return "return " + (texts[0] if len(texts) == 1 else "(" + ", ".join(texts) + ")")

    def early_return(self, scope, ctx):
        """(b): an early return under a traced if, then a traced if/else that assigns a
        variable the rest of the function uses."""
        before = dict(scope)
        branch, _ = self.stmt_if(scope, ctx, require_new=True)
        self.families.add(EARLY_RETURN)
        ret = self.return_stmt(before, ctx)
        head = [f"if {self.condition(before, ctx)}:"] + indent(
            self.block(dict(before), dataclasses.replace(ctx, depth=2), self.ch.integer(0, 1))[0]
            + [ret])
        return head + branch

    # --- the whole program ---------------------------------------------------------------

    def focus_construct(self, scope, ctx):
        if self.focus == EXITS:
            return self.stmt_for_container(scope, ctx, force_exit=True)[0]
        if self.focus == EARLY_RETURN:
            return self.early_return(scope, ctx)
        if self.focus == INPLACE:
            return self.stmt_inplace_static(scope, ctx)[0]
        if self.focus == UFUNC_STAGED:
            lines = []
            while not any(isinstance(v.value, np.ndarray) and not v.arg
                          for v in scope.values()) and len(lines) < 3:
                lines += self.stmt_assign(scope, ctx)[0]   # something for the ufuncs to update
            return lines + self.ufunc_construct(scope, ctx)
        return []

    def ufunc_construct(self, scope, ctx):
        """(d): a traced if or a loop whose assignments call binary ufuncs."""
        if self.ch.chance(0.5):
            return self.stmt_if(scope, ctx, force_ufunc=True)[0]
        loop = self.ch.choice((self.stmt_for_range, self.stmt_while, self.stmt_for_container))
        return loop(scope, dataclasses.replace(ctx, force_ufunc=True))[0]

    def program(self) -> Program:
        names, scope, calls = self.arguments()
        ctx = Ctx()
        n_first = self.ch.integer(0, 3) if self.focus else self.ch.integer(1, 5)
        body, exits = self.block(scope, ctx, n_first)
        if not exits and self.focus not in (None, BYTEORDER):
            body += self.focus_construct(scope, ctx)
            more, exits = self.block(scope, ctx, self.ch.integer(0, 2))
            body += more
        if not exits:
            body.append(self.final_return(scope, ctx))
        text = "\n".join("    " + line for line in body)
        digest = hashlib.sha1((",".join(names) + text).encode()).hexdigest()[:12]
        name = f"fuzz_{digest}"
        source = f"import numpy as np\n\n\ndef {name}({', '.join(names)}):\n{text}\n"
        return Program(source, name, calls, frozenset(self.families))

    def final_return(self, scope, ctx):
        """The last statement: return recent work (built on the newest local variable)."""
        locals_ = [n for n in scope if not scope[n].arg]
        newest = locals_[-1] if locals_ else None
        if self.ret_type is None and newest is not None and self.ch.chance(0.5):
            self.ret_type = (type_of(scope[newest].value),)
            return f"return {newest}"
        return self.return_stmt(scope, ctx, prefer=newest)


def indent(lines):
    return ["    " + line for line in lines]


def generate(chooser: Chooser, focus: str | None = None, disabled=()) -> Program:
    return ProgramGenerator(chooser, focus, disabled).program()
