"""A throwaway PostgreSQL server: initdb into a temporary directory, pg_ctl on a free loopback port.

Tests use it through the fixtures in ``pg_fixture.py``; benchmarks use :func:`running_postgres` directly.

Loopback connections need a password (SCRAM), so wrong-password tests are real; the ``postgres``
superuser connects over the Unix socket in the data directory without one. As root, ``initdb`` and
``pg_ctl`` run as the ``postgres`` user (initdb refuses root).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

PASSWORD = "s3cret-Pa55"
USER = "agentnb"
DATABASE = "agentnb"


def _bin_dir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("pg_ctl")
    if on_path:
        return Path(on_path).parent
    raise RuntimeError("PostgreSQL is not installed: .ci/run installs Debian's postgresql package.")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """One PostgreSQL cluster in a temporary directory, on ``127.0.0.1:port``."""

    def __init__(self) -> None:
        self.bin = _bin_dir()
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="agentnb-pg-"))
        self.data = self.root / "data"
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            entry = pwd.getpwnam("postgres")
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self.root.chmod(0o755)

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = list(args)
        if self._as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, check=check, capture_output=True, text=True, timeout=120)

    def init(self) -> None:
        pwfile = self.root / "pw"
        pwfile.write_text(PASSWORD)
        if self._as_postgres:
            entry = pwd.getpwnam("postgres")
            os.chown(pwfile, entry.pw_uid, entry.pw_gid)
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            f"--pwfile={pwfile}",
            "--no-sync",
        )
        pwfile.unlink()

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c max_connections=200"
        self._run(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-w", "-l", str(self.root / "log"), "-o", options, "start"
        )

    def stop(self, mode: str = "fast") -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-w", "-m", mode, "stop", check=False)

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run SQL as the superuser over the Unix socket and return psql's output."""
        out = self._run(
            str(self.bin / "psql"),
            "-h",
            str(self.root),
            "-p",
            str(self.port),
            "-U",
            "postgres",
            "-d",
            database,
            "-v",
            "ON_ERROR_STOP=1",
            "-At",
            "-c",
            sql,
        )
        return out.stdout

    def setup_roles(self) -> None:
        self.psql(f"CREATE ROLE {USER} LOGIN PASSWORD '{PASSWORD}'")
        self.psql(f"CREATE DATABASE {DATABASE} OWNER {USER}")

    def url(
        self,
        *,
        password: str = PASSWORD,
        database: str = DATABASE,
        schema: str | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
    ) -> str:
        """A URL for the test role; ``schema`` puts it on that schema's search path."""
        url = f"postgresql://{USER}:{quote(password, safe='')}@{host}:{port or self.port}/{database}"
        if schema:
            url += f"?options=-csearch_path%3D{schema}"
        return url

    def fresh_schema(self) -> str:
        name = f"t_{uuid.uuid4().hex[:12]}"
        self.psql(f"CREATE SCHEMA {name} AUTHORIZATION {USER}", database=DATABASE)
        return name

    def cleanup(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    """Start a throwaway server with the test role and database; stop and delete it afterwards."""
    server = PostgresServer()
    try:
        server.init()
        server.start()
        server.setup_roles()
        yield server
    finally:
        server.cleanup()
