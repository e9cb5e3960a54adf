"""One line of `farm doctor`: a check's status (ok, warn or fail), its name and what to do."""

from dataclasses import dataclass

OK, WARN, FAIL = "ok", "warn", "fail"


@dataclass(frozen=True)
class Check:
    status: str  # ok, warn or fail
    name: str
    message: str

    def line(self) -> str:
        return f"{self.status:<4}  {self.name}: {self.message}"
