"""_jit.py: @cfx.jit, a plain Python function translated into cfx and compiled per signature.

    @cfx.jit
    def count_up(x, limit):
        s = 0
        i = 0
        while s < limit:
            s += x[i % len(x)]
            i += 1
        return s, i

    count_up(np.array([1.0, 2.0], np.float32), 10.0)    # compiled for (f32[2], f32), cached

How it works. The function's source (inspect) is parsed with Python's `ast` module, and for each
signature (the dtype and shape of every array argument, the kind of every Python scalar) it is
written out as the text of a cfx graph: the same statements with braces, its parameters typed by
the signature, numpy's and PyTorch's names mapped to cfx's built-in ops (the table in
docs/jit.md). The text is compiled with cfx.compile, and the compiled graph is kept for the
signature; a call with a signature seen before costs a dict lookup and the graph's call.

Types are not inferred here: cfx's own checker knows them. Three things a Python function leaves
open are settled by compiling probes and reading what the compiler says:
- the result types: a probe graph assigns each `return`'s value to a variable of its own, and
  the compiled graph's slots (Graph.dump()) give each one's dtype and shape. A return of a bare
  literal takes the others' dtype; returns of one shape and several dtypes are cast to the one
  they promote to, as numpy would return either;
- a variable that Python rebinds to another dtype (`s = 0`, then `s += x[i]` with x of floats):
  cfx refuses `'s' has type i32[] and cannot be assigned f32[]`; the translation then gives s the
  dtype both promote to and casts every assignment of s to it. Likewise an element written into
  an array of another dtype (`y[i] = v`, numpy casts silently) is cast to the array's dtype;
- the argument types of a call of another @cfx.jit function or of a nested `def`: a probe cut
  just before the call reads them, and the callee is translated for them (as a graph of the
  same file; a nested def's free variables become extra parameters).
A type that changes shape, or anything else cfx refuses, is a JitError at the user's own line.

Python scalars are typed as cfx's literals are: int is i32 (i64 beyond its range), float f32
(PyTorch's default real, the dtype numpy 2 keeps for a Python float beside an f32 array), bool
bool; pass np.float64(x) for an f64 scalar. An argument that is None is no input: the parameter
is None in the body, and `x is None` folds.
"""
import ast
import builtins
import inspect
import math
import re
import sys
import textwrap

from ._core import CompileError, compile as _compile

__all__ = ["jit", "JitError", "JitFunction"]


class JitError(CompileError):
    """@cfx.jit could not translate or compile a function. str() is `FILE:LINE:COL: error:
    MESSAGE` at the user's own line, with that line and a caret; .diagnostics as CompileError's;
    .construct names what was refused ("" for an error of cfx's checker)."""

    def __init__(self, text, construct=""):
        super().__init__(text)
        self.construct = construct


# ---- types ---------------------------------------------------------------------------------

_DT_NAMES = {"float32": "f32", "float64": "f64", "int32": "i32", "int64": "i64", "bool": "bool",
             "bool_": "bool", "float": "f32", "double": "f64", "int": "i32", "long": "i64",
             "f32": "f32", "f64": "f64", "i32": "i32", "i64": "i64"}
_ORDER = {"bool": 0, "i32": 1, "i64": 2, "f32": 3, "f64": 4}


def _promote(a, b):
    if a == b:
        return a
    if {a, b} == {"i64", "f32"}:
        return "f32" # PyTorch's rule, which cfx follows
    return a if _ORDER[a] > _ORDER[b] else b


def _type_text(dt, shape):
    return dt if not shape else "%s[%s]" % (dt, ", ".join(str(d) for d in shape))


_TYPE_RE = re.compile(r"^(f32|f64|i32|i64|bool)(?:\[([^\]]*)\])?$")


def _parse_type(text):
    m = _TYPE_RE.match(text.strip())
    if not m:
        return None
    dims = m.group(2)
    shape = tuple(int(d) for d in dims.split(",")) if dims and dims.strip() else ()
    return m.group(1), shape


_KNOWN_DTYPES = {} # a framework's dtype object -> cfx's dtype, filled as arguments come


def _arg_kind(v):
    """The signature entry of one argument: ("f32", (2, 3)) for an array, ("f32", ()) for a
    scalar, None for None. TypeError for anything cfx cannot take."""
    t = type(v)
    if t is bool:
        return ("bool", ())
    if t is int:
        return ("i32", ()) if -2 ** 31 <= v < 2 ** 31 else ("i64", ())
    if t is float:
        return ("f32", ())
    if v is None:
        return None
    dtype = getattr(v, "dtype", None)
    if dtype is not None:
        try:
            dt = _KNOWN_DTYPES.get(dtype)
        except TypeError:
            dt = None
        if dt is not None:
            shape = v.shape
            return (dt, shape if type(shape) is tuple else tuple(int(d) for d in shape))
    shape = getattr(v, "shape", None)
    if dtype is not None and shape is not None:
        name = getattr(dtype, "name", None) or str(dtype).rsplit(".", 1)[-1]
        dt = _DT_NAMES.get(name)
        if dt is None or name in ("float", "double", "int", "long"):
            dt = {"float32": "f32", "float64": "f64", "int32": "i32", "int64": "i64",
                  "bool": "bool"}.get(str(dtype).rsplit(".", 1)[-1])
        if dt is None:
            raise TypeError("cfx.jit: an argument of dtype %s: cfx has f32, f64, i32, i64 and bool"
                            % (dtype,))
        try:
            _KNOWN_DTYPES[dtype] = dt
        except TypeError:
            pass
        return (dt, tuple(int(d) for d in shape))
    if isinstance(v, (list, tuple)):
        raise TypeError("cfx.jit: a Python %s argument: pass an array (np.asarray(...))"
                        % t.__name__)
    raise TypeError("cfx.jit: cannot take an argument of type %s" % t.__name__)


# ---- what the translation maps -------------------------------------------------------------

_KEYWORDS = set("graph if elif else while for in range switch case default break continue "
                "return true false and or not is None pass f32 f64 i32 i64 bool inf nan "
                "list".split())
_OPS = set("neg abs relu exp log sqrt tanh sigmoid sin cos tan erf floor ceil round sign add sub "
           "mul div floordiv mod truncdiv fmod min max pow lt le gt ge eq ne sum mean argmax "
           "argmin all any dot norm matmul transpose zeros ones full iota copy cast float int "
           "where len reshape stack enumerate zip print assert permute swapaxes concat concatenate "
           "round_f16 round_bf16 round_f8e4m3fn round_f8e4m3fnuz round_f8e5m2 round_f8e5m2fnuz round_f4e2m1 "
           "round_f8e8m0 atan asin acos asinh acosh atanh atan2 invert bitwise_and bitwise_or "
           "bitwise_xor left_shift right_shift".split())
_RESERVED = _KEYWORDS | _OPS

_UNARY = {"sqrt": "sqrt", "exp": "exp", "log": "log", "tanh": "tanh", "sin": "sin",
          "cos": "cos", "tan": "tan", "abs": "abs", "absolute": "abs", "fabs": "abs",
          "floor": "floor", "ceil": "ceil", "sign": "sign", "erf": "erf", "relu": "relu",
          "sigmoid": "sigmoid", "round": "round", "around": "round", "rint": "round",
          "negative": "neg", "arctan": "atan", "atan": "atan", "arcsin": "asin", "asin": "asin",
          "arccos": "acos", "acos": "acos", "arcsinh": "asinh", "asinh": "asinh", "arccosh": "acosh",
          "acosh": "acosh", "arctanh": "atanh", "atanh": "atanh"}
_REDUCE = {"sum": "sum", "mean": "mean", "max": "max", "amax": "max", "min": "min",
           "amin": "min", "argmax": "argmax", "argmin": "argmin", "any": "any", "all": "all"}
_CASTS = {"float32": "f32", "float64": "f64", "int32": "i32", "int64": "i64", "bool_": "bool",
          "bool": "bool", "float": "f32", "double": "f64", "long": "i64", "int": "i32",
          "float_": "f64", "int_": "i64"}
_TORCH_CASTS = {"float": "f32", "double": "f64", "int": "i32", "long": "i64", "bool": "bool"}
_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
           ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|",
           ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}
# numpy's and PyTorch's names of the bitwise operators
_BITWISE = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^", "left_shift": "<<",
            "right_shift": ">>", "bitwise_left_shift": "<<", "bitwise_right_shift": ">>"}
_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}

# refusals of whole statements: construct, what to write instead
_REFUSED_STMTS = {
    ast.Try: ("try/except", "test the condition with if, or stop the run with assert cond, \"message\""),
    ast.With: ("with", "write the statements without it"),
    ast.ClassDef: ("class", "write a function, with the object's fields as its arguments"),
    ast.Global: ("global", "pass the value in as an argument and out as a result"),
    ast.Nonlocal: ("nonlocal", "pass the value in as an argument and out as a result"),
    ast.Delete: ("del", "let the variable go out of use"),
    ast.Import: ("import inside the function", "import at module level"),
    ast.ImportFrom: ("import inside the function", "import at module level"),
    ast.AsyncFunctionDef: ("async def", "write a plain def"),
    ast.AsyncFor: ("async for", "write a plain for"),
    ast.AsyncWith: ("async with", "write the statements without it"),
}
if hasattr(ast, "TryStar"):
    _REFUSED_STMTS[ast.TryStar] = _REFUSED_STMTS[ast.Try]
if hasattr(ast, "Match"):
    _REFUSED_STMTS[ast.Match] = ("match", "write if/elif/else")

_REFUSED_EXPRS = {
    ast.Dict: ("a dict", "use one variable per key, or an array indexed by an integer"),
    ast.DictComp: ("a dict comprehension", "use one variable per key, or an array indexed by an integer"),
    ast.Set: ("a set", "use an array and any(xs == v)"),
    ast.SetComp: ("a set comprehension", "use an array and any(xs == v)"),
    ast.JoinedStr: ("an f-string", "print a value with a label: print(\"label\", x)"),
    ast.Starred: ("*unpacking", "unpack a fixed number of values (a, b = t), or index them"),
    ast.Yield: ("yield", "append to a list and return stack(...) of it"),
    ast.YieldFrom: ("yield from", "append to a list"),
    ast.Await: ("await", "call it outside the jitted function"),
    ast.NamedExpr: ("the walrus operator :=", "assign on a line of its own"),
    ast.GeneratorExp: ("a generator expression", "write a list comprehension [...] (sum(x) of an array, or a loop)"),
}


class _Refuse(Exception):
    def __init__(self, node, construct, instead):
        super().__init__(construct)
        self.node = node
        self.construct = construct
        self.instead = instead


class _Stop(Exception):
    """The probe that ends at a call: emission ends here."""


def _literal(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        if not -2 ** 63 <= v < 2 ** 63:
            return None
        return str(v) if v >= 0 else "(%d)" % v
    if isinstance(v, float):
        if v != v:
            return "nan"
        if v in (math.inf, -math.inf):
            return "inf" if v > 0 else "(-inf)"
        r = repr(v)
        return r if v >= 0 else "(%s)" % r
    return None


def _const_value(v):
    """A cfx literal (or tuple of them) for a module-level constant, or None."""
    try:
        import numpy as np
        if isinstance(v, np.generic) and v.shape == ():
            v = v.item()
    except ImportError:
        pass
    if isinstance(v, (bool, int, float)):
        return _literal(v)
    if isinstance(v, tuple) and v and all(isinstance(i, (bool, int, float)) for i in v):
        items = [_literal(i) for i in v]
        if None in items:
            return None
        return "(%s,)" % items[0] if len(items) == 1 else "(%s)" % ", ".join(items)
    return None


# ---- one function as the translation sees it ----------------------------------------------------

class _Unit:
    """A function to translate: its def node, where it was written, and what its names mean
    (globals, closure cells). A nested def is a unit too, with the enclosing function's locals
    it reads as extra parameters."""

    def __init__(self, node, name, filename, lines, line0, col0, env, pyfunc=None, free=()):
        self.node = node
        self.name = name
        self.filename = filename
        self.lines = lines     # the source lines as written, for messages
        self.line0 = line0     # add to an AST line to get the file's line
        self.col0 = col0       # add to an AST column (the indent dedent removed)
        self.env = env         # name -> value, for names the function does not assign
        self.pyfunc = pyfunc
        self.free = list(free) # enclosing locals a nested def reads, passed as parameters
        self.params = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
        self.cache = {}        # key -> (graph name, text, callees' texts, result types, graph)
        self.nested = {}       # name -> _Unit of nested defs

    def position(self, node):
        line = getattr(node, "lineno", self.node.lineno)
        col = getattr(node, "col_offset", 0)
        return line + self.line0, col + self.col0

    def message(self, node, text):
        line, col = self.position(node)
        k = line - 1 - self.line0
        src = self.lines[k] if 0 <= k < len(self.lines) else ""
        src = src.rstrip("\n")
        return "%s:%d:%d: error: %s\n  %s\n  %s^\n" % (self.filename, line, col + 1, text, src,
                                                       " " * col)


def _unit_of(fn):
    """The _Unit of a Python function (its source, parsed)."""
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise JitError("cfx.jit: cannot read the source of %s (%s): define it in a file"
                       % (getattr(fn, "__name__", fn), e), "no source") from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = 0
    for a, b in zip(lines, dedented.splitlines(True)):
        if b.strip():
            indent = len(a) - len(b)
            break
    try:
        tree = ast.parse(dedented)
        node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == fn.__name__)
    except (SyntaxError, StopIteration):
        raise JitError("cfx.jit: %s is not a def of its own (a lambda, or built at run time): "
                       "write it with def" % getattr(fn, "__name__", fn), "no def") from None
    env = dict(builtins.__dict__)
    env.update(fn.__globals__)
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                env[name] = cell.cell_contents
            except ValueError:
                pass
    filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    u = _Unit(node, fn.__name__, filename, lines, start - 1, indent, env, fn)
    return u


def _assigned_names(body):
    """Names a function's body assigns (its locals), not looking into nested defs or lambdas."""
    found = []

    def visit(n):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append(n.name)
            return
        if isinstance(n, (ast.Lambda, ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
            return
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            found.append(n.id)
        for c in ast.iter_child_nodes(n):
            visit(c)

    for s in body:
        visit(s)
    return found


def _read_names(node):
    out = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            out.append(n.id)
    return out


# ---- the translation of one unit for one signature ---------------------------------------------

class _Fixes:
    """What compiling taught the translation of one signature."""

    def __init__(self):
        self.widen = {}     # variable (cfx name) -> dtype: every assignment is cast to it
        self.site = {}      # id of a statement -> dtype its assigned value is cast to
        self.calls = {}     # id of a call node -> (callee unit, key)
        self.returns = None # [types of each result], from the probe
        self.ret_cast = {}  # (id of a return, item) -> dtype
        self.truthy = set() # ids of statements whose conditions take Python's truth: bool(x)


class _Emitter:
    def __init__(self, tr, mode, stop_at=None):
        self.tr = tr
        self.mode = mode         # "probe", "final", "prefix"
        self.stop_at = stop_at   # the call node a prefix probe ends at
        self.out = []            # (text, node)
        self.depth = 1
        self.tmp = 0
        self.queries = []
        self.ret_index = {}      # id(return node) -> k
        self.lambdas = set()
        self.pre = []            # lines the current statement needs before it (hoisted lists)
        self.cur = None          # the statement being emitted
        self.in_cond = 0         # inside a condition: and/or operands take Python's truth
        self.loops = []          # per enclosing loop, the flag of its else (None: no else)

    # -- output
    def line(self, text, node):
        pre, self.pre = self.pre, []
        for p in pre:
            self.out.append(("  " * self.depth + p, node))
        self.out.append(("  " * self.depth + text, node))

    def hoist(self, text):
        """A name for a value that cfx takes only as a statement's value (a list literal)."""
        t = self.fresh("l")
        self.pre.append("%s = %s" % (t, text))
        return t

    def cond(self, e):
        """A condition; bool(...) around it where cfx said it is not a bool (Python's truth)."""
        self.in_cond += 1
        try:
            t = self.expr(e)
        finally:
            self.in_cond -= 1
        if id(self.cur) in self.tr.fixes.truthy and not _syntactic_bool(e):
            return "bool(%s)" % t
        return t

    def fresh(self, what="t"):
        self.tmp += 1
        return "_jit_%s%d" % (what, self.tmp)

    def refuse(self, node, construct, instead):
        raise _Refuse(node, construct, instead)

    # -- names
    def local(self, name):
        return self.tr.rename.get(name, name)

    def block(self, stmts):
        self.depth += 1
        n = len(self.out)
        for s in stmts:
            self.stmt(s)
        if len(self.out) == n:
            self.line("pass", stmts[0] if stmts else None)
        self.depth -= 1

    # -- statements
    def stmt(self, s):
        self.cur = s
        if type(s) in _REFUSED_STMTS:
            construct, instead = _REFUSED_STMTS[type(s)]
            self.refuse(s, construct, instead)
        m = getattr(self, "s_" + type(s).__name__, None)
        if m is None:
            self.refuse(s, "the statement %s" % type(s).__name__, "write it with if, while, for and assignments")
        m(s)

    def s_Pass(self, s):
        self.line("pass", s)

    def s_Break(self, s):
        if self.loops and self.loops[-1]:
            self.line("%s = true" % self.loops[-1], s) # the loop's else is skipped
        self.line("break", s)

    def s_Continue(self, s):
        self.line("continue", s)

    def s_Expr(self, s):
        v = s.value
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            return # a docstring
        if isinstance(v, ast.Call):
            f = v.func
            if isinstance(f, ast.Name) and f.id == "print" and self.tr.env_is(f.id, builtins.print):
                return self.print_(v)
            if isinstance(f, ast.Attribute) and f.attr in ("append", "pop") and isinstance(f.value, ast.Name) \
                    and f.value.id in self.tr.locals:
                return self.line(self.expr(v), s)
            self.line(self.expr(v), s)
            return
        self.refuse(s, "an expression alone", "assign its value to a variable, or drop it")

    def print_(self, call):
        label = []
        values = []
        for a in call.args:
            if isinstance(a, ast.Constant) and isinstance(a.value, str):
                label.append(a.value)
            else:
                values.append(a)
        if call.keywords:
            self.refuse(call, "print with keywords", "print(\"label\", x)")
        text = " ".join(label)
        esc = text.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n").replace("\t", "\\t")
        if not values:
            return # cfx prints values; a line of text alone has nothing to print on the device
        for v in values:
            if esc:
                self.line("print(%s, \"%s\")" % (self.expr(v), esc), call)
            else:
                self.line("print(%s)" % self.expr(v), call)

    def s_Assert(self, s):
        msg = "assertion failed"
        if s.msg is not None:
            if not (isinstance(s.msg, ast.Constant) and isinstance(s.msg.value, str)):
                self.refuse(s.msg, "an assert message that is not a string literal", "write assert cond, \"message\"")
            msg = s.msg.value
        esc = msg.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n").replace("\t", "\\t")
        if not esc.isascii():
            esc = esc.encode("ascii", "backslashreplace").decode().replace("\\", "\\\\")
        self.line("assert(%s, \"%s\")" % (self.cond(s.test), esc), s)

    def s_Raise(self, s):
        self.refuse(s, "raise", "stop the run with assert cond, \"message\"")

    def s_If(self, s):
        self.line("if %s {" % self.cond(s.test), s)
        self.block(s.body)
        orelse = s.orelse
        while len(orelse) == 1 and isinstance(orelse[0], ast.If):
            e = orelse[0]
            self.cur = s
            self.line("} elif %s {" % self.cond(e.test), s)
            self.block(e.body)
            orelse = e.orelse
        if orelse:
            self.line("} else {", orelse[0])
            self.block(orelse)
        self.line("}", s)

    def s_While(self, s):
        flag = self.loop_else_flag(s)
        self.line("while %s {" % self.cond(s.test), s)
        self.loop_body(s, flag)

    def loop_else_flag(self, s):
        """for/while ... else: a flag that each break of this loop sets, tested after it."""
        if not s.orelse:
            return None
        flag = self.fresh("broke")
        self.line("%s = false" % flag, s)
        return flag

    def loop_body(self, s, flag):
        self.loops.append(flag)
        try:
            self.block(s.body)
        finally:
            self.loops.pop()
        self.line("}", s)
        if flag:
            self.line("if not %s {" % flag, s.orelse[0])
            self.block(s.orelse)
            self.line("}", s)

    def s_For(self, s):
        target = self.target_names(s.target)
        it = self.iterable(s.iter)
        for t in _names_in(s.target):
            if self.local(t) in self.tr.fixes.widen:
                self.refuse(s.target, "a loop variable '%s' that changes dtype" % t,
                            "give the value another name inside the loop")
        flag = self.loop_else_flag(s)
        self.line("for %s in %s {" % (target, it), s)
        self.loop_body(s, flag)

    def target_names(self, t):
        if isinstance(t, ast.Name):
            return self.local(t.id)
        if isinstance(t, (ast.Tuple, ast.List)):
            parts = []
            for e in t.elts:
                if not isinstance(e, ast.Name):
                    self.refuse(e, "a loop target that is not a name", "for i, v in enumerate(x)")
                parts.append(self.local(e.id))
            return ", ".join(parts)
        self.refuse(t, "this loop target", "a name or names: for i, v in enumerate(x)")

    def iterable(self, it):
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and not it.keywords:
            name = it.func.id
            if name == "range" and self.tr.env_is(name, builtins.range):
                if not 1 <= len(it.args) <= 3:
                    self.refuse(it, "range with %d arguments" % len(it.args), "range(stop), range(start, stop) or range(start, stop, step)")
                return "range(%s)" % ", ".join(self.expr(a) for a in it.args)
            if name == "enumerate" and self.tr.env_is(name, builtins.enumerate):
                if len(it.args) != 1:
                    self.refuse(it, "enumerate with a start", "enumerate(x), and add the start to the index")
                return "enumerate(%s)" % self.iterable(it.args[0])
            if name == "zip" and self.tr.env_is(name, builtins.zip):
                return "zip(%s)" % ", ".join(self.iterable(a) for a in it.args)
            if name == "reversed" and self.tr.env_is(name, builtins.reversed):
                inner = it.args[0] if len(it.args) == 1 else None
                if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "range" \
                        and len(inner.args) in (1, 2) and not inner.keywords:
                    if len(inner.args) == 1:
                        return "range(%s - 1, -1, -1)" % self.expr(inner.args[0])
                    return "range(%s - 1, %s - 1, -1)" % (self.expr(inner.args[1]), self.expr(inner.args[0]))
                self.refuse(it, "reversed() of anything but range", "range(len(x) - 1, -1, -1) and index")
        if isinstance(it, (ast.List, ast.Tuple)):
            return "[%s]" % ", ".join(self.expr(e) for e in it.elts)
        return self.expr(it)

    def s_Return(self, s):
        if s.value is None or (isinstance(s.value, ast.Constant) and s.value.value is None):
            if self.tr.returns_values:
                self.refuse(s, "a return of None in a function that returns values elsewhere",
                            "return a value on every path (cfx's results are never None)")
            if self.mode == "probe" or self.mode == "prefix":
                self.line("return 0", s)
            else:
                self.line("return", s)
            return
        k = self.ret_index.setdefault(id(s), len(self.ret_index))
        value = s.value
        if self.mode in ("probe", "prefix"):
            v = self.tuple_or_expr(value)
            self.line("_jit_r%d = %s" % (k, v), s)
            self.line("return 0", s)
            return
        types = self.tr.fixes.returns
        casts = [self.tr.fixes.ret_cast.get((id(s), i)) for i in range(len(types))]
        if isinstance(value, ast.Tuple):
            if len(value.elts) != len(types):
                self.refuse(s, "returns of different lengths", "return as many values on every path")
            items = [self.expr(e) for e in value.elts]
        elif len(types) == 1:
            items = [self.expr(value)]
        else:
            t = self.fresh()
            self.line("%s = %s" % (t, self.expr(value)), s)
            items = ["%s[%d]" % (t, i) for i in range(len(types))]
        items = ["cast(%s, %s)" % (v, c) if c else v for v, c in zip(items, casts)]
        self.line("return %s" % ", ".join(items), s)

    def tuple_or_expr(self, value):
        if isinstance(value, ast.Tuple):
            items = [self.expr(e) for e in value.elts]
            return "(%s,)" % items[0] if len(items) == 1 else "(%s)" % ", ".join(items)
        return self.expr(value)

    def s_AnnAssign(self, s):
        if s.value is None:
            return
        self.assign([s.target], s.value, s)

    def s_Assign(self, s):
        if len(s.targets) > 1:
            # a = b = v: v once, then each
            t = self.fresh()
            self.line("%s = %s" % (t, self.tuple_or_expr(s.value)), s)
            for tg in s.targets:
                self.assign([tg], ast.Name(id=t, ctx=ast.Load()), s, raw=t)
            return
        self.assign(s.targets, s.value, s)

    def assign(self, targets, value, s, raw=None):
        target = targets[0]
        if isinstance(value, ast.Lambda):
            if not isinstance(target, ast.Name):
                self.refuse(s, "a lambda assigned to anything but a name", "f = lambda v: ...")
            self.lambdas.add(target.id)
            self.line("%s = %s" % (self.local(target.id), self.lambda_(value)), s)
            return
        if isinstance(target, ast.Name):
            name = self.local(target.id)
            v = raw if raw is not None else self.value_for(value)
            dt = self.tr.fixes.widen.get(name)
            if dt and not _is_list_value(value):
                v = "cast(%s, %s)" % (v, dt)
            self.line("%s = %s" % (name, v), s)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            if not all(isinstance(e, (ast.Name, ast.Subscript)) for e in target.elts):
                self.refuse(target, "this unpacking target", "a, b = ... with names or x[i]")
            plain = raw is None and id(s) not in self.tr.fixes.site and not any(
                isinstance(e, ast.Name) and self.local(e.id) in self.tr.fixes.widen for e in target.elts)
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) and raw is None:
                vals = [self.expr(e) for e in value.elts]
            elif plain and isinstance(value, (ast.Call, ast.Attribute, ast.Name)):
                self.line("%s = %s" % (", ".join(self.target_text(e, s) for e in target.elts), self.expr(value)), s)
                return
            else:
                t = self.fresh()
                self.line("%s = %s" % (t, raw if raw is not None else self.expr(value)), s)
                if isinstance(value, ast.Attribute) and value.attr == "shape":
                    # n, m = x.shape: unpack it where it is
                    self.out.pop()
                    self.line("%s = %s" % (", ".join(self.target_text(e, s) for e in target.elts), self.expr(value)), s)
                    return
                vals = ["%s[%d]" % (t, i) for i in range(len(target.elts))]
            texts = []
            for e, v in zip(target.elts, vals):
                if isinstance(e, ast.Name):
                    dt = self.tr.fixes.widen.get(self.local(e.id))
                    if dt:
                        v = "cast(%s, %s)" % (v, dt)
                texts.append(v)
            key = id(s)
            texts = [self.tr.fit(key, v) for v in texts]
            self.line("%s = %s" % (", ".join(self.target_text(e, s) for e in target.elts), ", ".join(texts)), s)
            return
        if isinstance(target, ast.Subscript):
            v = raw if raw is not None else self.expr(value)
            v = self.tr.fit(id(s), v)
            self.line("%s = %s" % (self.target_text(target, s), v), s)
            return
        if isinstance(target, ast.Attribute):
            self.refuse(target, "an assignment to an attribute", "assign a variable")
        self.refuse(target, "this assignment target", "assign a name or x[i]")

    def value_for(self, value):
        if isinstance(value, ast.List):
            return self.list_text(value)
        return self.tuple_or_expr(value)

    def target_text(self, t, s):
        if isinstance(t, ast.Name):
            return self.local(t.id)
        if isinstance(t, ast.Subscript):
            return self.subscript(t)
        self.refuse(t, "this assignment target", "assign a name or x[i]")

    def s_AugAssign(self, s):
        op = type(s.op)
        if op not in _BINARY:
            self.refuse(s, "the operator %s=" % _opname(s.op), "write x = x op y")
        sym = _BINARY[op]
        value = self.expr(s.value)
        if isinstance(s.target, ast.Name):
            name = self.local(s.target.id)
            dt = self.tr.fixes.widen.get(name)
            if dt or sym == "@":
                e = "(%s %s %s)" % (name, sym, value)
                self.line("%s = %s" % (name, "cast(%s, %s)" % (e, dt) if dt else e), s)
            else:
                self.line("%s %s= %s" % (name, sym, value), s)
            return
        if isinstance(s.target, ast.Subscript):
            t = self.subscript(s.target)
            if id(s) in self.tr.fixes.site or sym == "@":
                # x[i] op= v as x[i] = cast(x[i] op v, dtype): the index computed twice, which
                # is what it is for anything without a call in it
                e = "(%s %s %s)" % (t, sym, value)
                e = self.tr.fit(id(s), e)
                self.line("%s = %s" % (t, e), s)
            else:
                self.line("%s %s= %s" % (t, sym, value), s)
            return
        self.refuse(s.target, "this augmented assignment target", "a name or x[i]")

    def s_FunctionDef(self, s):
        if s.decorator_list:
            self.refuse(s, "a decorated nested def", "define it without the decorator")
        # translated where it is called, as a graph of the file; nothing here
        return

    # -- expressions
    def expr(self, e):
        if type(e) in _REFUSED_EXPRS:
            construct, instead = _REFUSED_EXPRS[type(e)]
            self.refuse(e, construct, instead)
        m = getattr(self, "e_" + type(e).__name__, None)
        if m is None:
            self.refuse(e, "the expression %s" % type(e).__name__, "write it with arithmetic, calls and indexing")
        return m(e)

    def e_Constant(self, e):
        v = e.value
        if v is None:
            return "None"
        if isinstance(v, str):
            self.refuse(e, "a string", "strings are only the message of assert and the label of print")
        t = _literal(v)
        if t is None:
            self.refuse(e, "the constant %r" % (v,), "a number within i64, a real or a bool")
        return t

    def e_Name(self, e):
        name = e.id
        if name in self.tr.locals:
            return self.local(name)
        c = self.tr.constant(name)
        if c is not None:
            return c
        v = self.tr.unit.env.get(name, _MISSING)
        if v is _MISSING:
            self.refuse(e, "the name '%s', which is not defined" % name, "define it, or pass it as an argument")
        self.refuse(e, "'%s', a %s from outside the function" % (name, type(v).__name__),
                    "pass it as an argument (an array or a number), or make it a module-level number")

    def e_BinOp(self, e):
        op = type(e.op)
        if op in _BINARY:
            return "(%s %s %s)" % (self.expr(e.left), _BINARY[op], self.expr(e.right))
        self.refuse(e, "the operator %s" % _opname(e.op), "write it another way")

    def e_UnaryOp(self, e):
        op = type(e.op)
        if op is ast.USub:
            if isinstance(e.operand, ast.Constant) and isinstance(e.operand.value, (int, float)) \
                    and not isinstance(e.operand.value, bool):
                return _literal(-e.operand.value) or self.refuse(e, "this constant", "a smaller one")
            return "(-%s)" % self.expr(e.operand)
        if op is ast.UAdd:
            return self.expr(e.operand)
        if op is ast.Not:
            return "(not %s)" % self.cond(e.operand)
        if op is ast.Invert:  # of bools their not, as numpy's and PyTorch's
            return "(~%s)" % self.expr(e.operand)
        self.refuse(e, "this unary operator", "write it another way")

    def e_BoolOp(self, e):
        sym = " and " if isinstance(e.op, ast.And) else " or "
        # in a value, Python's `a or b` gives a or b, not a bool: only a condition takes truth
        part = self.cond if self.in_cond else self.expr
        return "(%s)" % sym.join(part(v) for v in e.values)

    def e_Compare(self, e):
        parts = []
        left = e.left
        for op, right in zip(e.ops, e.comparators):
            parts.append(self.compare(left, op, right, e))
            left = right
        return parts[0] if len(parts) == 1 else "(%s)" % " and ".join(parts)

    def compare(self, left, op, right, e):
        t = type(op)
        if t in (ast.Is, ast.IsNot):
            if not (isinstance(right, ast.Constant) and right.value is None):
                self.refuse(e, "'is' with anything but None", "compare values with ==")
            return "(%s %s None)" % (self.expr(left), "is" if t is ast.Is else "is not")
        if t in (ast.In, ast.NotIn):
            if isinstance(right, (ast.Tuple, ast.List)) and right.elts:
                lt = self.expr(left)
                s = "(%s)" % " or ".join("(%s == %s)" % (lt, self.expr(i)) for i in right.elts)
                return s if t is ast.In else "(not %s)" % s
            self.refuse(e, "'in' over anything but a literal tuple", "write any(xs == v), or a loop")
        if isinstance(right, ast.Constant) and right.value is None:
            self.refuse(e, "== None", "write x is None")
        return "(%s %s %s)" % (self.expr(left), _CMP[t], self.expr(right))

    def e_IfExp(self, e):
        saved, self.in_cond = self.in_cond, 0
        try:
            return self.ifexp(e)
        finally:
            self.in_cond = saved

    def ifexp(self, e):
        return "(%s if %s else %s)" % (self.expr(e.body), self.cond(e.test), self.expr(e.orelse))

    def e_Tuple(self, e):
        items = [self.expr(i) for i in e.elts]
        return "(%s,)" % items[0] if len(items) == 1 else "(%s)" % ", ".join(items)

    def e_List(self, e):
        return self.hoist(self.list_text(e))

    def list_text(self, e):
        return "[%s]" % ", ".join(self.expr(i) for i in e.elts)

    def e_ListComp(self, e):
        saved = dict(self.tr.rename)
        saved_locals = set(self.tr.locals)
        for g in e.generators:
            for n in _names_in(g.target):
                self.tr.locals.add(n)
                if n in _RESERVED or n.startswith("_jit_"):
                    self.tr.rename[n] = n + "_"
        try:
            parts = []
            for g in e.generators:
                if g.is_async:
                    self.refuse(e, "async comprehension", "a plain one")
                parts.append("for %s in %s" % (self.target_names(g.target), self.iterable(g.iter)))
                for c in g.ifs:
                    parts.append("if %s" % self.cond(c))
            return "[%s %s]" % (self.expr(e.elt), " ".join(parts))
        finally:
            self.tr.rename, self.tr.locals = saved, saved_locals

    def e_Lambda(self, e):
        self.refuse(e, "a lambda that is not assigned to a name", "f = lambda v: ..., then call f(x)")

    def lambda_(self, e):
        a = e.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.defaults:
            self.refuse(e, "a lambda with defaults or *args", "lambda v, w: ...")
        params = [p.arg for p in a.posonlyargs + a.args]
        saved = dict(self.tr.rename)
        saved_locals = set(self.tr.locals)
        for p in params:
            self.tr.locals.add(p)
            if p in _RESERVED or p.startswith("_jit_"):
                self.tr.rename[p] = p + "_"
        body = self.expr(e.body)
        ps = ", ".join(self.local(p) for p in params)
        self.tr.rename, self.tr.locals = saved, saved_locals
        return "lambda %s: %s" % (ps, body)

    def e_Attribute(self, e):
        attr = e.attr
        mod = self.tr.module_of(e.value)
        if mod is not None:
            full = "%s.%s" % (mod, attr)
            consts = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan, "tau": math.tau}
            if attr in consts and mod in ("numpy", "math", "torch"):
                return _literal(consts[attr])
            c = _const_value(getattr(sys.modules.get(mod), attr, None))
            if c is not None:
                return c # a module's number, read now
            self.refuse(e, "%s used as a value" % full, "call it, or pass the value as an argument")
        base = self.expr(e.value)
        if attr == "shape":
            return "%s.shape" % base
        if attr == "ndim":
            return "%s.ndim" % base
        if attr == "T":
            return "transpose(%s)" % base
        if attr == "size":
            return "len(reshape(%s, [-1]))" % base
        if attr == "mT":
            return "transpose(%s)" % base
        self.refuse(e, "the attribute .%s" % attr, "x.shape, x.ndim, x.T or x.size (or a method call)")

    def e_Subscript(self, e):
        return self.subscript(e)

    def subscript(self, e):
        base = self.expr(e.value)
        sl = e.slice
        items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        parts = []
        for it in items:
            if isinstance(it, ast.Slice):
                if it.step is not None:
                    self.refuse(it, "a slice with a step", "a loop over the elements (cfx's slices have no step)")
                lo = self.expr(it.lower) if it.lower is not None else ""
                hi = self.expr(it.upper) if it.upper is not None else ""
                parts.append("%s:%s" % (lo, hi))
            elif isinstance(it, ast.Constant) and it.value is None:
                self.refuse(it, "None (np.newaxis) in an index", "reshape(x, [n, 1]) or x.reshape(-1, 1)")
            elif isinstance(it, ast.Constant) and it.value is Ellipsis:
                self.refuse(it, "... in an index", "write a : for each axis")
            else:
                parts.append(self.expr(it))
        return "%s[%s]" % (base, ", ".join(parts))

    def e_Call(self, e):
        return self.tr.call(self, e)


def _syntactic_bool(e):
    if isinstance(e, (ast.Compare, ast.BoolOp)):
        return True
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        return True
    return isinstance(e, ast.Constant) and isinstance(e.value, bool)


def _names_in(t):
    if isinstance(t, ast.Name):
        return [t.id]
    if isinstance(t, (ast.Tuple, ast.List)):
        return [n for e in t.elts for n in _names_in(e)]
    return []


def _is_list_value(v):
    return isinstance(v, (ast.List, ast.ListComp))


def _is_weak(v):
    """A bare literal (its dtype comes from the other returns)."""
    if isinstance(v, ast.UnaryOp) and isinstance(v.op, (ast.USub, ast.UAdd)):
        v = v.operand
    return isinstance(v, ast.Constant) and isinstance(v.value, (int, float)) and not isinstance(v.value, bool)


def _opname(op):
    return {ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>",
            ast.MatMult: "@"}.get(type(op), type(op).__name__)


class _Missing:
    pass


_MISSING = _Missing()

_SLOT = re.compile(r"^\s+s\d+\s+(\S+)\s+((?:f32|f64|i32|i64|bool)(?:\[[^\]]*\])?)\s+(input|result|var|temp|const)")


def _slots(graph):
    """{variable name: (dtype, shape)} of a compiled graph (its own variables)."""
    found = {}
    for line in graph.dump().splitlines():
        m = _SLOT.match(line)
        if m and m.group(1) != "-":
            found.setdefault(m.group(1), _parse_type(m.group(2)))
    return found


_VAR_TYPE = re.compile(r"'([^']+)' has type ([a-z0-9]+\[[^\]]*\]) and cannot be assigned ([a-z0-9]+\[[^\]]*\])")
_JOIN = re.compile(r"cannot join '([^']+)': ([a-z0-9]+\[[^\]]*\]) \(.*?\) vs ([a-z0-9]+\[[^\]]*\]) \(")
_PART = re.compile(r"(?:a row of|this part of|an item of list) '([^']+)' is ([a-z0-9]+\[[^\]]*\]) and cannot be assigned ([a-z0-9]+\[[^\]]*\])")
_NOT_BOOL = re.compile(r"condition must be a one-element bool, got (?:f32|f64|i32|i64)|operands? of '(?:not|and|or)' must be bool")
_UNBOUNDED = re.compile(r"cannot tell how many items list '([^']+)' may hold")
_LIST_TAKE = re.compile(r"list '([^']+)' holds ([a-z0-9]+\[[^\]]*\]) items and cannot take ([a-z0-9]+\[[^\]]*\])")


class _Spec:
    """One signature, compiled: the graph, its inputs in the order of the function's
    parameters, the number of results and the text."""

    def __init__(self, graph, inputs, nresults, text, name):
        self.graph = graph
        self.inputs = inputs
        self.nresults = nresults
        self.text = text
        self.name = name


class _Translation:
    """The translation of one unit for one key (its parameters' types)."""

    def __init__(self, unit, key, stack):
        self.unit = unit
        self.key = key            # tuple of (dtype, shape) or None per parameter
        self.stack = stack        # units being translated (recursion)
        self.fixes = _Fixes()
        body = unit.node.body
        self.locals = set(unit.params) | set(_assigned_names(body)) | set(unit.free)
        self.rename = {}
        for n in self.locals:
            if n in _RESERVED or n.startswith("_jit_") or not n.isascii():
                self.rename[n] = ("v_" + n.encode("ascii", "backslashreplace").decode().replace("\\", "_")) \
                    if not n.isascii() else n + "_"
        self.returns_values = any(isinstance(n, ast.Return) and n.value is not None and
                                  not (isinstance(n.value, ast.Constant) and n.value.value is None)
                                  for n in _walk_own(body))
        self.gname = None

    def env_is(self, name, obj):
        return name not in self.locals and self.unit.env.get(name) is obj

    def constant(self, name):
        if name in self.locals:
            return None
        v = self.unit.env.get(name, _MISSING)
        if v is _MISSING:
            return None
        return _const_value(v)

    def module_of(self, node):
        """'numpy', 'math', 'torch', 'torch.nn.functional', ... for an expression naming a module."""
        if isinstance(node, ast.Name) and node.id not in self.locals:
            v = self.unit.env.get(node.id)
            if type(v).__name__ == "module":
                return v.__name__
            return None
        if isinstance(node, ast.Attribute):
            base = self.module_of(node.value)
            if base is not None:
                return base + "." + node.attr
        return None

    # -- the whole text
    def header(self, results):
        params = []
        for name, k in zip(self.unit.params + self.unit.free, self.key):
            if k is None:
                continue
            pname = self.local(name)
            if pname in self.fixes.widen:
                pname = pname + "_in"
            params.append("%s: %s" % (pname, _type_text(*k)))
        return "graph %s(%s) -> (%s) {" % (self.gname, ", ".join(params), results)

    def local(self, name):
        return self.rename.get(name, name)

    def fit(self, key, v):
        """v cast (and broadcast) to the part it is written to, where cfx said it must be."""
        f = self.fixes.site.get(key)
        if f is None:
            return v
        dt, shape = f
        v = "cast(%s, %s)" % (v, dt)
        if shape:
            dims = ", ".join(str(d) for d in shape)
            v = "(%s + zeros((%s%s), dtype=%s))" % (v, dims, "," if len(shape) == 1 else "", dt)
        return v

    def emit(self, mode, stop_at=None):
        em = _Emitter(self, mode, stop_at)
        if mode == "final":
            res = ", ".join("r%d: %s" % (i, _type_text(*t)) for i, t in enumerate(self.fixes.returns))
        else:
            res = "_jit_probe: i32"
        head = self.header(res)
        if mode != "final":
            em.line("_jit_probe = 0", self.unit.node)
        for name, k in zip(self.unit.params + self.unit.free, self.key):
            pname = self.local(name)
            if k is None:
                em.line("%s = None" % pname, self.unit.node)
            elif pname in self.fixes.widen:
                em.line("%s = cast(%s_in, %s)" % (pname, pname, self.fixes.widen[pname]), self.unit.node)
        try:
            for s in self.unit.node.body:
                em.stmt(s)
        except _Stop:
            for q, node in em.queries:
                em.line(q, node)
            em.line("return 0", stop_at)
            while em.depth > 1:
                em.depth -= 1
                em.line("}", stop_at)
        out = [(head, self.unit.node)] + em.out + [("}", self.unit.node)]
        text = "\n".join(t for t, _ in out) + "\n"
        nodes = [n for _, n in out]
        return text, nodes, em

    # -- calls
    def call(self, em, e):
        f = e.func
        args = e.args
        kw = {k.arg: k.value for k in e.keywords}
        if any(k.arg is None for k in e.keywords) or any(isinstance(a, ast.Starred) for a in args):
            em.refuse(e, "*args or **kwargs in a call", "pass each argument")
        X = em.expr
        # f(...) of a name
        if isinstance(f, ast.Name):
            name = f.id
            if name in em.lambdas:
                return "%s(%s)" % (self.local(name), ", ".join(X(a) for a in args))
            if name in self.locals and name not in self.nested_defs():
                em.refuse(e, "a call of the variable '%s'" % name, "call a function defined with def or lambda")
            if name in self.nested_defs():
                return self.unit_call(em, e, self.nested_unit(name), args, kw)
            target = self.unit.env.get(name, _MISSING)
            if isinstance(target, JitFunction):
                return self.unit_call(em, e, target._unit, args, kw)
            if target is self.unit.pyfunc and target is not None:
                em.refuse(e, "recursion", "write it as a loop (cfx inlines calls)")
            if getattr(builtins, name, None) is target and target is not _MISSING:
                return self.builtin(em, e, name, args, kw)
            if callable(target):
                em.refuse(e, "a call of the Python function '%s'" % name,
                          "decorate it with @cfx.jit too, or pass its result as an argument")
            em.refuse(e, "a call of '%s'" % name, "call an op, a nested def or a @cfx.jit function")
        if isinstance(f, ast.Attribute):
            mod = self.module_of(f.value)
            if mod is not None:
                return self.library(em, e, mod, f.attr, args, kw)
            return self.method(em, e, f.value, f.attr, args, kw)
        em.refuse(e, "this call", "call a name")

    def nested_defs(self):
        return {s.name: s for s in _walk_own(self.unit.node.body) if isinstance(s, ast.FunctionDef)}

    def nested_unit(self, name):
        u = self.unit.nested.get(name)
        if u is None:
            node = self.nested_defs()[name]
            env = dict(self.unit.env)
            own = set(a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs)
            own |= set(_assigned_names(node.body))
            free = []
            for n in _read_names(node):
                if n in self.locals and n not in own and n not in free and n != name \
                        and n not in self.nested_defs():
                    free.append(n)
            for n in self.locals:
                env.pop(n, None)
            u = _Unit(node, "%s_%s" % (self.unit.name, name), self.unit.filename, self.unit.lines,
                      self.unit.line0, self.unit.col0, env, None, free)
            self.unit.nested[name] = u
        return u

    def unit_call(self, em, e, unit, args, kw):
        """A call of another unit (a @cfx.jit function, a nested def): its graph, specialized
        for the arguments' types, which a probe cut at this call reads."""
        if unit in self.stack:
            em.refuse(e, "recursion", "write it as a loop (cfx inlines calls)")
        node = unit.node
        a = node.args
        if a.vararg or a.kwarg:
            em.refuse(e, "a call of a function with *args or **kwargs", "give it plain parameters")
        names = unit.params
        defaults = {}
        pos = a.posonlyargs + a.args
        for p, d in zip(pos[len(pos) - len(a.defaults):], a.defaults):
            defaults[p.arg] = d
        for p, d in zip(a.kwonlyargs, a.kw_defaults):
            if d is not None:
                defaults[p.arg] = d
        if len(args) > len(pos):
            em.refuse(e, "too many arguments", "pass %d" % len(pos))
        bound = {}
        for p, v in zip(pos, args):
            bound[p.arg] = v
        for k, v in kw.items():
            if k not in names or k in bound:
                em.refuse(e, "the argument '%s'" % k, "pass each parameter once")
            bound[k] = v
        values = []
        for n in names:
            if n in bound:
                values.append(bound[n])
            elif n in defaults:
                values.append(defaults[n])
            else:
                em.refuse(e, "a call without the argument '%s'" % n, "pass it")
        for n in unit.free:
            values.append(ast.Name(id=n, ctx=ast.Load()))
        texts = []
        for n, v in zip(names + unit.free, values):
            if isinstance(v, ast.Constant) and v.value is None:
                texts.append(None)
            elif n not in bound and n in defaults:
                c = _literal(v.value) if isinstance(v, ast.Constant) else None
                if c is None:
                    em.refuse(v, "a default that is not a number", "give the argument at the call")
                texts.append(c)
            else:
                texts.append(em.expr(v))
        info = self.fixes.calls.get(id(e))
        if info is None:
            if em.stop_at is e:
                em.queries = [("_jit_q%d = %s" % (i, t), e) for i, t in enumerate(texts) if t is not None]
                raise _Stop()
            # not known yet: the caller probes it
            raise _NeedCall(e, texts)
        callee_key, callee_name, nres = info
        if nres == 0:
            em.refuse(e, "a call of a function that returns nothing", "return a value")
        call = "%s(%s)" % (callee_name, ", ".join(t for t in texts if t is not None))
        return call

    # -- Python's builtins
    def builtin(self, em, e, name, args, kw):
        X = em.expr
        n = len(args)
        if name == "len" and n == 1:
            return "len(%s)" % X(args[0])
        if name in ("min", "max"):
            if kw:
                em.refuse(e, "%s with key= or default=" % name, "a loop")
            if n == 1:
                if isinstance(args[0], (ast.List, ast.Tuple)):
                    items = [X(a) for a in args[0].elts]
                    return _fold(name, items)
                return "%s(%s)" % (name, X(args[0]))
            return _fold(name, [X(a) for a in args])
        if name == "abs" and n == 1:
            return "abs(%s)" % X(args[0])
        if name == "float" and n == 1:
            return "float(%s)" % X(args[0])
        if name == "int" and n == 1:
            return "int(%s)" % X(args[0])
        if name == "bool" and n == 1:
            return "bool(%s)" % X(args[0])
        if name == "round" and n == 1:
            return "int(round(%s))" % X(args[0])
        if name == "sum" and n == 1:
            a = args[0]
            if isinstance(a, (ast.List, ast.Tuple)):
                return "(%s)" % " + ".join(X(i) for i in a.elts)
            if isinstance(a, ast.ListComp):
                return "sum(stack(%s), axis=0)" % X(a)
            return "sum(%s, axis=0)" % X(a) # Python's sum adds the rows
        if name in ("any", "all") and n == 1:
            return "%s(%s)" % (name, X(args[0]))
        if name == "pow" and n == 2:
            return "pow(%s, %s)" % (X(args[0]), X(args[1]))
        if name == "divmod":
            em.refuse(e, "divmod", "a // b and a % b")
        if name in ("range", "enumerate", "zip", "reversed"):
            em.refuse(e, "%s() outside a for loop or a comprehension" % name,
                      "use it in for ... in %s(...)" % name)
        if name == "print":
            em.refuse(e, "print as a value", "print(...) on a line of its own")
        if name in ("list", "tuple"):
            if n == 0:
                return "[]"
            em.refuse(e, "%s(...)" % name, "a list literal or a comprehension")
        if name == "isinstance":
            em.refuse(e, "isinstance", "cfx's types are fixed per signature: write a function per type")
        em.refuse(e, "the builtin %s(...)" % name, "see docs/jit.md for the mapped names")

    # -- numpy, math, torch
    def library(self, em, e, mod, fname, args, kw):
        X = em.expr
        n = len(args)
        lib = mod.split(".")[0]
        if mod in ("numpy.linalg", "torch.linalg") and fname == "norm" and n == 1 and not kw:
            return "norm(%s)" % X(args[0])
        if mod == "torch.nn.functional":
            if fname in ("relu", "sigmoid", "tanh") and n == 1:
                return "%s(%s)" % (fname, X(args[0]))
            em.refuse(e, "%s.%s" % (mod, fname), "see docs/jit.md for the mapped names")
        if mod == "numpy.random" or mod == "torch.random":
            em.refuse(e, "random numbers inside the function", "draw them outside and pass them in")
        if lib not in ("numpy", "math", "torch"):
            em.refuse(e, "%s.%s" % (mod, fname), "see docs/jit.md for the mapped names")
        full = "%s.%s" % (lib, fname)
        # casts: np.float32(x)
        if lib in ("numpy",) and fname in _CASTS and n == 1 and not kw:
            return "cast(%s, %s)" % (X(args[0]), _CASTS[fname])
        if lib == "math":
            if fname in ("floor", "ceil") and n == 1:
                return "int(%s(%s))" % (fname, X(args[0])) # Python's ints
            if fname == "trunc" and n == 1:
                return "int(%s)" % X(args[0])
            if fname in ("sqrt", "exp", "log", "tanh", "sin", "cos", "tan", "fabs", "erf", "atan", "asin",
                         "acos", "asinh", "acosh", "atanh") and n == 1:
                return "%s(%s)" % (_UNARY[fname], X(args[0]))
            if fname == "atan2" and n == 2:
                return "atan2(%s, %s)" % (X(args[0]), X(args[1]))
            if fname == "pow" and n == 2:
                return "pow(%s, %s)" % (X(args[0]), X(args[1]))
            if fname == "isnan" and n == 1:
                a = X(args[0])
                return "(%s != %s)" % (a, a)
            if fname == "isinf" and n == 1:
                return "(abs(%s) == inf)" % X(args[0])
            em.refuse(e, "math.%s" % fname, "see docs/jit.md for the mapped names")
        axis = kw.pop("axis", None) or kw.pop("dim", None)
        keep = kw.pop("keepdims", None) or kw.pop("keepdim", None)
        if fname in _UNARY and n == 1 and fname not in ("round",) or (fname in ("round", "around") and n == 1 and lib == "numpy") \
                or (fname == "round" and lib == "torch" and n == 1):
            if kw:
                em.refuse(e, "%s with %s=" % (full, next(iter(kw))), "call it without")
            return "%s(%s)" % (_UNARY[fname], X(args[0]))
        if fname in _REDUCE and n >= 1:
            if n == 2 and fname in ("max", "min") and lib == "torch":
                if axis is None and not isinstance(args[1], ast.Constant):
                    return "%s(%s, %s)" % (fname, X(args[0]), X(args[1]))
                em.refuse(e, "torch.%s(x, dim), which gives values and indices" % fname,
                          "torch.amax(x, dim) and torch.argmax(x, dim)")
            if n == 2:
                axis = args[1]
            if n > 2:
                em.refuse(e, "%s with out= or more arguments" % full, "%s(x, axis)" % fname)
            return self.reduce(em, e, _REDUCE[fname], X(args[0]), axis, keep, kw)
        if fname in ("maximum", "minimum", "fmax", "fmin") and n == 2:
            return "%s(%s, %s)" % ("max" if "max" in fname else "min", X(args[0]), X(args[1]))
        if fname in ("arctan2", "atan2") and n == 2:
            return "atan2(%s, %s)" % (X(args[0]), X(args[1]))
        if fname in _BITWISE and n == 2:
            return "(%s %s %s)" % (X(args[0]), _BITWISE[fname], X(args[1]))
        if fname in ("invert", "bitwise_not", "bitwise_invert") and n == 1:
            return "(~%s)" % X(args[0])
        if fname in ("power", "pow", "float_power") and n == 2:
            return "pow(%s, %s)" % (X(args[0]), X(args[1]))
        if fname in ("fmod",) and n == 2:
            return "fmod(%s, %s)" % (X(args[0]), X(args[1]))
        if fname in ("mod", "remainder") and n == 2:
            return "(%s %% %s)" % (X(args[0]), X(args[1]))
        if fname == "floor_divide" and n == 2:
            return "(%s // %s)" % (X(args[0]), X(args[1]))
        if fname in ("add", "subtract", "multiply", "divide", "true_divide", "sub", "mul", "div") and n == 2:
            sym = {"add": "+", "subtract": "-", "sub": "-", "multiply": "*", "mul": "*", "divide": "/",
                   "true_divide": "/", "div": "/"}[fname]
            return "(%s %s %s)" % (X(args[0]), sym, X(args[1]))
        if fname in ("dot", "matmul", "mm", "mv", "inner", "vdot") and n == 2:
            return "matmul(%s, %s)" % (X(args[0]), X(args[1]))
        if fname == "outer" and n == 2:
            return "(reshape(%s, [-1, 1]) * reshape(%s, [1, -1]))" % (X(args[0]), X(args[1]))
        if fname == "where" and n == 3:
            return "where(%s, %s, %s)" % tuple(X(a) for a in args)
        if fname in ("clip", "clamp"):
            lo = args[1] if n > 1 else kw.pop("min", None) or kw.pop("a_min", None)
            hi = args[2] if n > 2 else kw.pop("max", None) or kw.pop("a_max", None)
            v = X(args[0])
            if lo is not None and not (isinstance(lo, ast.Constant) and lo.value is None):
                v = "max(%s, %s)" % (v, X(lo))
            if hi is not None and not (isinstance(hi, ast.Constant) and hi.value is None):
                v = "min(%s, %s)" % (v, X(hi))
            return v
        if fname == "square" and n == 1:
            return "pow(%s, 2)" % X(args[0])
        if fname in ("isnan",) and n == 1:
            a = X(args[0])
            return "(%s != %s)" % (a, a)
        if fname == "isinf" and n == 1:
            return "(abs(%s) == inf)" % X(args[0])
        if fname in ("logical_and", "logical_or") and n == 2:
            return "(%s %s %s)" % (X(args[0]), fname[8:], X(args[1]))
        if fname == "logical_not" and n == 1:
            return "(not %s)" % X(args[0])
        if (fname == "transpose" and lib == "torch" and n == 3) or (fname == "swapaxes" and n == 3):
            return "swapaxes(%s, %s, %s)" % tuple(X(a) for a in args) # torch's transpose swaps two
        if (fname == "permute" and lib == "torch" and n == 2) or (fname == "transpose" and lib == "numpy" and n == 2):
            return "permute(%s, %s)" % (X(args[0]), self.axes_arg(em, args[1]))
        if fname in ("transpose", "t") and n == 1:
            return "transpose(%s)" % X(args[0])
        if fname in ("concatenate", "concat", "cat") and n in (1, 2) and isinstance(args[0], (ast.List, ast.Tuple)) \
                and args[0].elts and not kw:
            parts = [X(a) for a in args[0].elts]
            at = args[1] if n == 2 else axis
            return "concat((%s%s), axis=%s)" % (", ".join(parts), "," if len(parts) == 1 else "",
                                               X(at) if at is not None else "0")
        if fname == "take" and lib == "numpy" and n in (2, 3) and (n == 3 or axis is not None) and not kw:
            # numpy's take along an axis (without one numpy flattens x: not mapped)
            return "take(%s, %s, axis=%s)" % (X(args[0]), X(args[1]), X(args[2] if n == 3 else axis))
        if fname == "index_select" and lib == "torch" and n == 3 and not kw:
            return "take(%s, %s, axis=%s)" % (X(args[0]), X(args[2]), X(args[1]))
        if fname == "reshape" and n >= 2:
            return "reshape(%s, %s)" % (X(args[0]), self.shape_arg(em, args[1:], True))
        if fname in ("copy", "clone") and n == 1:
            return "copy(%s)" % X(args[0])
        if fname in ("asarray", "array", "tensor", "as_tensor") and n == 1:
            a = args[0]
            dt = self.dtype_arg(em, kw.pop("dtype", None))
            if isinstance(a, (ast.List, ast.Tuple)):
                v = "stack(%s)" % em.hoist("[%s]" % ", ".join(X(i) for i in a.elts))
            elif isinstance(a, ast.ListComp):
                v = "stack(%s)" % X(a)
            else:
                v = ("copy(%s)" if fname in ("array", "tensor") else "%s") % X(a)
            return "cast(%s, %s)" % (v, dt) if dt else v
        if fname == "stack" and n == 1 and axis is None:
            a = args[0]
            if isinstance(a, (ast.List, ast.Tuple)):
                return "stack(%s)" % em.hoist("[%s]" % ", ".join(X(i) for i in a.elts))
            return "stack(%s)" % X(a)
        if fname == "count_nonzero" and n == 1:
            return "sum(cast((%s != 0), i32))" % X(args[0])
        if fname in ("zeros", "ones", "empty", "full"):
            dt = self.dtype_arg(em, kw.pop("dtype", None))
            kw.pop("device", None)
            if fname == "full":
                if n != 2:
                    em.refuse(e, "%s.full without a fill value" % lib, "full(shape, value)")
                shape = self.shape_arg(em, args[:1] if lib == "numpy" or not isinstance(args[0], ast.Constant) else args[:1])
                if dt is None:
                    v = args[1]
                    if isinstance(v, ast.Constant) and isinstance(v.value, bool):
                        dt = "bool"
                    elif isinstance(v, ast.Constant) and isinstance(v.value, int):
                        dt = "i64"
                    elif isinstance(v, ast.Constant) and isinstance(v.value, float):
                        dt = "f64" if lib == "numpy" else "f32"
                fill = X(args[1])
                if dt and not _is_weak(args[1]):
                    fill = "cast(%s, %s)" % (fill, dt)
                return "full(%s, %s%s)" % (shape, fill, ", dtype=%s" % dt if dt else "")
            if lib == "torch":
                shape = self.shape_arg(em, args)
                dt = dt or "f32"
            else:
                if n != 1:
                    em.refuse(e, "numpy.%s with more arguments" % fname, "np.%s(shape, dtype=...)" % fname)
                shape = self.shape_arg(em, args)
                dt = dt or "f64"
            return "%s(%s, dtype=%s)" % ("ones" if fname == "ones" else "zeros", shape, dt)
        if fname in ("zeros_like", "ones_like", "empty_like", "full_like"):
            dt = self.dtype_arg(em, kw.pop("dtype", None))
            a = X(args[0])
            fill = {"zeros_like": "0", "empty_like": "0", "ones_like": "1"}.get(fname)
            if fname == "full_like":
                if n != 2:
                    em.refuse(e, "full_like without a value", "full_like(x, v)")
                fill = X(args[1])
                v = "where(true, cast(%s, %s), %s)" % (fill, dt, a) if dt else "(%s * 0 + %s)" % (a, fill)
                return v
            v = "where(true, %s, %s)" % (fill, a)
            return "cast(%s, %s)" % (v, dt) if dt else v
        if fname == "arange":
            dt = self.dtype_arg(em, kw.pop("dtype", None)) or "i64"
            if n == 1:
                return "iota((%s,), dtype=%s)" % (X(args[0]), dt)
            if n == 2:
                lo, hi = X(args[0]), X(args[1])
                return "(iota(((%s - %s),), dtype=%s) + %s)" % (hi, lo, dt, lo)
            em.refuse(e, "arange with a step", "arange(n) * step + start")
        if fname == "sigmoid" and n == 1:
            return "sigmoid(%s)" % X(args[0])
        if fname == "shape" and n == 1:
            return "%s.shape" % X(args[0])
        if fname == "size" and n == 1:
            return "len(reshape(%s, [-1]))" % X(args[0])
        if fname in ("cumsum", "sort", "argsort", "unique", "concatenate", "concat", "cat", "hstack", "vstack",
                     "nonzero", "flip"):
            em.refuse(e, "%s.%s" % (lib, fname), "a loop over the elements, or a list and stack(...)")
        em.refuse(e, "%s.%s" % (lib, fname), "see docs/jit.md for the mapped names")

    def axes_arg(self, em, a):
        """A permutation's axes as the language takes them: a tuple or list written out."""
        if isinstance(a, (ast.Tuple, ast.List)):
            return "(%s%s)" % (", ".join(em.expr(i) for i in a.elts), "," if len(a.elts) == 1 else "")
        return em.expr(a)

    def reduce(self, em, e, op, x, axis, keep, kw):
        if kw:
            em.refuse(e, "%s with %s=" % (op, next(iter(kw))), "%s(x, axis=...)" % op)
        parts = [x]
        if axis is not None and not (isinstance(axis, ast.Constant) and axis.value is None):
            parts.append("axis=%s" % em.expr(axis))
        if keep is not None:
            parts.append("keepdims=%s" % em.expr(keep))
        return "%s(%s)" % (op, ", ".join(parts))

    def shape_arg(self, em, args, bracket=False):
        """A shape from np.zeros((2, 3)), np.zeros(3), torch.zeros(2, 3), x.reshape(-1, 1)."""
        if bracket and (len(args) > 1 or isinstance(args[0], (ast.Tuple, ast.List))):
            items = args if len(args) > 1 else args[0].elts
            return "[%s]" % ", ".join(em.expr(i) for i in items)
        if len(args) == 1:
            a = args[0]
            if isinstance(a, (ast.Tuple, ast.List)):
                items = [em.expr(i) for i in a.elts]
                return "(%s,)" % items[0] if len(items) == 1 else "(%s)" % ", ".join(items)
            if isinstance(a, ast.Attribute) and a.attr == "shape":
                return em.expr(a)
            if isinstance(a, ast.Subscript) and isinstance(a.value, ast.Attribute) and a.value.attr == "shape":
                if isinstance(a.slice, ast.Slice):
                    return em.expr(a)
            if isinstance(a, ast.BinOp) and isinstance(a.op, ast.Add):
                return em.expr(a) # x.shape + (1,)
            return "(%s,)" % em.expr(a)
        return "(%s)" % ", ".join(em.expr(a) for a in args)

    def dtype_arg(self, em, node):
        if node is None:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            dt = _DT_NAMES.get(node.value) or {"f4": "f32", "f8": "f64", "i4": "i32", "i8": "i64"}.get(node.value)
            if dt:
                return dt if node.value not in ("float", "int") else {"float": "f64", "int": "i64"}[node.value]
        if isinstance(node, ast.Name) and node.id not in self.locals:
            v = self.unit.env.get(node.id)
            if v is float:
                return "f64"
            if v is int:
                return "i64"
            if v is bool:
                return "bool"
        if isinstance(node, ast.Attribute):
            mod = self.module_of(node.value)
            if mod in ("numpy", "torch"):
                dt = _CASTS.get(node.attr)
                if mod == "torch" and node.attr in ("float", "double", "int", "long"):
                    dt = _TORCH_CASTS[node.attr]
                if dt:
                    return dt
        em.refuse(node, "this dtype", "np.float32, np.float64, np.int32, np.int64, bool (or torch's)")

    # -- methods of arrays and lists
    def method(self, em, e, obj, name, args, kw):
        X = em.expr
        n = len(args)
        if name == "append" and n == 1:
            v = X(args[0])
            v = self.fit(id(e), v)
            return "%s.append(%s)" % (X(obj), v)
        if name == "pop" and n == 0:
            return "%s.pop()" % X(obj)
        x = X(obj)
        axis = kw.pop("axis", None) or kw.pop("dim", None)
        keep = kw.pop("keepdims", None) or kw.pop("keepdim", None)
        if name in _REDUCE and name not in ("amax", "amin"):
            if n == 1:
                axis = args[0]
            elif n > 1:
                em.refuse(e, "x.%s with several axes" % name, "reduce one axis at a time")
            return self.reduce(em, e, _REDUCE[name], x, axis, keep, kw)
        if name in ("astype", "to", "type") and n == 1:
            return "cast(%s, %s)" % (x, self.dtype_arg(em, args[0]))
        if name in _TORCH_CASTS and n == 0:
            return "cast(%s, %s)" % (x, _TORCH_CASTS[name])
        if name in ("reshape", "view") and n >= 1:
            return "reshape(%s, %s)" % (x, self.shape_arg(em, args, True))
        if name in ("flatten", "ravel") and n == 0:
            return "reshape(%s, [-1])" % x
        if name in ("copy", "clone", "detach") and n == 0:
            return "copy(%s)" % x if name != "detach" else x
        if name in ("item", "numpy", "cpu", "contiguous") and n == 0:
            return x
        if name in ("dot", "matmul", "mm", "mv") and n == 1:
            return "matmul(%s, %s)" % (x, X(args[0]))
        if name in ("transpose", "swapaxes") and n == 2: # PyTorch's x.transpose(a, b); numpy's of 2-D alike
            return "swapaxes(%s, %s, %s)" % (x, X(args[0]), X(args[1]))
        if name in ("transpose", "t") and n == 0:
            return "transpose(%s)" % x
        if name in ("transpose", "permute") and n >= 1: # numpy's x.transpose(1, 0, 2), PyTorch's permute
            return "permute(%s, %s)" % (x, self.axes_arg(em, args[0]) if n == 1 else
                                        "(%s)" % ", ".join(X(a) for a in args))
        if name in _UNARY and n == 0:
            return "%s(%s)" % (_UNARY[name], x)
        if name in ("clip", "clamp"):
            lo = args[0] if n > 0 else kw.pop("min", None)
            hi = args[1] if n > 1 else kw.pop("max", None)
            if lo is not None:
                x = "max(%s, %s)" % (x, X(lo))
            if hi is not None:
                x = "min(%s, %s)" % (x, X(hi))
            return x
        if name == "size" and n == 1:
            return "%s.shape[%s]" % (x, X(args[0]))
        if name in ("numel",) and n == 0 or (name == "size" and n == 0):
            return "len(reshape(%s, [-1]))" % x
        if name == "dim" and n == 0:
            return "%s.ndim" % x
        if name in ("maximum", "minimum") and n == 1:
            return "%s(%s, %s)" % (name[:3], x, X(args[0]))
        if name == "pow" and n == 1:
            return "pow(%s, %s)" % (x, X(args[0]))
        if name in ("atan2", "arctan2") and n == 1:
            return "atan2(%s, %s)" % (x, X(args[0]))
        if name in _BITWISE and n == 1:
            return "(%s %s %s)" % (x, _BITWISE[name], X(args[0]))
        if name in ("bitwise_not",) and n == 0:
            return "(~%s)" % x
        if name in ("tolist", "insert", "extend", "index", "count", "remove", "sort", "reverse"):
            em.refuse(e, "the method .%s()" % name, "append, pop, indexing, a loop, or stack(...)")
        em.refuse(e, "the method .%s()" % name, "see docs/jit.md for the mapped names")


def _fold(name, items):
    v = items[0]
    for i in items[1:]:
        v = "%s(%s, %s)" % (name, v, i)
    return v


def _walk_own(body):
    """Every node of a body, not looking into nested defs and lambdas."""
    stack = list(body)
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(n))


class _NeedCall(Exception):
    def __init__(self, node, texts):
        super().__init__("call")
        self.node = node
        self.texts = texts


# ---- translating and compiling one signature -----------------------------------------------------

_MAX_ROUNDS = 40


_graph_counter = [0]


def _specialize(unit, key, stack=()):
    """(graph name, text of its graph, {name: text} of the graphs it calls, result types,
    compiled graph) of unit for key."""
    got = unit.cache.get(key)
    if got is not None:
        return got
    if len(stack) > 64:
        raise JitError("cfx.jit: calls nest deeper than 64", "deep calls")
    tr = _Translation(unit, key, list(stack) + [unit])
    if not stack:
        tr.gname = unit.name
    else:
        _graph_counter[0] += 1
        tr.gname = "%s_g%d" % (unit.name, _graph_counter[0])
    tr.gname = re.sub(r"[^A-Za-z0-9_]", "_", tr.gname)
    if tr.gname in _RESERVED or tr.gname.startswith("_jit_"):
        tr.gname = "f_" + tr.gname
    deps = {}

    def compile_text(mode):
        for _ in range(_MAX_ROUNDS):
            try:
                text, nodes, em = tr.emit(mode)
            except _NeedCall as need:
                # probe the arguments' types with the function cut at this call
                text, nodes, em = tr.emit("prefix", need.node)
                text += "".join(deps.values())
                g = _compile_fixing(tr, text, nodes, "prefix")
                if g is None:
                    continue
                slots = _slots(g)
                types = []
                qi = 0
                for t in need.texts:
                    if t is None:
                        types.append(None)
                        continue
                    ty = slots.get("_jit_q%d" % qi)
                    qi += 1
                    if ty is None:
                        raise _Refuse(need.node, "a call whose arguments are not values here",
                                      "assign them to variables first")
                    types.append(ty)
                callee = _callee_unit(tr, need.node)
                ckey = tuple(types)
                name, ctext, cdeps, rtypes, _ = _specialize(callee, ckey, tr.stack)
                deps.update(cdeps)
                deps[name] = ctext
                tr.fixes.calls[id(need.node)] = (ckey, name, len(rtypes))
                continue
            full = text + "".join(deps.values())
            g = _compile_fixing(tr, full, nodes, mode)
            if g is not None:
                return g, text, em
        raise JitError("cfx.jit: the translation of %s did not settle after %d rounds"
                       % (unit.name, _MAX_ROUNDS), "no settle")

    try:
        if tr.returns_values:
            g, text, em = compile_text("probe")
            _result_types(tr, em, _slots(g))
        else:
            tr.fixes.returns = []
        g, text, em = compile_text("final")
    except _Refuse as r:
        raise JitError(unit.message(r.node, "cfx.jit does not take %s: %s"
                                    % (r.construct, r.instead)), r.construct) from None
    result = (tr.gname, text, deps, list(tr.fixes.returns), g)
    unit.cache[key] = result
    return result


def _callee_unit(tr, call):
    f = call.func
    if isinstance(f, ast.Name):
        if f.id in tr.nested_defs():
            return tr.nested_unit(f.id)
        return tr.unit.env[f.id]._unit
    raise AssertionError("callee")


def _result_types(tr, em, slots):
    """The results' types from the probe's _jit_rK slots: per item, one shape, the dtypes
    promoted (a bare literal takes the others')."""
    rets = [(n, k) for n, k in ((n, em.ret_index.get(id(n))) for n in _walk_own(tr.unit.node.body)
                                if isinstance(n, ast.Return)) if k is not None]
    rets.sort(key=lambda p: p[1])
    found = []
    for node, k in rets:
        if "_jit_r%d" % k in slots:
            found.append((node, [slots["_jit_r%d" % k]], False))
        elif "_jit_r%d[0]" % k in slots:
            items = []
            i = 0
            while "_jit_r%d[%d]" % (k, i) in slots:
                items.append(slots["_jit_r%d[%d]" % (k, i)])
                i += 1
            found.append((node, items, True))
    if not found:
        raise _Refuse(tr.unit.node, "a function whose returns cfx cannot see (each one is in a branch that never runs)",
                      "return a value at the end")
    n = len(found[0][1])
    for node, items, _ in found:
        if len(items) != n:
            raise _Refuse(node, "returns of %d and %d values" % (n, len(items)), "return as many values on every path")
    types = []
    for i in range(n):
        strong = [(node, items[i]) for node, items, _ in found if not _weak_item(node, i)]
        pool = strong or [(node, items[i]) for node, items, _ in found]
        shape = pool[0][1][1]
        dt = pool[0][1][0]
        for node, t in pool:
            if t[1] != shape:
                raise _Refuse(node, "a value whose type changes across branches: this return gives %s, another %s"
                              % (_type_text(*t), _type_text(dt, shape)),
                              "return values of one shape on every path")
            dt = _promote(dt, t[0])
        types.append((dt, shape))
    for node, items, _ in found:
        for i, t in enumerate(items):
            if t[0] != types[i][0] and not _weak_item(node, i):
                tr.fixes.ret_cast[(id(node), i)] = types[i][0]
    tr.fixes.returns = types


def _weak_item(ret, i):
    v = ret.value
    if isinstance(v, ast.Tuple):
        return i < len(v.elts) and _is_weak(v.elts[i])
    return _is_weak(v)


def _compile_fixing(tr, text, nodes, mode):
    """The compiled entry graph of text, or None after learning a fix from cfx's messages
    (the caller emits again). JitError for what cannot be fixed."""
    try:
        m = _compile(text, filename="<cfx.jit %s>" % tr.unit.name)
        return m.graph(tr.gname)
    except CompileError as err:
        fixed = False
        first = None
        for d in err.diagnostics:
            node = nodes[d.line - 1] if 0 < d.line <= len(nodes) else None
            msg = d.message
            m = _VAR_TYPE.search(msg) or _JOIN.search(msg)
            if m and not m.group(1).startswith("_jit_r") and m.group(1) != "_jit_probe":
                name = m.group(1)
                t1, t2 = _parse_type(m.group(2)), _parse_type(m.group(3))
                if t1 and t2 and t1[1] == t2[1]:
                    want = _promote(t1[0], t2[0])
                    if tr.fixes.widen.get(name) != want:
                        tr.fixes.widen[name] = want
                        fixed = True
                        continue
                if t1 and t2 and first is None:
                    first = (node, "a value whose type changes: '%s' is %s, then %s (numpy would "
                             "rebind it; cfx keeps one type per variable)" % (name, m.group(2), m.group(3)),
                             "use another name for the value of the other shape")
                continue
            m = _PART.search(msg) or _LIST_TAKE.search(msg)
            if m and node is not None:
                t1, t2 = _parse_type(m.group(2)), _parse_type(m.group(3))
                site = node
                if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                    site = node.value
                if t1 and t2:
                    # numpy casts the value to the array's dtype and broadcasts it to the part
                    want = (t1[0], t1[1] if t1[1] != t2[1] and t1[1] else None)
                    if tr.fixes.site.get(id(site)) != want:
                        tr.fixes.site[id(site)] = want
                        fixed = True
                        continue
            m = _UNBOUNDED.search(msg)
            if m and first is None:
                first = (node, "a list whose length has no bound ('%s' grows in a loop whose trip "
                         "count is known only at run time)" % m.group(1),
                         "append in a for loop over range(N) with N known from shapes or module "
                         "constants, or preallocate an array (np.zeros(N)) and write its rows")
                continue
            if _NOT_BOOL.search(msg) and node is not None and id(node) not in tr.fixes.truthy:
                tr.fixes.truthy.add(id(node))
                fixed = True
                continue
            if first is None:
                first = (node, None, None, d)
        if fixed:
            return None
        if first is not None and first[1] is not None:
            raise _Refuse(first[0], first[1], first[2])
        d = first[3] if first else (err.diagnostics[0] if err.diagnostics else None)
        node = first[0] if first else None
        gen_line = text.splitlines()[d.line - 1].strip() if d and 0 < d.line <= len(text.splitlines()) else ""
        detail = d.message if d else str(err)
        raise JitError(tr.unit.message(node or tr.unit.node, "cfx: %s (the translation: `%s`)" % (detail, gen_line))
                       + "\nthe program cfx.jit wrote:\n" + _numbered(text)) from None


def _numbered(text):
    return "".join("%4d  %s\n" % (i + 1, l) for i, l in enumerate(text.splitlines()))


# ---- the decorator -------------------------------------------------------------------------------

class JitFunction:
    """A Python function compiled by cfx per signature. Call it as the function; .signatures
    lists the cached signatures, .source(*args, **kw) the cfx program a call runs."""

    def __init__(self, fn, backend="auto", max_iters=None):
        self.__wrapped__ = fn
        self.__name__ = getattr(fn, "__name__", "jit")
        self.__doc__ = getattr(fn, "__doc__", None)
        self._fn = fn
        self._backend = backend
        self._max_iters = int(max_iters or 0)
        self._sig = inspect.signature(fn)
        self._nparams = len(self._sig.parameters)
        for p in self._sig.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise JitError("cfx.jit: %s takes *%s: give it plain parameters" % (self.__name__, p.name),
                               "*args")
        self._unit_cache = None
        self._specs = {}
        # the defaults of the last parameters, when they are all positional: a call that
        # leaves them out binds without inspect
        tail = []
        for p in reversed(list(self._sig.parameters.values())):
            if p.default is p.empty or p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                break
            tail.insert(0, p.default)
        positional = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                         for p in self._sig.parameters.values())
        self._tail = tuple(tail) if positional else None

    @property
    def _unit(self):
        if self._unit_cache is None:
            self._unit_cache = _unit_of(self._fn)
        return self._unit_cache

    def _values(self, args, kw):
        if not kw:
            n = len(args)
            if n == self._nparams:
                return args
            if self._tail is not None and self._nparams - len(self._tail) <= n < self._nparams:
                return args + self._tail[n - self._nparams:]
        b = self._sig.bind(*args, **kw)
        b.apply_defaults()
        return tuple(b.arguments.values())

    def _spec(self, values):
        key = tuple(_arg_kind(v) for v in values)
        spec = self._specs.get(key)
        if spec is None:
            spec = self._build(key)
        return spec, key

    def _build(self, key):
        unit = self._unit
        name, own, deps, rtypes, g = _specialize(unit, key)
        text = own + "".join(deps.values())
        inputs = [p.name for p in g.inputs]
        present = [i for i, k in enumerate(key) if k is not None]
        if len(present) != len(inputs):
            raise AssertionError("cfx.jit: inputs")
        spec = _Spec(g, list(zip(inputs, present)), len(rtypes), text, name)
        self._specs[key] = spec
        return spec

    def __call__(self, *args, **kw):
        values = self._values(args, kw)
        spec = self._specs.get(tuple(map(_arg_kind, values)))
        if spec is None:
            spec = self._spec(values)[0]
        # positionally, in the graph's order: numpy arrays then take the graph's quick call
        res = spec.graph(*[_host(values[i]) for _, i in spec.inputs],
                         backend=self._backend, max_iters=self._max_iters)
        if spec.nresults == 1:
            return res["r0"]
        if spec.nresults == 0:
            return None
        return tuple(res.values())

    @property
    def signatures(self):
        """The cached signatures: for each, one (dtype, shape) per parameter (None for None)."""
        return list(self._specs)

    def source(self, *args, **kw):
        """The cfx program a call with these arguments runs (compiled and cached if new)."""
        return self._spec(self._values(args, kw))[0].text

    def __repr__(self):
        return "<cfx.jit %s, %d signature%s>" % (self.__name__, len(self._specs),
                                                 "" if len(self._specs) == 1 else "s")


def _host(v):
    t = type(v)
    if t.__module__ == "numpy" and t.__name__ != "ndarray":
        import numpy
        if isinstance(v, numpy.generic):
            return numpy.asarray(v)
    return v


def jit(fn=None, *, backend="auto", max_iters=None):
    """@cfx.jit or @cfx.jit(backend="cpu", max_iters=N): fn translated into cfx and compiled
    for each signature of its arguments (see docs/jit.md)."""
    if fn is None:
        return lambda f: JitFunction(f, backend=backend, max_iters=max_iters)
    return JitFunction(fn, backend=backend, max_iters=max_iters)
