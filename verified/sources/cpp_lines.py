"""C/C++ text as this build compiles it: where a name is defined, and whether that is a body.

A header is read in three passes, each keeping the line count so that a line number found
in one is the line of the file:

1. `strip_comments`: comments removed, string and character literals emptied.
2. `verified.sources.cpp_preprocessor.branch_states`: each line's preprocessor state under this
   build's macros; a line of a branch this build does not compile is never searched, and
   only the first branch of an undecided group counts for the braces.
3. `Source.scopes`: the brace scopes open at the start of each line: namespaces, classes
   (class/struct/union), enums and bodies (functions, initialisers, anything else).

`find(source, symbol)` then picks the line that defines `symbol` (`Owner::name` is looked
for inside Owner's braces), preferring a body to a declaration and, for a name without an
owner, a namespace-level definition to a same-named member; see `find` for the order.
"""
import bisect
import re
from dataclasses import dataclass, field

from verified.sources.cpp_preprocessor import MAYBE, SKIPPED, TAKEN, branch_states

DEFINITION, DECLARATION = "definition", "declaration"


# ---------------------------------------------------------------- pass 1: comments and literals

def strip_comments(text):
    """`text` with comments replaced by spaces (newlines kept) and literals emptied (`""`, `''`)."""
    out, i, n = [], 0, len(text)
    number = False  # inside a numeric literal, where ' is a digit separator
    while i < n:
        c = text[i]
        two = text[i:i + 2]
        if two == "//":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if two == "/*":
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("".join("\n" if ch == "\n" else " " for ch in text[i:end]))
            i = end
            continue
        raw = re.match(r'R"([^()\\\s]{0,16})\(', text[i:i + 20]) if c == "R" and not number else None
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            close = text.find(")" + raw[1] + '"', i)
            end = n if close < 0 else close + len(raw[1]) + 2
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
            continue
        if c in "\"'" and not (c == "'" and number):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = min(j + 1, n)
            continue
        if c.isdigit() and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            number = True
        elif not (c.isalnum() or c in "_.'"):
            number = False
        out.append(c)
        i += 1
    return "".join(out)


# ---------------------------------------------------------------- pass 3: scopes

@dataclass(eq=False)  # scopes are compared by identity
class Scope:
    kind: str  # namespace | class | enum | body
    name: str
    line: int  # 0-based line of the name (namespace, class, enum) or of the opening brace
    end: int = -1  # 0-based line of the closing brace
    parents: tuple = field(default=(), repr=False)


_NAMESPACE_HEAD = re.compile(r"\bnamespace\s*((?:\w+\s*::\s*)*\w*)\s*(?:\[\[[^\]]*\]\]\s*)?$")
_EXTERN_HEAD = re.compile(r'\bextern\s*""\s*$')
_ATTRIBUTES = r"(?:(?:[A-Z][A-Z0-9_]*(?:\s*\([^()]*\))?|alignas\s*\([^()]*\)|\[\[[^\]]*\]\])\s+)*"
_CLASS_HEAD = re.compile(rf"\b(?:class|struct|union)\s+{_ATTRIBUTES}(\w+)\s*(?:<.*>)?\s*(?:final\s*)?(?::[^{{}};]*)?$",
                         re.S)
_ENUM_HEAD = re.compile(rf"\benum\b(?:\s+(?:class|struct))?\s+{_ATTRIBUTES}(\w+)\s*(?::[^{{}};()]*)?$")


class Source:
    """One C/C++ file read for this build: code lines, their states, and the scopes open at each line."""

    def __init__(self, text, macros):
        self.raw = text.splitlines()
        self.code = strip_comments(text).splitlines()
        self.code += [""] * (len(self.raw) - len(self.code))
        self.states, self.directive_lines = branch_states(self.code, macros)
        self.searchable = [state != SKIPPED and i not in self.directive_lines for i, state in enumerate(self.states)]
        self.line_starts = [0]
        for line in self.code[:-1]:
            self.line_starts.append(self.line_starts[-1] + len(line) + 1)
        # the searchable code as one string, other lines blanked to the same length (offsets agree)
        self.flat = "\n".join(line if self.searchable[i] else " " * len(line) for i, line in enumerate(self.code))
        self._scan()

    def _scan(self):
        """Walk the structural code (TAKEN and MAYBE lines, no directives) brace by brace."""
        structural = "\n".join(line if self.states[i] in (TAKEN, MAYBE) and i not in self.directive_lines
                                else " " * len(line) for i, line in enumerate(self.code))
        stack, head_start = [], 0
        self.scopes = []  # per line: the tuple of scopes open at its start
        self.types = []  # class and enum scopes, in order
        for index, start in enumerate(self.line_starts):
            self.scopes.append(tuple(stack))
            for match in re.finditer(r"[{};]", self.code[index]):
                position = start + match.start()
                if structural[position] != match[0]:
                    continue  # a line that does not count for the structure
                if match[0] == "{":
                    scope = self._classify(structural[head_start:position], head_start, index)
                    scope.parents = tuple(stack)
                    stack.append(scope)
                    if scope.kind in ("class", "enum"):
                        self.types.append(scope)
                elif match[0] == "}" and stack:
                    stack.pop().end = index
                head_start = position + 1

    def _classify(self, head, head_start, brace_line):
        match = _NAMESPACE_HEAD.search(head)
        if match:
            return Scope("namespace", match[1].replace(" ", ""), brace_line)
        if _EXTERN_HEAD.search(head):
            return Scope("namespace", "", brace_line)
        for kind, pattern in (("enum", _ENUM_HEAD), ("class", _CLASS_HEAD)):
            match = pattern.search(head)
            if match:
                return Scope(kind, match[1], self.line_of(head_start + match.start(1)))
        return Scope("body", "", brace_line)

    def line_of(self, offset):
        return bisect.bisect_right(self.line_starts, offset) - 1

    def place(self, index):
        """'namespace' (only namespaces open), 'member' (directly in a class) or 'body'."""
        scopes = self.scopes[index]
        if all(s.kind == "namespace" for s in scopes):
            return "namespace"
        return "member" if scopes[-1].kind == "class" else "body"

    def has_body(self, index, column):
        """Whether the function whose parameter list opens at `column` of line `index` is defined
        there (a body, `= default`, `= delete`) rather than only declared (`;`, `= 0;`)."""
        flat, paren = self.flat, self.line_starts[index] + column
        depth = 0
        for i in range(paren, len(flat)):
            char = flat[i]
            if char in "([":
                depth += 1
            elif char in ")]":
                depth -= 1
            elif depth == 0 and char == "{":
                return True
            elif depth == 0 and char == ";":
                return bool(re.search(r"=\s*(?:default|delete)\s*$", flat[paren:i]))
        return False


# ---------------------------------------------------------------- finding a definition

_NOT_A_DECLARATION = {"return", "if", "else", "while", "for", "new", "throw", "case", "delete", "co_return", "using",
                      "friend", "goto", "sizeof", "static_assert"}
_TYPE_TOKENS = r"(?:(?:[\w:<>,*&\[\]]*\w[\w:<>,*&\[\]]*)\s+)"  # words before a name: a type, qualifiers


@dataclass(frozen=True)
class Found:
    line: int  # 1-based
    form: str  # definition | declaration
    source: int = 0  # 0: the file searched; 1...: the companion files, in the order given
    why: str = ""


def find(source, symbol, companions=()):
    """Where `symbol` (`name` or `Owner::...::name`) is defined in `source`, or None.

    Owners are classes or namespaces, found inside one another; members are searched only
    inside the owner's braces. Candidates, in this order:

    - with an owner: a member with a body; an out-of-class `Owner::name(...) {` in this
      file, then in its companions (`X_impl.h`, `X_inl.h`, `X-inl.h`); a member declaration;
    - without: a namespace-level definition; one in the companions; a namespace-level
      declaration; a member of any class with a body; a member declaration.

    Within a rank, a class/enum definition beats a macro, a type alias (`using name =`,
    `typedef ... name;`), a variable, a function with a return type, and a bare `name(` (a
    constructor), and an earlier line beats a later one.
    """
    *owners, name = symbol.split("::")
    scope_filter = _owner_filter(source, owners)
    if scope_filter is None:
        return None
    candidates = _candidates(source, name, scope_filter, owners)
    ordered = []
    if owners:
        ordered += [c for c in candidates if c[0] == "in" and c[1] == DEFINITION]
        ordered += _out_of_class(source, owners[-1], name, 0)
        for number, companion in enumerate(companions, start=1):
            ordered += _out_of_class(companion, owners[-1], name, number)
        ordered += [c for c in candidates if c[0] == "in" and c[1] == DECLARATION]
    else:
        ordered += [c for c in candidates if c[0] == "namespace" and c[1] == DEFINITION]
        for number, companion in enumerate(companions, start=1):
            ordered += [(where, form, rank, line, number)
                        for where, form, rank, line, _ in _candidates(companion, name, lambda s: True, [])
                        if where == "namespace" and form == DEFINITION]
        ordered += [c for c in candidates if c[0] == "namespace" and c[1] == DECLARATION]
        ordered += [c for c in candidates if c[0] == "member" and c[1] == DEFINITION]
        ordered += [c for c in candidates if c[0] == "member" and c[1] == DECLARATION]
    if not ordered:
        return None
    where, form, _, line, number = ordered[0]
    why = {"in": "member", "namespace": "namespace level", "member": "class member",
           "out": "out-of-class body"}[where]
    return Found(line + 1, form, number, why)


def _owner_filter(source, owners):
    """A test on a line's scope stack: is it directly inside the owner (or any scope, without owners)?"""
    if not owners:
        return lambda scopes: True
    allowed = [()]  # scope paths that may contain the next owner
    owner_scopes = []
    for owner in owners:
        owner_scopes = [s for s in source.types + _namespaces(source)
                        if s.name.split("::")[-1] == owner and s.kind in ("class", "namespace")
                        and any(s.parents[:len(p)] == p for p in allowed)]
        if not owner_scopes:
            return None
        allowed = [s.parents + (s,) for s in owner_scopes]
    targets = set(map(id, owner_scopes))
    return lambda scopes: bool(scopes) and id(scopes[-1]) in targets


def _namespaces(source):
    seen, found = set(), []
    for scopes in source.scopes:
        for scope in scopes:
            if scope.kind == "namespace" and id(scope) not in seen:
                seen.add(id(scope))
                found.append(scope)
    return found


def _candidates(source, name, in_owner, owners):
    """(where, form, rank, 0-based line, 0) for each line that may define `name`;
    where: 'in' (inside the owner), or without owners 'namespace' or 'member'."""
    found = []
    n = re.escape(name)
    for scope in source.types:
        if scope.name == name and source.searchable[scope.line]:
            found.append((scope.line, 0, DEFINITION))
    define = re.compile(rf"^\s*#\s*define\s+{n}\b")
    for index in sorted(source.directive_lines):
        if source.states[index] != SKIPPED and name in source.code[index] and define.match(source.code[index]):
            found.append((index, 1, DEFINITION))
    alias = re.compile(rf"^\s*(?:template\s*<.*>\s*)?using\s+{n}\s*=|^\s*typedef\b.*\b{n}\s*;")
    for index, line in enumerate(source.code):
        if name in line and source.searchable[index] and alias.search(line):
            found.append((index, 1.5, DEFINITION))
    patterns = [(2, re.compile(rf"^\s*{_TYPE_TOKENS}+[*&]*{n}\s*(?:;|=|\{{|\[)")),
                (3, re.compile(rf"^\s*{_TYPE_TOKENS}+[*&]*~?{n}\s*\(")),
                (4, re.compile(rf"^\s*~?{n}\s*\("))]
    for index, line in enumerate(source.code):
        if name not in line or not source.searchable[index]:
            continue
        stripped = line.strip()
        if stripped.startswith((":", ",")) or stripped.endswith(","):
            continue
        before = line.split(name)[0]
        if stripped.split()[0] in _NOT_A_DECLARATION or "=" in before or _FORWARD.search(before):
            continue
        for rank, pattern in patterns:
            match = pattern.search(line)
            if match:
                if rank == 2:
                    form = DECLARATION if re.search(r"\bextern\b", before) else DEFINITION
                else:
                    form = DEFINITION if source.has_body(index, match.end() - 1) else DECLARATION
                found.append((index, rank, form))
                break
    result = []
    for index, rank, form in found:
        if owners:
            if rank == 1 or not in_owner(source.scopes[index]):
                continue
            where = "in"
        else:
            where = source.place(index) if rank != 1 else "namespace"
            if where == "body":
                continue
        result.append((where, form, rank, index, 0))
    result.sort(key=lambda c: (c[2], c[3]))
    return result


_FORWARD = re.compile(r"\b(?:class|struct|union|enum)\s+(?:\w+\s+)*$")  # `struct X;` declares, the body is elsewhere


def _out_of_class(source, owner, name, number):
    """Out-of-class definitions `Owner::name(...) {` (or `Owner<T>::name`) at namespace level."""
    pattern = re.compile(rf"(?:^|[\s*&:]){re.escape(owner)}(?:<[^;{{}}]*?>)?::~?{re.escape(name)}\s*\(")
    found = []
    for index, line in enumerate(source.code):
        if name not in line or not source.searchable[index] or source.place(index) != "namespace":
            continue
        match = pattern.search(line)
        if match and line.split()[0] not in _NOT_A_DECLARATION and "=" not in line[:match.start()] \
                and source.has_body(index, match.end() - 1):
            found.append(("out", DEFINITION, 0, index, number))
    return found
