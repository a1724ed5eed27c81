"""`is_valid_pattern` agrees with Chromium 156 on which `pattern` attributes it honours.

Every pattern below was rendered in a form and checked with Chromium (`webmcp_agent.py
schema`): the first list kept its `pattern` in the tool schema, the second lost it.
"""

from __future__ import annotations

import pytest

from flask_webmcp.patterns import is_valid_pattern

HONOURED = [
    "", "[a-z]{2,3}", r"\d+", r"\d{3}-\d{4}", r"[\p{L}]+", r"\p{Lu}", r"\p{Script=Greek}",
    r"\P{L}", r"(?<n>a)\k<n>", r"\k<a>(?<a>x)", r"(?<a>x)|(?<a>y)", r"\1(a)", r"[a\-b]", r"[\-]",
    "[[a]]", "[a&&b]", r"[\w--\d]", r"[\w--[0-9]]", "[[a-z]--[aeiou]]", r"[\q{abc|de}]",
    r"[\q{}]", "(?:a)", "(?i:a)", "(?i-m:a)", "(?-i:a)", "(?<=a)b", "a/b", r"\/", r"\u{1F600}",
    r"\cJ", r"\cj", r"\0", "[^]", "[]", "$^", ".*", r"\B", "a*?", "a{2}?", "a{2,}", "[&]",
    "[a&b]", "[!]", r"[a-z\s]", r"[^\d]", "ab|", "|", "()", "(?:)", r"[\b]", "[.]", "[$]",
    "[^^]",
]
IGNORED = [
    "[a-z0-9-]", "[-a]", "[a-]", "[/]", "[|]", "[{]", "[}]", "[)]", "[(]", "[!!]", "[a!!]",
    r"[\d-z]", r"[a-\d]", r"[\w-a]", r"[a-\w]", "[z-a]", "a{2", "a{3,2}", "a{,3}", r"\-", r"\z",
    "(?P<x>a)", "a++", "a**", "]", "}", "(", "a|b)", "[a-z--b]", "[a-z&&[aeiou]]", r"\q{abc}",
    "(?-:a)", "(?ii:a)", r"(a)\2", r"\k<x>", r"\01", r"\x4", r"\u12", r"\u{110000}", "(?=a)*",
    r"\c1", r"[\c1]", "[a&&&b]", "[a&&b--c]", "[a--b&&c]", "[ab&&c]", "(?<a>x)(?<a>y)",
    r"\b+", "^*", "[..]", "[a$$]", "[a^^]", "[a-zA-Z0-9._%+-]+@[a-z]+", "[A-Za-z0-9_.-]{1,128}",
]


# Digits other than 0-9 are not DecimalDigits: never a backreference, nor after \0 (V8,
# Chromium's engine, agrees: `new RegExp(pattern, "v")` in Node).
NON_ASCII_DIGITS = {r"a\²": False, r"(a)\١": False, r"\0²": True, r"\0١": True}


@pytest.mark.parametrize("pattern", HONOURED)
def test_honoured(pattern):
    assert is_valid_pattern(pattern)


@pytest.mark.parametrize("pattern", IGNORED)
def test_ignored(pattern):
    assert not is_valid_pattern(pattern)


@pytest.mark.parametrize("pattern", NON_ASCII_DIGITS)
def test_only_ascii_digits_are_decimal_digits(pattern):
    assert is_valid_pattern(pattern) is NON_ASCII_DIGITS[pattern]
