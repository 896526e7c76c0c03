"""Credential problems, told apart from outages: a client certificate the server refuses, a
server this configuration does not trust, a host name the server's certificate does not carry,
a token the service refuses. Retrying fixes none of these; fixing the configuration does.

Most arrive with their own mark (the adapter's `tls_trust`, `tls_identity`, `authentication`
and `authorization` categories, or a TLS alert: sync.links.failures reads those). One does not: a
server built on asyncio (the fleet's framework) that refuses a client certificate closes the
connection right after the handshake without flushing its alert, and the client sees the
same "server disconnected" as during an outage. So when a TLS link fails that way,
`diagnose()` looks once with the standard library: it completes a handshake with the link's
own settings and asks for `/health`. An answer means the service works (the failure was an
outage); an alert names the refusal; a close without a byte right after a completed
handshake, on every attempt, is a refused client certificate.

`file_problems()` checks the certificate files a section names, offline (readable, a
certificate, a key that matches it, within its validity period, a key file closed to others):
`config validate` and `status` report them, and a diagnosis names the likely cause with them.
Standard library, plus `cryptography` (a dependency of the fleet clients) to read a
certificate's validity dates, imported only when a check runs.
"""

from __future__ import annotations

import os
import socket
import ssl
import time
from typing import Any

from agent_memory.sync.links.failures import (CLIENT_CERTIFICATE, FIXES, HOSTNAME,
                                              SERVER_TRUST, tls_alert)

EXPIRY_WARNING_DAYS = 14
DIAGNOSIS_TIMEOUT = 3.0


def ssl_files(section: dict[str, Any], resolve) -> dict[str, str]:
    """The cert, key and ca a client section names, as the clients pick them (client.ssl first,
    then ssl), resolved to paths."""
    found: dict[str, str] = {}
    client = section.get("client") if isinstance(section.get("client"), dict) else {}
    for place in (client.get("ssl"), section.get("ssl")):
        if not isinstance(place, dict):
            continue
        for key in ("cert", "key", "ca"):
            value = place.get(key)
            if key not in found and isinstance(value, str) and value:
                found[key] = resolve(value)
    return found


def check_hostname(section: dict[str, Any]) -> bool:
    """Whether the clients check the server's host name: the top-level ssl.check_hostname,
    false when absent (both clients' default)."""
    ssl_section = section.get("ssl") if isinstance(section.get("ssl"), dict) else {}
    return ssl_section.get("check_hostname") is True


# --- offline checks of the files ---------------------------------------------------------------
def file_problems(name: str, section: dict[str, Any], resolve,
                  now: float | None = None) -> tuple[list[str], list[str]]:
    """(problems, warnings) of the certificate files of one client section. A problem makes the
    configuration unusable (unreadable, not a certificate, a key that does not match, expired or
    not yet valid); a warning does not (expiring within 14 days, a key others may read). A key's
    path is never shown."""
    problems: list[str] = []
    warnings: list[str] = []
    files = ssl_files(section, resolve)
    now = time.time() if now is None else now
    for key in ("cert", "ca"):
        path = files.get(key)
        if path is None:
            continue
        what = "client certificate" if key == "cert" else "CA certificate"
        try:
            with open(path, "rb") as handle:
                data = handle.read(1 << 20)
        except OSError as exc:
            problems.append(f"{name}: the {what} {path} cannot be read ({exc.strerror})")
            continue
        validity = _validity(data)
        if validity is None:
            problems.append(f"{name}: {path} holds no PEM certificate")
            continue
        not_before, not_after = validity
        if now < not_before:
            problems.append(f"{name}: the {what} {path} is not valid yet (from "
                            f"{_day(not_before)})")
        elif now > not_after:
            problems.append(f"{name}: the {what} {path} expired on {_day(not_after)}")
        elif not_after - now < EXPIRY_WARNING_DAYS * 86400:
            warnings.append(f"{name}: the {what} {path} expires on {_day(not_after)}, in "
                            f"{int((not_after - now) // 86400)} days")
    key_path = files.get("key")
    if key_path is not None:
        try:
            mode = os.stat(key_path).st_mode
            with open(key_path, "rb"):
                pass
        except OSError as exc:
            problems.append(f"{name}: the private key (ssl.key; path not shown) cannot be read "
                            f"({exc.strerror})")
            key_path = None
        else:
            if mode & 0o077:
                warnings.append(f"{name}: the private key (ssl.key; path not shown) may be read "
                                f"by others (mode {mode & 0o777:o}): chmod 600 it")
    if files.get("cert") and key_path and not any(files["cert"] in p for p in problems):
        try:
            ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_cert_chain(files["cert"], key_path)
        except ssl.SSLError:
            problems.append(f"{name}: the private key (ssl.key) does not match the client "
                            f"certificate {files['cert']}")
        except OSError:
            pass  # reported above
    return problems, warnings


def config_file_problems(config) -> tuple[list[str], list[str]]:
    """(problems, warnings) of the certificate files of both client sections of a
    configuration (`file_problems` of each)."""
    problems: list[str] = []
    warnings: list[str] = []
    for name in ("ailogger_client", "embedding_client"):
        section = config.document.get(name)
        if isinstance(section, dict):
            found, warned = file_problems(name, section, config.resolve_path)
            problems += found
            warnings += warned
    return problems, warnings


def _validity(data: bytes) -> tuple[float, float] | None:
    try:
        from cryptography import x509
        cert = x509.load_pem_x509_certificate(data)
    except Exception:  # noqa: BLE001 - not a PEM certificate, whatever the library says
        return None
    return cert.not_valid_before_utc.timestamp(), cert.not_valid_after_utc.timestamp()


def _day(moment: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(moment))


# --- a look at the server after a failure ------------------------------------------------------
def diagnose(section: dict[str, Any], resolve,
             timeout: float = DIAGNOSIS_TIMEOUT) -> tuple[str, str] | None:
    """After a TLS link failed with a disconnect: (kind, reason) when the server refuses this
    client's credentials, else None (it answers, or cannot be reached: an outage)."""
    protocol = section.get("protocol", "http")
    server = section.get("server") or {}
    if protocol not in ("https", "mtls") or not server.get("host") or not server.get("port"):
        return None
    files = ssl_files(section, resolve)
    try:
        context = ssl.create_default_context(cafile=files.get("ca"))
        context.check_hostname = check_hostname(section)
        if not context.check_hostname:
            context.verify_mode = ssl.CERT_REQUIRED
        if files.get("cert"):
            context.load_cert_chain(files["cert"], files.get("key"))
    except (OSError, ssl.SSLError) as exc:
        return CLIENT_CERTIFICATE, (f"the client certificate or key cannot be used "
                                    f"({exc}); {FIXES[CLIENT_CERTIFICATE]}")
    closed = 0
    for _attempt in range(2):
        outcome = _look(context, server["host"], int(server["port"]), timeout)
        if outcome == "answered" or outcome == "unreachable":
            return None
        if isinstance(outcome, tuple):
            return outcome
        closed += 1
    cause = _likely_cause(section, files, resolve)
    return CLIENT_CERTIFICATE, (
        "the server closes the connection right after the TLS handshake, without an answer, on "
        f"every attempt: it refuses this client's certificate{cause}; "
        f"{FIXES[CLIENT_CERTIFICATE]}")


def _look(context: ssl.SSLContext, host: str, port: int,
          timeout: float) -> str | tuple[str, str]:
    """One handshake and one request: "answered", "unreachable", "closed" (right after a
    completed handshake, not a byte), or a (kind, reason) refusal."""
    try:
        raw = socket.create_connection((host, port), timeout=timeout)
    except OSError:
        return "unreachable"
    try:
        try:
            conn = context.wrap_socket(raw, server_hostname=host)
        except ssl.SSLCertVerificationError as exc:
            if getattr(exc, "verify_code", None) in (62, 64):
                return HOSTNAME, (f"the server's certificate is not for {host} "
                                  f"({exc.verify_message}); {FIXES[HOSTNAME]}")
            return SERVER_TRUST, (f"the server's certificate is not trusted "
                                  f"({exc.verify_message}); {FIXES[SERVER_TRUST]}")
        except ssl.SSLError as exc:
            if tls_alert(exc):
                return CLIENT_CERTIFICATE, (f"the server refused the TLS handshake "
                                            f"({exc.reason}); {FIXES[CLIENT_CERTIFICATE]}")
            return "unreachable"  # closed during the handshake: an outage or a drop
        except OSError:
            return "unreachable"
        try:
            conn.sendall(f"GET /health HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
                         .encode())
            data = conn.recv(64)
        except ssl.SSLError as exc:
            if tls_alert(exc):
                return CLIENT_CERTIFICATE, (f"the server refused this client's certificate "
                                            f"({exc.reason}); {FIXES[CLIENT_CERTIFICATE]}")
            return "closed"  # an EOF without close_notify, right after the handshake
        except TimeoutError:
            return "unreachable"  # no answer in time: slow or away, not a refusal
        except OSError:  # reset right after the handshake
            return "closed"
        finally:
            conn.close()
        return "answered" if data else "closed"
    finally:
        raw.close()


def _likely_cause(section: dict[str, Any], files: dict[str, str], resolve) -> str:
    if not files.get("cert"):
        return " (none is configured: the server requires one, protocol mtls)"
    problems, _warnings = file_problems("", section, resolve)
    mine = [p.lstrip(": ") for p in problems if files["cert"] in p]
    if mine:
        return f" ({'; '.join(mine)})"
    return " (missing, from another CA, expired, or revoked)"


async def confirm(exc: BaseException, section: dict[str, Any] | None, resolve) -> BaseException:
    """An Unreachable that a TLS link met as a disconnect (no answer, no alert): the Credentials
    it really was when `diagnose` finds the server refusing this client, else `exc` itself."""
    from agent_memory.sync.links.failures import DISCONNECT_CATEGORIES, Credentials, Unreachable
    if not isinstance(exc, Unreachable) or isinstance(exc, Credentials) or section is None \
            or section.get("protocol", "http") == "http" \
            or exc.category not in DISCONNECT_CATEGORIES:
        return exc
    import asyncio
    found = await asyncio.to_thread(diagnose, section, resolve)
    return exc if found is None else Credentials(*found)
