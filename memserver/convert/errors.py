"""The one error a converter raises: what is wrong with the original, and the fix."""

from __future__ import annotations


class ConversionError(Exception):
    """An original that cannot be converted; ``message`` names the problem, ``fix`` the fix."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return f"{self.message}; {self.fix}"
