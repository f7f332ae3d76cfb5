"""Exact arithmetic on a parsed syntax tree: the built-in ``calculator`` tool's logic.

An expression is parsed with :func:`ast.parse` and walked node by node; only numbers,
``+ - * / // % **``, unary ``+``/``-`` and parentheses are allowed, so nothing a model
writes is ever run as code (no ``eval``). Numbers are exact fractions (``0.1 + 0.2`` is
``0.3``). Sizes are bounded before each step, so no input can hang or exhaust memory:
the text, the tree, every intermediate number's size, and each power's result size.
"""

from __future__ import annotations

import ast
import math
from fractions import Fraction

#: The longest expression taken, in characters.
MAX_CHARS = 500
#: The most syntax-tree nodes an expression may have.
MAX_NODES = 200
#: The most bits the numerator or denominator of any intermediate value may have.
MAX_BITS = 4096
#: Significant digits of the decimal approximation of a result that is not exact.
DIGITS = 12

_ALLOWED = "numbers, + - * / // % ** and ( )"


class CalculatorError(ValueError):
    """Why an expression has no value: not arithmetic, too large, or dividing by zero."""


def calculate(expression: str) -> str:
    """The value of an arithmetic expression, exactly.

    Example:
        >>> calculate("48 + 48 / 2")
        '72'
        >>> calculate("(1 + 2) ** 3 % 5")
        '2'
        >>> calculate("2 / 3")
        '2/3 (about 0.666666666667)'

    Args:
        expression: The expression, e.g. ``(12 * 3.5) // 4``.

    Returns:
        The value: an integer, a terminating decimal, or a fraction with its decimal
        approximation.

    Raises:
        CalculatorError: One line saying why there is no value.
    """
    if not isinstance(expression, str) or not expression.strip():
        raise CalculatorError(f"expression {expression!r} is empty: give {_ALLOWED}")
    text = expression.strip()
    if len(text) > MAX_CHARS:
        raise CalculatorError(f"expression is {len(text)} characters long: at most {MAX_CHARS}")
    try:
        tree = ast.parse(text.replace("^", "**"), mode="eval")
    except SyntaxError:
        raise CalculatorError(f"{_short(text)} is not arithmetic: use {_ALLOWED}") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise CalculatorError(f"expression has more than {MAX_NODES} parts")
    return _show(_value(tree.body, text))


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _value(node: ast.expr, text: str) -> Fraction:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        finite = not isinstance(node.value, float) or math.isfinite(node.value)
        if isinstance(node.value, bool) or not finite:
            raise CalculatorError(f"{node.value} is not a finite number: use {_ALLOWED}")
        return _checked(Fraction(repr(node.value) if isinstance(node.value, float) else node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
        value = _value(node.operand, text)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp):
        return _binary(node.op, _value(node.left, text), _value(node.right, text))
    part = ast.get_source_segment(text.replace("^", "**"), node) or type(node).__name__
    raise CalculatorError(f"{_short(part)} is not arithmetic: use {_ALLOWED}")


def _binary(op: ast.operator, left: Fraction, right: Fraction) -> Fraction:
    if isinstance(op, ast.Add):
        return _checked(left + right)
    if isinstance(op, ast.Sub):
        return _checked(left - right)
    if isinstance(op, ast.Mult):
        return _checked(left * right)
    if isinstance(op, ast.Div | ast.FloorDiv | ast.Mod):
        if right == 0:
            raise CalculatorError("division by zero")
        if isinstance(op, ast.Div):
            return _checked(left / right)
        return _checked(Fraction(left // right) if isinstance(op, ast.FloorDiv) else left % right)
    if isinstance(op, ast.Pow):
        return _power(left, right)
    raise CalculatorError(f"operator {type(op).__name__} is not allowed: use {_ALLOWED}")


def _power(base: Fraction, exponent: Fraction) -> Fraction:
    if exponent.denominator != 1:
        raise CalculatorError(f"exponent {exponent} is not a whole number")
    power = int(exponent)
    if base == 0 and power < 0:
        raise CalculatorError("division by zero (0 to a negative power)")
    if base in (0, 1) or power == 0:
        return Fraction(1) if power == 0 else base
    size = max(abs(base.numerator).bit_length(), base.denominator.bit_length())
    if base == -1:
        return Fraction(1 if power % 2 == 0 else -1)
    if (size - 1) * abs(power) > MAX_BITS:  # the result has at least this many bits
        raise CalculatorError(f"result too large: {base} ** {power} has over {MAX_BITS} bits")
    return _checked(base**power)


def _checked(value: Fraction) -> Fraction:
    if max(value.numerator.bit_length(), value.denominator.bit_length()) > MAX_BITS:
        raise CalculatorError(f"result too large: over {MAX_BITS} bits")
    return value


def _show(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    denominator = value.denominator
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    if denominator == 1:  # a terminating decimal: write it exactly
        places = 0
        while (value * 10**places).denominator != 1:
            places += 1
        digits = str(abs(value.numerator * 10**places // value.denominator)).rjust(places + 1, "0")
        sign = "-" if value < 0 else ""
        return f"{sign}{digits[:-places]}.{digits[-places:]}"
    return f"{value} (about {_approximately(value)})"


def _approximately(value: Fraction) -> str:
    """``value`` to :data:`DIGITS` significant digits, however large or small."""
    try:
        approx = float(value)
    except OverflowError:
        approx = math.inf
    if approx != 0 and math.isfinite(approx):
        return f"{approx:.{DIGITS}g}"
    exponent = len(str(abs(value.numerator))) - len(str(value.denominator))
    mantissa = abs(value) / Fraction(10) ** exponent
    if mantissa < 1:
        mantissa, exponent = mantissa * 10, exponent - 1
    sign = "-" if value < 0 else ""
    return f"{sign}{float(mantissa):.{DIGITS}g}e{exponent:+d}"
