"""Type aliases of the arguments (for annotations: ``rimeflake.LayoutName``)."""

from typing import Literal, Union

LayoutName = Literal["default", "twitter", "sonyflake", "sonyflake_v2", "baidu", "js_safe"]
"""A preset name. Where a ``layout`` argument is typed, a layout spec goes through
``Layout.from_spec("clock_id=0,time=41,...")``, which mypy then cannot confuse with a
misspelt preset (``"twiter"``); the argument takes a spec string all the same at run time,
as every rimeflake front end does."""

BackendName = Union[Literal["local", "memory"], str]
"""Where state and worker leases live: ``"local"`` (the state directory, the default),
``"memory"`` (no state: not restart-safe), or a server that many hosts share, named by its URL:
``"redis://[:password@]host[:port][/db]"`` or ``"postgresql://user[:password]@host[:port]/db"``."""
