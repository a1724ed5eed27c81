"""Is an HTML `pattern` attribute usable by a browser?

Browsers compile `pattern` as a JavaScript regular expression with the `v` flag (ECMA-262
UnicodeSets mode) and silently ignore it when that fails: the control then has no pattern for
people, and Chromium leaves `pattern` out of the tool's JSON Schema. The `v` flag is stricter
than Python's `re` (e.g. `[a-z0-9-]` is an error: `-` must be escaped in a class), so this
module checks the pattern against that grammar. It is a syntax check, not a regex engine:
Unicode property names (`\\p{...}`) are not checked against the list of known properties.
"""

from __future__ import annotations

import re

SYNTAX_CHARACTERS = frozenset("^$\\.*+?()[]{}|")
CLASS_SYNTAX_CHARACTERS = frozenset("()[]{}/-\\|")
# Doubled, these are reserved for future set operators inside a `v`-mode class.
CLASS_RESERVED_DOUBLES = frozenset("&!#$%*+,.:;<=>?@^`~")
CLASS_RESERVED_PUNCTUATORS = frozenset("&-!#%,:;<=>@`~")
CLASS_ESCAPES = frozenset("dDsSwW")
CONTROL_ESCAPES = {"f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}

QUANTIFIER_BRACES = re.compile(r"\{(\d+)(?:(,)(\d*))?\}")
GROUP_NAME = re.compile(r"([^\W\d]|\$)[\w$]*>")
MODIFIERS = re.compile(r"\?([ims]*)(-([ims]*))?:")
PROPERTY = re.compile(r"\{[A-Za-z_]+(?:=[A-Za-z0-9_]+)?\}")
HEX4 = re.compile(r"[0-9A-Fa-f]{4}")
# ECMA-262's DecimalDigit is ASCII only (str.isdigit and Python's \d accept other digits).
DECIMAL_DIGITS = frozenset("0123456789")
BACKREFERENCE = re.compile(r"[1-9][0-9]*")
HEX_BRACED = re.compile(r"\{([0-9A-Fa-f]+)\}")


class _Invalid(Exception):
    """The pattern is not a `v`-mode regular expression."""


def is_valid_pattern(pattern: str) -> bool:
    """True when browsers compile `pattern` (with the `v` flag) and so honour it."""
    try:
        _Parser(pattern).parse()
    except _Invalid:
        return False
    return True


class _Parser:
    """Recursive descent over ECMA-262's RegExp grammar in UnicodeSets mode."""

    def __init__(self, source: str):
        self.source = source
        self.at = 0
        self.groups = 0
        self.names: set[str] = set()  # group names visible in the current alternative
        self.all_names: set[str] = set()
        self.backreferences: list[int] = []
        self.named_references: list[str] = []

    # -- cursor

    def peek(self, ahead: int = 0) -> str:
        index = self.at + ahead
        return self.source[index] if index < len(self.source) else ""

    def eat(self, text: str) -> bool:
        if self.source.startswith(text, self.at):
            self.at += len(text)
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.eat(text):
            raise _Invalid

    def match(self, regex: re.Pattern[str]) -> re.Match[str]:
        found = regex.match(self.source, self.at)
        if not found:
            raise _Invalid
        self.at = found.end()
        return found

    # -- pattern, alternatives, terms

    def parse(self) -> None:
        self.disjunction()
        if self.at != len(self.source):
            raise _Invalid  # an unmatched ")"
        if any(number > self.groups for number in self.backreferences):
            raise _Invalid
        if any(name not in self.all_names for name in self.named_references):
            raise _Invalid

    def disjunction(self) -> None:
        # A group name may repeat only in different alternatives: `(?<y>..)|(?<y>..)`.
        before, seen = set(self.names), set()
        self.alternative()
        while self.eat("|"):
            seen |= self.names
            self.names = set(before)
            self.alternative()
        self.names |= seen

    def alternative(self) -> None:
        while self.peek() not in ("", "|", ")"):
            self.term()

    def term(self) -> None:
        if self.peek() in ("^", "$") or self.source.startswith(("\\b", "\\B"), self.at):
            self.at += 1 if self.peek() in ("^", "$") else 2
            return
        for lookaround in ("(?=", "(?!", "(?<=", "(?<!"):
            if self.eat(lookaround):
                self.disjunction()
                self.expect(")")
                return  # not quantifiable with the u or v flag
        self.atom()
        self.quantifier()

    def quantifier(self) -> None:
        if self.peek() in ("*", "+", "?"):
            self.at += 1
        elif self.peek() == "{":
            braces = self.match(QUANTIFIER_BRACES)
            low, comma, high = braces.groups()
            if comma and high and int(high) < int(low):
                raise _Invalid
        else:
            return
        self.eat("?")

    def atom(self) -> None:
        char = self.peek()
        if char == "\\":
            self.at += 1
            self.atom_escape()
        elif char == "[":
            self.character_class()
        elif char == "(":
            self.group()
        elif char in SYNTAX_CHARACTERS and char != ".":
            raise _Invalid  # a lone quantifier, brace or bracket
        else:
            self.at += 1

    def group(self) -> None:
        self.expect("(")
        if self.eat("?:"):
            pass
        elif self.eat("?<"):
            name = self.group_name()
            if name in self.names:
                raise _Invalid
            self.names.add(name)
            self.all_names.add(name)
            self.groups += 1
        elif self.peek() == "?":
            added, dash, removed = self.match(MODIFIERS).groups()
            flags = added + (removed or "")
            if len(set(flags)) != len(flags) or (dash and not flags):
                raise _Invalid
        else:
            self.groups += 1
        self.disjunction()
        self.expect(")")

    def group_name(self) -> str:
        return self.match(GROUP_NAME).group(0)[:-1]

    # -- escapes

    def atom_escape(self) -> None:
        char = self.peek()
        if char in DECIMAL_DIGITS and char != "0":
            self.backreferences.append(int(self.match(BACKREFERENCE).group(0)))
        elif char == "k":
            self.at += 1
            self.expect("<")
            self.named_references.append(self.group_name())
        elif char in CLASS_ESCAPES or char in ("p", "P"):
            self.class_escape()
        else:
            self.character_escape()

    def class_escape(self) -> None:
        char = self.peek()
        self.at += 1
        if char in ("p", "P"):
            self.match(PROPERTY)

    def character_escape(self) -> int:
        """The code point of an escape such as `\\n`, `\\x41`, `\\u{1F600}` or `\\.`."""
        char = self.peek()
        self.at += 1
        if char in CONTROL_ESCAPES:
            return CONTROL_ESCAPES[char]
        if char == "c":
            letter = self.peek()
            if not (letter.isascii() and letter.isalpha()):
                raise _Invalid
            self.at += 1
            return ord(letter) % 32
        if char == "0":
            if self.peek() in DECIMAL_DIGITS:
                raise _Invalid
            return 0
        if char == "x":
            return int(self.match(re.compile(r"[0-9A-Fa-f]{2}")).group(0), 16)
        if char == "u":
            if self.peek() == "{":
                code = int(self.match(HEX_BRACED).group(1), 16)
                if code > 0x10FFFF:
                    raise _Invalid
                return code
            return int(self.match(HEX4).group(0), 16)
        if char in SYNTAX_CHARACTERS or char == "/":
            return ord(char)
        raise _Invalid  # identity escapes of other characters are errors with u or v

    # -- classes (UnicodeSets mode: nested classes, && and --)

    def character_class(self) -> None:
        self.expect("[")
        self.eat("^")
        self.class_contents()
        self.expect("]")

    def class_contents(self) -> None:
        if self.peek() == "]":
            return
        first = self.class_range_or_operand()
        operator = self.source[self.at:self.at + 2]
        if operator in ("&&", "--"):
            if first == "range":
                raise _Invalid
            while self.eat(operator):
                if operator == "&&" and self.peek() == "&":
                    raise _Invalid
                if self.class_operand()[0] == "range":
                    raise _Invalid
            if self.peek() != "]":
                raise _Invalid  # operators cannot be mixed, nor a union follow
            return
        while self.peek() not in ("]", ""):
            if self.source.startswith(("&&", "--"), self.at):
                raise _Invalid
            self.class_range_or_operand()

    def class_range_or_operand(self) -> str:
        kind, low = self.class_operand()
        if kind == "character" and self.peek() == "-" and self.peek(1) != "-":
            self.at += 1
            kind, high = self.class_operand()
            if kind != "character" or high < low:
                raise _Invalid
            return "range"
        return kind

    def class_operand(self) -> tuple[str, int]:
        char = self.peek()
        if char == "[":
            self.character_class()
            return "set", -1
        if char == "\\":
            self.at += 1
            escaped = self.peek()
            if escaped in CLASS_ESCAPES or escaped in ("p", "P"):
                self.class_escape()
                return "set", -1
            if escaped == "q":
                self.at += 1
                self.class_strings()
                return "set", -1
            if escaped == "b":
                self.at += 1
                return "character", 8
            if escaped in CLASS_RESERVED_PUNCTUATORS:
                self.at += 1
                return "character", ord(escaped)
            return "character", self.character_escape()
        if not char or char in CLASS_SYNTAX_CHARACTERS:
            raise _Invalid
        if char in CLASS_RESERVED_DOUBLES and self.peek(1) == char:
            raise _Invalid
        self.at += 1
        return "character", ord(char)

    def class_strings(self) -> None:
        """`\\q{abc|def}`: alternatives of literal strings."""
        self.expect("{")
        while not self.eat("}"):
            if self.eat("|"):
                continue
            self.class_operand_character()

    def class_operand_character(self) -> None:
        if self.class_operand()[0] != "character":
            raise _Invalid

__all__ = ["is_valid_pattern"]
