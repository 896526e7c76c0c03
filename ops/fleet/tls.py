"""Throw-away certificates for the reference fleet and the tests: a CA, a server certificate for
127.0.0.1 and localhost, a client certificate, and the wrong ones a test needs (another CA, an
expired or not yet valid client certificate, a server certificate for another host).

Made with `cryptography` (already installed beside the fleet clients), EC P-256 keys, files
0600 in one directory. Nothing here is a secret worth keeping: every fleet makes its own.

    pki = make_pki(directory)          # {"ca", "server_cert", "server_key", "client_cert", ...}
    issue_client(pki, directory, "renewed")   # another client certificate of the same CA
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from pathlib import Path
from typing import Any

HOSTS = ("127.0.0.1", "localhost")


def _key():
    from cryptography.hazmat.primitives.asymmetric import ec
    return ec.generate_private_key(ec.SECP256R1())


def _name(common_name: str):
    from cryptography import x509
    from cryptography.x509.oid import NameOID
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write(path: Path, data: bytes) -> str:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, data)
    finally:
        os.close(fd)
    return str(path)


def _pem_key(key) -> bytes:
    from cryptography.hazmat.primitives import serialization
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _pem_cert(cert) -> bytes:
    from cryptography.hazmat.primitives import serialization
    return cert.public_bytes(serialization.Encoding.PEM)


def _certificate(subject: str, key, issuer_name, issuer_key, *, ca: bool = False,
                 hosts: tuple[str, ...] = (), client: bool = False,
                 not_before: datetime.datetime | None = None,
                 not_after: datetime.datetime | None = None):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import ExtendedKeyUsageOID
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder()
               .subject_name(_name(subject))
               .issuer_name(issuer_name or _name(subject))
               .public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(not_before or now - datetime.timedelta(minutes=5))
               .not_valid_after(not_after or now + datetime.timedelta(days=30))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=True, content_commitment=False, key_encipherment=False,
            data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
            encipher_only=False, decipher_only=False), critical=True)
    if hosts:
        names = []
        for host in hosts:
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                names.append(x509.DNSName(host))
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    usage = ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH
    if not ca:
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    return builder.sign(issuer_key or key, hashes.SHA256())


def _ca(directory: Path, name: str) -> dict[str, Any]:
    key = _key()
    cert = _certificate(f"agent-memory test CA {name}", key, None, None, ca=True)
    return {"key": key, "cert": cert,
            "path": _write(directory / f"{name}.crt", _pem_cert(cert))}


def _leaf(directory: Path, stem: str, authority: dict[str, Any], **kwargs: Any) -> tuple[str, str]:
    key = _key()
    cert = _certificate(stem, key, authority["cert"].subject, authority["key"], **kwargs)
    return (_write(directory / f"{stem}.crt", _pem_cert(cert)),
            _write(directory / f"{stem}.key", _pem_key(key)))


def make_pki(directory: Path) -> dict[str, str]:
    """Every file a TLS fleet and its failure tests need, made fresh in `directory`:
    ca, server_cert/server_key, client_cert/client_key (the good ones); other_ca,
    other_client_cert/key and other_server_cert/key (signed by another CA); expired_client_cert/
    key, future_client_cert/key; wrong_host_server_cert/key (for another host name)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    now = datetime.datetime.now(datetime.timezone.utc)
    ca, other = _ca(directory, "ca"), _ca(directory, "other-ca")
    files = {"ca": ca["path"], "other_ca": other["path"]}
    for stem, authority, kwargs in (
            ("server", ca, {"hosts": HOSTS}),
            ("client", ca, {"client": True}),
            ("other-client", other, {"client": True}),
            ("other-server", other, {"hosts": HOSTS}),
            ("wrong-host-server", ca, {"hosts": ("agent-memory.invalid",)}),
            ("expired-client", ca, {"client": True,
                                    "not_before": now - datetime.timedelta(days=30),
                                    "not_after": now - datetime.timedelta(days=1)}),
            ("future-client", ca, {"client": True,
                                   "not_before": now + datetime.timedelta(days=1),
                                   "not_after": now + datetime.timedelta(days=30)}),
            ("soon-client", ca, {"client": True,
                                 "not_after": now + datetime.timedelta(days=3)})):
        cert, key = _leaf(directory, stem, authority, **kwargs)
        prefix = stem.replace("-", "_")
        files[f"{prefix}_cert"], files[f"{prefix}_key"] = cert, key
    _write(directory / "ca.key", _pem_key(ca["key"]))  # for renewals (issue_client)
    return files


def issue_client(directory: Path, stem: str) -> tuple[str, str]:
    """Another client certificate from the CA `make_pki` made in `directory`: a renewal, for
    the tests that replace certificate files in place. (cert path, key path)"""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    directory = Path(directory)
    ca = {"cert": x509.load_pem_x509_certificate((directory / "ca.crt").read_bytes()),
          "key": serialization.load_pem_private_key((directory / "ca.key").read_bytes(), None)}
    return _leaf(directory, stem, ca, client=True)
