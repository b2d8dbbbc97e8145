"""Certificates for tests over HTTPS and WSS, made with the `openssl` command (never by the server's own code):
a throwaway certificate authority, and server certificates it signs for 127.0.0.1 and localhost (or other
names), valid, expired, or with a key that does not match. `tls_ca` is the pytest fixture."""
import pathlib
import socket
import ssl
import subprocess

import pytest

SERVER_NAMES = ("DNS:localhost", "IP:127.0.0.1")


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=60)


class CertificateAuthority:
    """A CA in `folder` (`ca.crt`, `ca.key`), and the server certificates it issues there."""

    def __init__(self, folder):
        self.folder = pathlib.Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.certificate = self.folder / "ca.crt"
        self.key = self.folder / "ca.key"
        self.issued = 0
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
                "-out", "ca.crt", "-days", "2", "-subj", "/CN=StoryCircle test CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=self.folder)

    def issue(self, name="server", names=SERVER_NAMES, days=2, rsa=False):
        """A server certificate and its key (`<name>.crt`, `<name>.key`, ECDSA P-256 unless `rsa`); `days`
        below 0 makes one that has expired. Returns (certificate path, key path)."""
        self.issued += 1
        extensions = self.folder / f"{name}.ext"
        extensions.write_text("subjectAltName=" + ",".join(names) + "\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n")
        key = ("-newkey", "rsa:2048") if rsa else ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256")
        openssl("req", "-new", *key, "-nodes", "-keyout", f"{name}.key",
                "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=self.folder)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-set_serial", str(1000 + self.issued),
                "-days", str(days), "-extfile", extensions.name, "-out", f"{name}.crt", cwd=self.folder)
        return self.folder / f"{name}.crt", self.folder / f"{name}.key"

    def client_context(self):
        """A client that trusts this CA alone, checks host names, and speaks what browsers speak."""
        context = ssl.create_default_context(cafile=str(self.certificate))
        return context


def serial_served(port, host="127.0.0.1"):
    """The serial number of the certificate a new connection to `port` is given (as an int)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with socket.create_connection((host, port), timeout=10) as raw, context.wrap_socket(raw) as tls:
        der = tls.getpeercert(binary_form=True)
    text = subprocess.run(["openssl", "x509", "-inform", "DER", "-noout", "-serial"], input=der, capture_output=True, check=True, timeout=30).stdout
    return int(text.decode().strip().split("=", 1)[1], 16)


@pytest.fixture
def tls_ca(tmp_path):
    return CertificateAuthority(tmp_path / "ca")
