"""One check's outcome: what was checked, of what, whether it held, and the numbers that say so."""

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class CheckResult:
    name: str  # postings_drop, coverage_drop, refusals_rise, keyword_partial, run_unfinished, run_*
    subject: str  # what it is about: "qcwy 北京/python", "qcwy run 12"
    ok: bool
    detail: str

    def line(self) -> str:
        return f"{'ok  ' if self.ok else 'FAIL'} {self.name:<18} {self.subject}: {self.detail}"

    def as_dict(self) -> dict:
        return asdict(self)


def failed(checks: list[CheckResult]) -> list[CheckResult]:
    return [check for check in checks if not check.ok]
