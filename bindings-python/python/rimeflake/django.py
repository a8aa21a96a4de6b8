"""A Django model field filled with rimeflake IDs.

``SnowflakeField`` is a ``BigIntegerField`` whose default is the next ID of a generator, so it
serves as a primary key filled on the client, before the INSERT:

    from rimeflake.django import SnowflakeField

    class Order(models.Model):
        id = SnowflakeField(primary_key=True)

``save()``, ``objects.create()`` and ``bulk_create()`` all fill it (a new instance takes its ID
when it is made, as with ``UUIDField(default=uuid.uuid4)``), and Django inserts without first
trying an UPDATE. Migrations record the field as ``rimeflake.django.SnowflakeField(...)`` without
its default or generator, which are the field's own: ``makemigrations`` writes them, and a field
made with another generator needs no new migration.

Adding the field to a table that has rows fills them all with one ID (Django evaluates a
default once for an ``AddField``, as for ``UUIDField``): add it nullable, fill it with
``next_id()`` per row in a data migration, then make it required.

Without a generator, the process's default one is used (settings from the environment, made at
the first ID). Needs Django: ``pip install 'rimeflake[django]'``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from ._integration import default_generator, generator_option, require
from ._native import Generator

require("django.db", integration="rimeflake.django", needs="Django", extra="django")

from django.db import models

__all__ = ["SnowflakeField", "next_id"]

if TYPE_CHECKING:
    _BigIntegerField = models.BigIntegerField[int, int]
else:
    _BigIntegerField = models.BigIntegerField


def next_id() -> int:
    """The next ID of the process's default generator."""
    return default_generator().next_id()


class SnowflakeField(_BigIntegerField):
    """A ``BigIntegerField`` filled with the next ID of ``generator`` (the process's default
    generator when None). Takes every other argument of ``BigIntegerField`` but ``default``."""

    description = "A rimeflake ID (64-bit integer)"

    def __init__(self, *args: Any, generator: Optional[Generator] = None, **kwargs: Any) -> None:
        if "default" in kwargs:
            raise TypeError(
                "SnowflakeField(default=...): the field's default is the generator's next ID; "
                "pass generator= to choose the generator"
            )
        self.generator = generator_option(generator, "SnowflakeField")
        kwargs["default"] = self._next_id if generator else next_id
        super().__init__(*args, **kwargs)

    def _next_id(self) -> int:
        assert self.generator is not None
        return self.generator.next_id()

    def deconstruct(self) -> Any:
        name, _path, args, kwargs = super().deconstruct()
        # The default is the field's own (and a bound method cannot be serialized): a migration
        # that names the field gets it back from __init__.
        kwargs.pop("default", None)
        return name, "rimeflake.django.SnowflakeField", args, kwargs
