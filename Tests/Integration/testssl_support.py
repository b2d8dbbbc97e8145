"""testssl.sh (Debian's `testssl.sh` package, the program `testssl`) against a TLS endpoint, for the tests that
check the server's own HTTPS and nginx's in the cluster with a tool others wrote. The checks are the ones
that take well under a minute on a quiet machine: protocols (-p), cipher categories (-s), the server's
defaults and certificate (-S), the HTTP headers with HSTS (-h) and the vulnerabilities (-U); results are
read from `--jsonfile`, and testssl's own summary lines are printed (pytest -s shows them)."""
import json
import pathlib
import shutil
import subprocess

import pytest

CHECKS = ("-p", "-s", "-S", "-h", "-U")
# Findings (testssl's ids) that must say "not offered": no protocol below TLS 1.2, no weak cipher category.
# cipherlist_AVERAGE is testssl's "obsolete CBC ciphers" (CBC without AEAD, the ones that go with RSA key
# transport or no forward secrecy on old servers): a modern configuration offers none.
NOT_OFFERED = ("SSLv2", "SSLv3", "TLS1", "TLS1_1", "cipherlist_NULL", "cipherlist_aNULL", "cipherlist_EXPORT",
               "cipherlist_LOW", "cipherlist_3DES_IDEA", "cipherlist_AVERAGE")
OFFERED = ("TLS1_2", "TLS1_3", "cipherlist_STRONG")


def testssl_program():
    """The program, or a skip saying how to get it."""
    program = shutil.which("testssl") or shutil.which("testssl.sh")
    if program is None:
        pytest.skip("testssl is not installed (scripts/install-deps.sh --test installs testssl.sh)")
    return program


class ScanReport:
    """testssl's findings by id (severity, finding) and its text output."""

    def __init__(self, findings, text):
        self.findings = findings
        self.text = text

    def finding(self, name):
        assert name in self.findings, f"testssl reported no {name}:\n{self.text}"
        return self.findings[name]["finding"]

    def severity(self, name):
        self.finding(name)
        return self.findings[name]["severity"]

    def summary(self):
        """testssl's own lines for what the tests assert, as it printed them."""
        wanted = ("SSLv2", "SSLv3", "TLS 1", "NULL", "Anonymous", "Export", "LOW:", "Triple DES", "Obsolete CBC", "Strong encryption",
                  "Chain of trust", "Trust (hostname)", "Signature Algorithm", "Server key size", "Strict Transport Security",
                  "Heartbleed", "CCS", "ROBOT", "Secure Renegotiation", "Secure Client-Initiated", "CRIME", "BREACH", "POODLE",
                  "TLS_FALLBACK_SCSV", "SWEET32", "FREAK", "DROWN", "LOGJAM", "BEAST", "LUCKY13", "RC4")
        return [line.rstrip() for line in self.text.splitlines() if line.strip().startswith(wanted)]


def run_testssl(target, ca, folder, checks=CHECKS, timeout=900):
    """testssl against `target` ("host:port"), the certificate chain checked against `ca` (a PEM file) as well as
    the system's CAs. `folder` keeps its JSON and text output."""
    program = testssl_program()
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    json_file = folder / "testssl.json"
    json_file.unlink(missing_ok=True)
    result = subprocess.run(
        [program, "--quiet", "--color", "0", "--warnings", "off", "--connect-timeout", "10", "--openssl-timeout", "10",
         *checks, "--add-ca", str(ca), "--jsonfile", str(json_file), target],
        capture_output=True, text=True, timeout=timeout)
    (folder / "testssl.txt").write_text(result.stdout + result.stderr)
    assert json_file.exists(), f"testssl wrote no JSON (exit {result.returncode}):\n{result.stdout}\n{result.stderr}"
    findings = {entry["id"]: entry for entry in json.loads(json_file.read_text())}
    report = ScanReport(findings, result.stdout)
    print(f"\ntestssl {' '.join(checks)} against {target}:")
    print("\n".join(report.summary()))
    return report


def assert_modern_tls(report, hsts=True):
    """No protocol below TLS 1.2 and no weak cipher category offered; TLS 1.2 and 1.3 and strong (AEAD) ciphers
    offered; the chain trusted with the given CA and valid for the name; HSTS good; no vulnerability found."""
    for name in NOT_OFFERED:
        assert report.finding(name).startswith("not offered"), f"{name}: {report.finding(name)}"
    for name in OFFERED:
        assert report.finding(name).startswith("offered"), f"{name}: {report.finding(name)}"
    assert report.finding("cert_chain_of_trust").startswith("passed"), report.finding("cert_chain_of_trust")
    assert report.severity("cert_trust") == "OK", report.finding("cert_trust")
    if hsts:
        assert report.severity("HSTS_time") == "OK", report.finding("HSTS_time")
    # Every vulnerability check testssl ran came out OK (or merely informational).
    vulnerabilities = ("heartbleed", "CCS", "ticketbleed", "ROBOT", "secure_renego", "secure_client_renego", "CRIME_TLS", "BREACH",
                       "POODLE_SSL", "fallback_SCSV", "SWEET32", "FREAK", "DROWN", "LOGJAM", "BEAST", "LUCKY13", "RC4")
    for name in vulnerabilities:
        if name in report.findings:
            assert report.severity(name) in ("OK", "INFO"), f"{name}: {report.severity(name)} {report.finding(name)}"
