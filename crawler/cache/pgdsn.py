"""The PostgreSQL store's DSN as messages may show it: without its password
(:func:`masked_dsn`, :func:`masked_message`), and refused when libpq would read
another password than the one written (:func:`check_credentials`)."""

from __future__ import annotations

from urllib.parse import unquote

from crawler.cache import StoreSettingError
from crawler.support import secrets


class DsnError(StoreSettingError):
    """The DSN's environment variable is unset, or its value is no PostgreSQL DSN."""


def masked_dsn(dsn: str) -> str:
    """The DSN as messages show it: ``postgresql://user@host:port/dbname``, never its password.

    >>> masked_dsn("postgresql://crawler:s3cret@db.example:5433/docs?sslmode=require")
    'postgresql://crawler@db.example:5433/docs'
    >>> masked_dsn("host=db user=crawler password=s3cret dbname=docs")
    'postgresql://crawler@db/docs'
    """
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(dsn)
    except Exception:  # noqa: BLE001 - psycopg's message may quote the password
        return "postgresql://(an unreadable DSN)"
    user = f"{parts['user']}@" if parts.get("user") else ""
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{parts.get('host', '')}{port}/{parts.get('dbname', '')}"


def dsn_password(dsn: str) -> str | None:
    """The password libpq reads from ``dsn`` (None: none, or an unreadable DSN)."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        value = conninfo_to_dict(dsn).get("password")
    except Exception:  # noqa: BLE001
        return None
    return str(value) if value else None


def check_credentials(dsn: str) -> None:
    """:class:`DsnError` when libpq would read another password than the one written: an
    unescaped ``@`` (libpq takes the first one, and the rest of the password for the
    host name, which its errors then print) or ``/`` (libpq then reads no password, and
    takes ``user:pass…`` for the host)."""
    from psycopg.conninfo import conninfo_to_dict

    written = secrets.connection_password(dsn)
    if not written:
        return
    try:
        read = conninfo_to_dict(dsn).get("password")
    except Exception:  # noqa: BLE001 - unreadable: psycopg says so (masked) at connect
        return
    if read != unquote(written):
        raise DsnError(
            f"The PostgreSQL DSN {secrets.mask_credentials(dsn)} has an unescaped '@' or '/' in its user or "
            "password: write them URL-encoded, as %40 and %2F (e.g. postgresql://user:pass%40word@host:5432/dbname)"
        )


def masked_message(exc: BaseException) -> str:
    """psycopg's message on one line, without any registered secret or a DSN's credentials."""
    return secrets.mask_credentials(secrets.mask(" ".join(str(exc).split()) or type(exc).__name__))
