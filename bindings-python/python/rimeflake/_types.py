"""Type aliases of the arguments (for annotations: ``rimeflake.LayoutName``)."""

from typing import Literal, NewType

LayoutName = Literal["default", "twitter", "sonyflake", "sonyflake_v2", "baidu", "js_safe"]
"""A preset name. Where a ``layout`` argument is typed, a layout spec goes through
``Layout.from_spec("clock_id=0,time=41,...")``, which mypy then cannot confuse with a
misspelt preset (``"twiter"``); the argument takes a spec string all the same at run time,
as every rimeflake front end does."""

BackendName = Literal["local", "memory"]
"""Where state and worker leases live: ``"local"`` (the state directory, the default) or
``"memory"`` (no state: not restart-safe). A server that many hosts share is named by its URL,
a :data:`BackendURL`."""

BackendURL = NewType("BackendURL", str)
"""A server backend's URL: ``"redis://[:password@]host[:port][/db]"`` (``rediss://`` for TLS) or
``"postgresql://user[:password]@host[:port]/db"`` (TLS by libpq's ``sslmode``, ``sslrootcert``,
``sslcert``, ``sslkey``; the README's "Many hosts" has the table). Wrap a URL in it for type checkers
(``rimeflake.BackendURL(os.environ["REDIS_URL"])``), which then cannot confuse it with a
misspelt name (``"memroy"``); at run time it is the string itself, and any string is accepted."""
