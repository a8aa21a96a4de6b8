"""Type aliases of the arguments (for annotations: ``rimeflake.LayoutName``)."""

from typing import Literal

LayoutName = Literal["default", "twitter", "sonyflake", "sonyflake_v2", "baidu", "js_safe"]
"""A preset name. Where a ``layout`` argument is typed, a layout spec goes through
``Layout.from_spec("clock_id=0,time=41,...")``, which mypy then cannot confuse with a
misspelt preset (``"twiter"``); the argument takes a spec string all the same at run time,
as every rimeflake front end does."""

BackendName = Literal["local", "memory"]
"""Where state and worker leases live."""
