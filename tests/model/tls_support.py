"""Self-signed certificates for the tests' TLS loopback servers, made by the openssl binary:
one function for the model's network and TLS-context tests and the CLI's https one-shot."""

from __future__ import annotations

import subprocess
from pathlib import Path


def self_signed(where: Path, *, name: str = "loop", alt: str = "IP:127.0.0.1") -> tuple[Path, Path]:
    """``(cert, key)`` written in ``where``: an EC certificate that is its own CA, for the
    subject ``name`` and the alternative name ``alt`` (``IP:127.0.0.1``, ``DNS:localhost``),
    valid two days."""
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", f"/CN={name}",
         "-addext", f"subjectAltName={alt}",
         "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,digitalSignature,keyCertSign"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key
