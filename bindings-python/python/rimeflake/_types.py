"""Type aliases of the arguments (for annotations: ``rimeflake.LayoutName``)."""

from typing import Literal

LayoutName = Literal["default", "twitter", "sonyflake", "js_safe"]
"""A preset name. A layout spec (``"clock_id=0,time=41,..."``) goes through ``Layout.from_spec``."""

BackendName = Literal["local", "memory"]
"""Where state and worker leases live."""
