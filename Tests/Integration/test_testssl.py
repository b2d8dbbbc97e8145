"""The server's own HTTPS as testssl.sh (Debian's package) sees it: no protocol below TLS 1.2, no weak cipher
category, TLS 1.2 and 1.3 with strong ciphers, the certificate chain trusted with the test's CA, HSTS good, no
vulnerability found. testssl's summary lines are printed (pytest -s shows them)."""
import pytest

from testssl_support import ScanReport, assert_modern_tls, run_testssl
from tls_support import tls_ca  # noqa: F401 (the fixture)


def test_testssl_finds_the_servers_https_modern(make_server, tls_ca, tmp_path):
    certificate, key = tls_ca.issue()
    server = make_server(args=["--tls-certificate", str(certificate), "--tls-key", str(key)])
    assert server.wait_for_output("listening on https://")
    report = run_testssl(f"127.0.0.1:{server.port}", tls_ca.certificate, tmp_path / "testssl")
    assert_modern_tls(report)


def finding(severity, text):
    return {"severity": severity, "finding": text}


GOOD = {
    **{name: finding("OK", "not offered") for name in ("SSLv2", "SSLv3", "TLS1", "TLS1_1", "cipherlist_NULL", "cipherlist_aNULL",
                                                      "cipherlist_EXPORT", "cipherlist_LOW", "cipherlist_3DES_IDEA", "cipherlist_AVERAGE")},
    "TLS1_2": finding("OK", "offered"), "TLS1_3": finding("OK", "offered with final"), "cipherlist_STRONG": finding("OK", "offered"),
    "cert_chain_of_trust": finding("OK", "passed."), "cert_trust": finding("OK", "Ok via SAN"),
    "HSTS_time": finding("OK", "365 days (=31536000 seconds) > 15552000 seconds"), "heartbleed": finding("OK", "not vulnerable"),
}


@pytest.mark.parametrize("name, bad", [
    ("TLS1", finding("LOW", "offered (deprecated)")),
    ("TLS1_1", finding("LOW", "offered (deprecated)")),
    ("TLS1_3", finding("MEDIUM", "not offered")),
    ("cipherlist_AVERAGE", finding("LOW", "offered")),
    ("cipherlist_3DES_IDEA", finding("MEDIUM", "offered")),
    ("cert_chain_of_trust", finding("CRITICAL", "failed (chain incomplete).")),
    ("HSTS_time", finding("LOW", "HSTS max-age is too short")),
    ("HSTS_time", None),
    ("heartbleed", finding("CRITICAL", "VULNERABLE")),
])
def test_the_checks_refuse_what_they_forbid(name, bad):
    """Each assertion can fail: a report good but for one finding is refused."""
    assert_modern_tls(ScanReport(GOOD, ""))
    findings = dict(GOOD)
    if bad is None:
        del findings[name]
    else:
        findings[name] = bad
    with pytest.raises(AssertionError):
        assert_modern_tls(ScanReport(findings, ""))
