"""The preprocessor branches this build compiles: `#if` conditions under this build's macros.

`build_macros` says what a Linux x86-64 wheel defines, leaves undefined, or leaves undecided;
`evaluate` computes an `#if` expression in three-valued logic (True, False, None: cannot be
decided here); `branch_states` gives each line of a file its state: TAKEN, MAYBE (inside a
branch whose condition is undecided), ALT (a later branch of an undecided group: still
searched, but the brace structure is taken from the first one, so two versions of one
signature do not open two scopes) or SKIPPED (a branch this build does not compile).
"""
import re
from pathlib import Path

TAKEN, MAYBE, ALT, SKIPPED = "taken", "maybe", "alt", "skipped"

# Platform and compiler macros of a Linux x86-64 build, and what no wheel build defines.
_LINUX = {"__linux__": 1, "__linux": 1, "__unix__": 1, "__unix": 1, "__ELF__": 1, "__GNUC__": None}
_NOT_LINUX = ("_WIN32", "_WIN64", "_MSC_VER", "__MINGW32__", "__CYGWIN__", "__APPLE__", "__MACH__", "__MACOSX",
              "__ANDROID__", "__EMSCRIPTEN__", "__FreeBSD__", "__OpenBSD__", "__QNX__", "__XROS__")
_X86_64 = {"__x86_64__": 1, "__x86_64": 1, "__amd64__": 1}
_NOT_X86_64 = ("__aarch64__", "__arm__", "_M_ARM64", "_M_ARM", "_M_X64", "_M_IX86", "__i386__", "__powerpc__",
               "__powerpc64__", "__ppc64__", "__s390x__", "__riscv")
_NEVER = ("C10_MOBILE", "C10_ANDROID", "C10_IPHONE", "C10_MOBILE_TRIM_DISPATCH_KEYS", "STRIP_ERROR_MESSAGES",
          "STANDALONE_TORCH_HEADER", "TORCH_STABLE_ONLY", "TORCH_TARGET_VERSION", "FBCODE_CAFFE2",
          "CAFFE2_IS_XPLAT_BUILD", "C10_NODEPRECATED", "PYPY_VERSION", "SWIG", "__METAL__", "__OBJC__",
          "__SYCL_DEVICE_ONLY__", "TEMPLATE_SELECTIVE_BUILD", "C10_USE_MINIMAL_GLOG")
_DEVICE_COMPILERS = ("__CUDACC__", "__CUDA_ARCH__", "__CUDACC_RTC__", "__NVCC__", "__HIPCC__", "__HIP_ARCH__",
                     "__HIP_DEVICE_COMPILE__", "__HIP_PLATFORM_AMD__", "USE_ROCM")
_CMAKE_DEFINE = re.compile(r"^#define\s+(\w+)(?:\s+(\d+))?\s*$", re.M)
_CMAKE_UNDEF = re.compile(r"^/\*\s*#undef\s+(\w+)\s*\*/", re.M)


def build_macros(include_dir=None, system="linux", machine="x86_64", device_build=False):
    """{macro: value} this build is known to define (value None: defined, value unknown)
    or leave undefined (value False). A macro not in the table is undecided.

    Read from the installed torch: its generated `cmake_macros.h` (shared libraries, glog,
    NUMA ...); from the platform: Linux and x86-64 macros (others are left undecided); and
    what no wheel defines (mobile, stripped messages, the standalone header mode). Device
    compiler macros are undefined in a CPU-only build (`device_build` False).
    """
    macros = {name: False for name in _NEVER}
    if system == "linux":
        macros.update(_LINUX)
        macros.update({name: False for name in _NOT_LINUX})
    if machine in ("x86_64", "AMD64"):
        macros.update(_X86_64)
        macros.update({name: False for name in _NOT_X86_64})
    if not device_build:
        macros.update({name: False for name in _DEVICE_COMPILERS})
    for relative in ("torch/headeronly/macros/cmake_macros.h", "c10/macros/cmake_macros.h"):
        path = Path(include_dir) / relative if include_dir else None
        if path is not None and path.is_file():
            text = path.read_text(errors="replace")
            macros.update({m[1]: int(m[2]) if m[2] else None for m in _CMAKE_DEFINE.finditer(text)
                           if not m[1].endswith("_H_")})
            macros.update({m[1]: False for m in _CMAKE_UNDEF.finditer(text)})
    return macros


_DIRECTIVE = re.compile(r"^\s*#\s*(\w+)\s*(.*)$")


def directives(code_lines):
    """(first line index, last line index, directive, argument text) per logical directive line."""
    found, i = [], 0
    while i < len(code_lines):
        match = _DIRECTIVE.match(code_lines[i])
        if not match:
            i += 1
            continue
        first, text = i, code_lines[i]
        while text.rstrip().endswith("\\") and i + 1 < len(code_lines):
            i += 1
            text = text.rstrip()[:-1] + " " + code_lines[i]
        match = _DIRECTIVE.match(text)
        found.append((first, i, match[1], match[2].strip()))
        i += 1
    return found


def branch_states(code_lines, macros):
    """(state per line, set of directive line indexes) under `macros` (see build_macros)."""
    states = [TAKEN] * len(code_lines)
    directive_lines = set()
    stack = []  # per open #if group: [outer state, a branch surely taken, a branch undecided, a branch kept]
    current = TAKEN
    found = directives(code_lines)
    for number, (first, last, name, argument) in enumerate(found):
        directive_lines.update(range(first, last + 1))
        word = argument.split()[0] if argument else ""
        if name in ("if", "ifdef", "ifndef"):
            condition = evaluate(argument, macros) if name == "if" else _defined(word, macros)
            condition = _not(condition) if name == "ifndef" else condition
            stack.append([current, False, False, False])
            here, current = current, _enter(stack[-1], condition)
        elif name in ("elif", "elifdef", "elifndef", "else") and stack:
            if name == "else":
                condition = True
            elif name == "elif":
                condition = evaluate(argument, macros)
            else:
                condition = _defined(word, macros)
                condition = _not(condition) if name == "elifndef" else condition
            here, current = stack[-1][0], _enter(stack[-1], condition)
        elif name == "endif" and stack:
            here = current = stack.pop()[0]
        else:
            here = current
        following = found[number + 1][0] if number + 1 < len(found) else len(code_lines)
        states[first:last + 1] = [here] * (last + 1 - first)
        states[last + 1:following] = [current] * (following - last - 1)
    return states, directive_lines


def _enter(group, condition):
    """The state of the branch starting now in `group`, given its condition (True/False/None)."""
    outer, surely, undecided, kept = group
    if outer == SKIPPED or surely or condition is False:
        return SKIPPED
    state = TAKEN if condition is True and not undecided else MAYBE
    if kept or outer == ALT:
        state = ALT  # an earlier branch of this undecided group already gave the structure
    elif outer == MAYBE:
        state = MAYBE
    group[1], group[2], group[3] = condition is True, undecided or condition is None, True
    return state


def _defined(name, macros):
    if name not in macros:
        return None
    return macros[name] is not False


def _not(value):
    return None if value is None else not value


_TOKEN = re.compile(r"\s*(?:(?P<num>0[xX][0-9a-fA-F]+|\d+)[uUlL]*|(?P<id>[A-Za-z_]\w*)"
                    r"|(?P<op>&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%<>!()~&|^?:,]))")


def evaluate(expression, macros):
    """The value of an `#if` expression: True, False, or None when it depends on what is unknown here."""
    tokens = []
    position = 0
    expression = expression.strip()
    while position < len(expression):
        match = _TOKEN.match(expression, position)
        if not match or match.end() == position:
            return None
        position = match.end()
        kind = match.lastgroup
        tokens.append((kind, match[kind]))
    try:
        value, rest = _Parser(tokens, macros).parse()
    except (IndexError, ValueError, ZeroDivisionError):
        return None
    if rest:
        return None
    return None if value is None else bool(value)


class _Parser:
    """Precedence climbing over three-valued integers (None: not known here)."""

    _BINARY = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="), ("<<", ">>"),
               ("+", "-"), ("*", "/", "%")]

    def __init__(self, tokens, macros):
        self.tokens, self.macros, self.i = tokens, macros, 0

    def parse(self):
        value = self.ternary()
        return value, self.tokens[self.i:]

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else (None, None)

    def take(self, text=None):
        token = self.tokens[self.i]
        if text is not None and token[1] != text:
            raise ValueError(text)
        self.i += 1
        return token

    def ternary(self):
        condition = self.binary(0)
        if self.peek()[1] == "?":
            self.take("?")
            yes = self.ternary()
            self.take(":")
            no = self.ternary()
            return (yes if condition else no) if condition is not None else (yes if yes == no else None)
        return condition

    def binary(self, level):
        if level == len(self._BINARY):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek()[0] == "op" and self.peek()[1] in self._BINARY[level]:
            op = self.take()[1]
            right = self.binary(level + 1)
            left = _apply(op, left, right)
        return left

    def unary(self):
        kind, text = self.peek()
        if text in ("!", "-", "+", "~"):
            self.take()
            value = self.unary()
            if value is None:
                return None
            return {"!": lambda v: int(not v), "-": lambda v: -v, "+": lambda v: v, "~": lambda v: ~v}[text](value)
        if text == "(":
            self.take("(")
            value = self.ternary()
            self.take(")")
            return value
        if kind == "num":
            self.take()
            return int(text, 0) if not text.startswith("0") or text == "0" or text[1] in "xX" else int(text, 8)
        if kind == "id":
            self.take()
            if text == "defined":
                parenthesised = self.peek()[1] == "("
                if parenthesised:
                    self.take("(")
                name = self.take()[1]
                if parenthesised:
                    self.take(")")
                value = _defined(name, self.macros)
                return None if value is None else int(value)
            if self.peek()[1] == "(":  # a function-like macro or __has_include(...): not known here
                self._skip_group()
                return None
            value = self.macros.get(text, None)
            if value is False:
                return 0  # an undefined identifier is 0 in #if
            return value if isinstance(value, int) and not isinstance(value, bool) else None
        raise ValueError(text)

    def _skip_group(self):
        depth = 0
        while True:
            text = self.take()[1]
            depth += {"(": 1, ")": -1}.get(text, 0)
            if depth == 0:
                return


def _apply(op, left, right):
    if op == "&&":
        if left == 0 or right == 0:
            return 0
        return None if left is None or right is None else 1
    if op == "||":
        if (left is not None and left != 0) or (right is not None and right != 0):
            return 1
        return None if left is None or right is None else 0
    if left is None or right is None:
        return None
    return {"|": lambda: left | right, "^": lambda: left ^ right, "&": lambda: left & right,
            "==": lambda: int(left == right), "!=": lambda: int(left != right), "<": lambda: int(left < right),
            ">": lambda: int(left > right), "<=": lambda: int(left <= right), ">=": lambda: int(left >= right),
            "<<": lambda: left << right, ">>": lambda: left >> right, "+": lambda: left + right,
            "-": lambda: left - right, "*": lambda: left * right, "/": lambda: int(left / right),
            "%": lambda: left % right}[op]()
