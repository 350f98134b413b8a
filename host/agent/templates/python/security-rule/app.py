"""{{name}}: a security-rule skill. `agent security-audit` hands every project
file to `Scanner.scan`; findings join the built-in scanners' in the report."""

import re

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports.scanner import ScanTarget, ScannerSpec
from wit_world.imports.types import (
    Confidence,
    Finding,
    Location,
    Severity,
    SkillError_NotFound,
)

SCANNER = "hardcoded-password"

# `password`, optional spaces, `=` or `:`, optional spaces, then a quote.
# ASCII-only case folding, so columns count the characters of the line as is.
PASSWORD = re.compile(r"password *[=:] *([\"'])", re.IGNORECASE | re.ASCII)


def redact(line: str, quote_at: int) -> str:
    """The line with the quoted value starting at `quote_at` replaced by "***"."""
    quote = line[quote_at]
    end = line.find(quote, quote_at + 1)
    rest = line[end + 1 :] if end >= 0 else ""
    return line[:quote_at] + '"***"' + rest


def scan(target: ScanTarget) -> list[Finding]:
    findings = []
    for index, line in enumerate(target.content.split("\n")):
        match = PASSWORD.search(line)
        if match is None:
            continue
        number = index + 1
        findings.append(
            Finding(
                rule_id=SCANNER,
                title="Hard-coded password",
                description="A password is written in the file; anyone who can read it can use it.",
                severity=Severity.HIGH,
                category="secrets-exposure",
                cwe="CWE-798",
                owasp="A07:2021",
                location=Location(
                    file=target.path,
                    start_line=number,
                    end_line=number,
                    start_column=match.start() + 1,
                    end_column=0,
                    function=None,
                ),
                evidence=redact(line, match.start(1)),
                remediation="Read the password from the environment or a secret store.",
                confidence=Confidence.HIGH,
                references=[],
                metadata=[],
            )
        )
    return findings


class Scanner(exports.Scanner):
    def list_scanners(self) -> list[ScannerSpec]:
        return [
            ScannerSpec(
                name=SCANNER,
                description="Passwords written into source or configuration",
                file_patterns=[],
                languages=[],
            )
        ]

    def scan(self, name: str, target: ScanTarget) -> list[Finding]:
        if name != SCANNER:
            raise Err(SkillError_NotFound(f"no scanner `{name}`"))
        return scan(target)
