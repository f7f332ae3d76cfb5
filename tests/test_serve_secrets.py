"""No secret on the command line, in the environment, in what is printed or in the logs.

Real ``debategraph serve`` processes on a fresh PostgreSQL database owned by a role with
a password of its own: one started with the password only in ``PGPASSWORD`` (the URL on
the command line without it), one with the whole URL in the variable ``--db-env`` names
(and in ``DATABASE_URL`` too). Once serving, neither ``/proc/PID/cmdline``, ``ps`` nor
``/proc/PID/environ`` (the environment the process started with, whatever it unset
since) holds the password or those variables, and the log (at ``--log-level info``)
holds none. A ``--db`` with a password is refused in one line; so is an auth file that
raises anything at all; ``doctor`` masks a ``?password=``; a token sent in a URL's query
gets a 400 and its value never reaches the log.

Skipped without ``aegra-api`` or PostgreSQL, unless the real parts are required
(``.ci/run``): then they fail.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest

from debategraph.checkpoints.savers import redact_url, url_secrets, with_password
from debategraph.serve.query_tokens import REFUSAL, mask_tokens, token_in_query
from tests.aegra_server import DB_ENV, AegraServer, aegra_server, serve_command
from tests.backends import fresh_database_as, require_module
from tests.groups import one_worker
from tests.studio_server import closed_port, free_port
from tests.test_serve_safety import aegra_config_with_auth

pytestmark = [pytest.mark.timeout(300), one_worker(__name__)]

SECRET = "s3cret-Pa55word"
TOKEN = "tok-Zq81mXv0aW9p3LkT2s7Y"
WAIT_S = 60.0


# -- what hides a password and a token (no process) -----------------------------------------

REDACTED = {
    "postgresql://u:s3cret@h/db": "postgresql://u:***@h/db",
    "postgres://u:s3cret@h:5432/db?sslmode=require": "postgres://u:***@h:5432/db?sslmode=require",
    "postgresql://u@h/db?password=s3cret": "postgresql://u@h/db?password=***",
    "postgresql://u@h/db?sslmode=disable&PassWord=s3cret&x=1": (
        "postgresql://u@h/db?sslmode=disable&PassWord=***&x=1"
    ),
    "postgresql://u@h/db?sslpassword=s3cret": "postgresql://u@h/db?sslpassword=***",
    "postgresql://u:a@b@h/db?password=c;d'e": "postgresql://u:***@h/db?password=***",
    "host=h user=u password='s3 cret' dbname=d": "host=h user=u password=*** dbname=d",
    "postgresql://u@h/db": "postgresql://u@h/db",
    "postgresql://u@h/db?passfile=/home/u/.pgpass": "postgresql://u@h/db?passfile=/home/u/.pgpass",
    "debates.sqlite": "debates.sqlite",
}


@pytest.mark.parametrize("url", list(REDACTED))
def test_redact_url_hides_every_password(url: str) -> None:
    assert redact_url(url) == REDACTED[url]
    assert bool(url_secrets(url)) == (redact_url(url) != url)


@pytest.mark.parametrize("url", ["postgresql://u@h:5/db", "postgresql://h/db?sslmode=disable"])
@pytest.mark.parametrize("password", ["plain", "a!$&'()*+,;=:@/?#%[] é\"x"])
def test_a_password_added_to_a_url_reads_back_alike_in_libpq_and_sqlalchemy(
    url: str, password: str
) -> None:
    """Aegra reads its URL with SQLAlchemy (asyncpg) and psycopg (libpq)."""
    from psycopg.conninfo import conninfo_to_dict
    from sqlalchemy.engine import make_url

    full = with_password(url, password)
    assert conninfo_to_dict(full)["password"] == password
    read = make_url(full)
    assert (read.password or read.query.get("password")) == password
    assert url_secrets(full) == ["password"] and password not in redact_url(full)


def test_a_token_in_a_query_string_is_found_and_masked() -> None:
    for query in (b"api_key=x", b"limit=1&TOKEN=x", b"access_token=", b"X-Api-Key=x", b"%6Bey=x"):
        assert token_in_query(query, "/threads") == REFUSAL, query
    assert token_in_query(b"limit=10&offset=0", "/threads") is None
    assert token_in_query(b"namespace=a.b&key=item", "/store/items") is None  # an item's key
    assert token_in_query(b"key=item&token=x", "/store/items") == REFUSAL
    logged = mask_tokens(f"GET /threads?limit=1&Api_Key={TOKEN}&token={TOKEN} HTTP/1.1")
    assert logged == "GET /threads?limit=1&Api_Key=***&token=*** HTTP/1.1"


# -- refused in one line --------------------------------------------------------------------


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "debategraph.cli", *args],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def one_line_refusal(done: subprocess.CompletedProcess[str], *secrets: str) -> str:
    """The refusal's line, checked: exit 2, one line, no traceback, no secret."""
    output = done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, output
    assert "Traceback" not in output
    assert all(secret not in output for secret in secrets), output
    return lines[0].removeprefix("debategraph: error: ")


def nowhere(query: str = "", userinfo: str = "u") -> str:
    return f"postgresql://{userinfo}@127.0.0.1:{closed_port()}/nowhere{query}"


@pytest.mark.slow
@pytest.mark.parametrize(
    "query, userinfo",
    [
        ("", f"u:{SECRET}"),
        (f"?password={SECRET}", "u"),
        (f"?sslmode=disable&SSLPassword={SECRET}", "u"),
    ],
)
def test_a_password_on_the_command_line_is_refused(query: str, userinfo: str) -> None:
    url = nowhere(query, userinfo)
    done = subprocess.run(
        serve_command(url, free_port(), typed=True),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    line = one_line_refusal(done, SECRET)
    assert line.startswith(f"--db {redact_url(url)} holds a password, and any local user can")
    assert all(way in line for way in ("PGPASSWORD", "~/.pgpass", "--db-env VAR")), line


@pytest.mark.slow
def test_the_database_named_twice_or_not_at_all_is_refused() -> None:
    line = one_line_refusal(run_cli("serve", "--db", nowhere(), "--db-env", DB_ENV))
    assert line == f"--db and --db-env {DB_ENV} both name the database: give one"
    line = one_line_refusal(run_cli("serve", "--db-env", "DG_NO_SUCH_VARIABLE"))
    assert (
        line
        == "--db-env DG_NO_SUCH_VARIABLE: no such variable is set: set it to the PostgreSQL URL"
    )


@pytest.mark.slow
def test_a_password_in_the_environment_is_taken_and_never_printed() -> None:
    """``DATABASE_URL`` is no command line: its password is used, and shown masked."""
    url = nowhere(userinfo=f"u:{SECRET}")
    line = one_line_refusal(run_cli("serve", env={"DATABASE_URL": url}), SECRET)
    assert line.startswith(f"database {redact_url(url)} is unreachable: "), line
    line = one_line_refusal(run_cli("serve", "--db", nowhere(), env={"PGPASSWORD": SECRET}), SECRET)
    assert line.startswith("database postgresql://u:***@127.0.0.1:"), line  # PGPASSWORD's


@pytest.mark.slow
def test_doctor_masks_a_password_parameter() -> None:
    url = nowhere(f"?sslmode=disable&password={SECRET}")
    done = run_cli(
        "doctor", "--db", url, "--model", "m", "--base-url", f"http://127.0.0.1:{closed_port()}/v1"
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1 and SECRET not in output, output
    assert "?sslmode=disable&password=***: cannot connect" in output, output


AUTH_FILES = {
    "an Exception": ('raise Exception("the first line\\nthe second")', "Exception: the first line"),
    "sys.exit(3)": ("import sys\nsys.exit(3)", "SystemExit: 3"),
    "a bare SystemExit": ("raise SystemExit", "SystemExit"),
    "a BaseException of its own": (
        "class Gone(BaseException):\n    pass\nraise Gone('away')",
        "Gone: away",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(AUTH_FILES))
def test_an_auth_file_that_raises_anything_is_refused_in_one_line(
    tmp_path: Path, case: str
) -> None:
    text, reason = AUTH_FILES[case]
    (tmp_path / "raising_auth.py").write_text(text + "\n")
    config = aegra_config_with_auth(tmp_path, "./raising_auth.py:auth")
    done = run_cli("serve", "--db", nowhere(), "--config", str(config))
    line = one_line_refusal(done)
    assert line == f"auth handler {tmp_path / 'raising_auth.py'}:auth cannot be loaded: {reason}"


# -- a running server ----------------------------------------------------------------------


@dataclass(frozen=True)
class Database:
    """A fresh database: its URL (password included) and the password."""

    url: str
    password: str

    @property
    def without_password(self) -> str:
        parts = urlsplit(self.url)
        netloc = f"{parts.username}@{parts.hostname}:{parts.port}"
        return urlunsplit(parts._replace(netloc=netloc))


@pytest.fixture(scope="module")
def database() -> Iterator[Database]:
    require_module("aegra_api", "pip install -e '.[dev]' installs the serve extra (aegra-api)")
    with fresh_database_as("debategraph_secrets") as (url, password):
        yield Database(url, password)


#: How each server is given the database: the URL on the command line and the password
#: in PGPASSWORD; or the whole URL in the variable --db-env names (and in DATABASE_URL).
WAYS = ("PGPASSWORD", "--db-env")


@pytest.fixture(scope="module", params=WAYS)
def server(
    request: pytest.FixtureRequest, database: Database, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AegraServer]:
    logdir = tmp_path_factory.mktemp("secrets")
    args = ("--log-level", "info")
    if request.param == "PGPASSWORD":
        env = {"PGPASSWORD": database.password}
        started = aegra_server(
            database.without_password, logdir=logdir, extra_args=args, env=env, typed_db=True
        )
    else:
        env = {"DATABASE_URL": database.url}
        started = aegra_server(database.url, logdir=logdir, extra_args=args, env=env)
    with started as running:
        yield running


@pytest.mark.slow
def test_the_password_is_not_on_the_command_line_nor_in_the_environment(
    server: AegraServer, database: Database
) -> None:
    pid = server.pid
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    environ = Path(f"/proc/{pid}/environ").read_bytes()
    shown = subprocess.run(
        ["ps", "-ww", "-o", "args=", "-p", str(pid)], capture_output=True, check=True
    ).stdout
    assert b"--db-fd" in shown, shown  # started again, the URL read from a pipe
    assert b" --host 127.0.0.1 " in shown and b" --log-level info " in shown  # as it was given
    for text in (cmdline, environ, shown):
        assert database.password.encode() not in text
    variables = {entry.split(b"=", 1)[0] for entry in environ.split(b"\0")}
    assert not variables & {b"DATABASE_URL", b"PGPASSWORD", DB_ENV.encode()}, variables
    with httpx.Client(base_url=server.url, timeout=WAIT_S) as client:
        assert client.get("/health").json()["database"] == "connected"  # it has the password
        assert client.post("/threads", json={}).status_code == 200


@pytest.mark.slow
def test_a_token_in_the_url_is_refused_and_never_logged(server: AegraServer) -> None:
    with httpx.Client(base_url=server.url, timeout=WAIT_S) as client:
        for path in (f"/info?api_key={TOKEN}", f"/threads/search?limit=1&Token={TOKEN}"):
            response = client.post(path, json={}) if "search" in path else client.get(path)
            assert response.status_code == 400, response.text
            assert response.json() == {"error": "bad_request", "message": REFUSAL}
        item = client.get("/store/items", params={"namespace": "a", "key": "k"})
        assert item.status_code != 400, item.text  # a store item's key is no token
    deadline = time.monotonic() + 10
    while "Token=***" not in (log := server.log_path.read_text(errors="replace")):
        assert time.monotonic() < deadline, server.log_tail()  # the request was logged
        time.sleep(0.2)
    assert "api_key=***" in log
    assert TOKEN not in log


@pytest.mark.slow
def test_nothing_the_server_printed_holds_the_password(
    server: AegraServer, database: Database
) -> None:
    log = server.log_path.read_text(errors="replace")
    assert f"Started server process [{server.pid}]" in log  # at info, in the pid started
    assert database.password not in log


@pytest.mark.slow
def test_the_served_config_folder_is_removed_when_the_restarted_server_stops(
    database: Database, tmp_path: Path
) -> None:
    with aegra_server(database.url, logdir=tmp_path, extra_args=("--log-level", "info")) as run:
        found = re.search(r"(/\S+/debategraph-serve-\w+)/aegra\.json", run.log_path.read_text())
        assert found is not None, run.log_tail()
        folder = Path(found.group(1))
        assert folder.is_dir()
    assert not folder.exists()
