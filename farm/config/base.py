"""A group of settings: each setting declared once, read from Scrapy's settings, else the environment,
else its default, and checked by its kind.

A field is declared with its type, what it takes and what it does, and its default, together::

    lease_timeout: Annotated[int, setting(whole(1), "seconds without a heartbeat ...")] = 1800

Its Scrapy setting is ``<PREFIX><FIELD NAME>`` (``key=`` names another, as for Scrapy's own
``CONCURRENT_REQUESTS``), and its environment variable the same name (``env=`` names another,
``FARM_CONCURRENT_REQUESTS``). ``Group.from_settings(settings)`` gives a setting its Scrapy value
(``-s NAME=value``, the project's, the add-on's), else the environment's, else its default: the
sources of pydantic-settings, in that order. An empty value is "not given" unless its kind takes "" as a value
of its own. Every value goes through its kind's parser alone (no coercion of pydantic's), so that a bad
one is the kind's one line naming the setting (farm.config.kinds), never pydantic's report.
"""

import os
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, ValidationError, ValidationInfo, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from farm.config.kinds import Kind
from farm.errors import SettingError


@dataclass(frozen=True)
class Setting:
    """What a field's annotation says of its setting, beside its type."""

    kind: Kind  # what it takes, and its parser
    doc: str  # what it does, for docs/settings.md
    key: str | None = None  # its Scrapy setting, when not <PREFIX><FIELD NAME>
    env: str | None = None  # its environment variable, when not its Scrapy setting
    shown: str | None = None  # its default as docs/settings.md gives it, when not the value


def setting(kind: Kind, doc: str, *, key: str | None = None, env: str | None = None, shown: str | None = None):
    """A field's setting, for its ``Annotated[type, setting(...)]``."""
    return Setting(kind, " ".join(doc.split()), key, env, shown)


def about(field: FieldInfo) -> Setting | None:
    """The setting a field declares (None: a field that is no setting, such as a group of its own)."""
    return next((m for m in field.metadata if isinstance(m, Setting)), None)


class Environment(PydanticBaseSettingsSource):
    """Each setting's environment variable, as given (its kind parses it): "" is not given, unless
    the kind takes "" as a value."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # every value is read in __call__

    def __call__(self) -> dict[str, Any]:
        cls: Any = self.settings_cls
        return {name: raw for name in cls.settings_fields() if (raw := cls.environment_of(name)) is not None}


class Group(BaseSettings):
    """Settings read and checked together; frozen once read."""

    model_config = SettingsConfigDict(frozen=True, extra="forbid")
    PREFIX: ClassVar[str] = "FARM_"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, Environment(settings_cls)  # Scrapy's values, then the environment's

    @field_validator("*", mode="plain")
    @classmethod
    def _parsed(cls, raw: Any, info: ValidationInfo) -> Any:
        name = info.field_name or ""
        declared = about(cls.model_fields[name]) if name else None
        return raw if declared is None else declared.kind.read(cls.key(name), raw)

    @classmethod
    def key(cls, name: str) -> str:
        """The Scrapy setting of field ``name``, e.g. FARM_LEASE_TIMEOUT."""
        declared = about(cls.model_fields[name])
        return (declared and declared.key) or f"{cls.PREFIX}{name.upper()}"

    @classmethod
    def env_name(cls, name: str) -> str:
        """The environment variable of field ``name``: its setting's name, unless it names another."""
        declared = about(cls.model_fields[name])
        return (declared and declared.env) or cls.key(name)

    @classmethod
    def settings_fields(cls) -> dict[str, Setting]:
        """Each field that is a setting, by name, in the order declared."""
        return {name: s for name, f in cls.model_fields.items() if (s := about(f)) is not None}

    @classmethod
    def given(cls, settings: Any) -> dict[str, Any]:
        """The values ``settings`` (Scrapy's, or a dict) give for this group's fields, by field name."""
        values = {}
        for name, declared in cls.settings_fields().items():
            raw = settings.get(cls.key(name)) if settings is not None else None
            if raw is not None and (raw != "" or declared.kind.blank):
                values[name] = raw
        return values

    @classmethod
    def from_settings(cls, settings: Any) -> Any:
        """Every setting of the group: SettingError (one line) for the first bad one."""
        return checked(cls, **cls.given(settings))

    @classmethod
    def environment_of(cls, name: str) -> Any:
        """Field ``name``'s environment variable, as given; None where it gives none."""
        raw = os.environ.get(cls.env_name(name))
        return raw if raw is not None and (raw != "" or cls.settings_fields()[name].kind.blank) else None

    @classmethod
    def environment(cls) -> dict[str, Any]:
        """Each setting's value as Scrapy's settings hold it: the environment's, as given, else the default."""
        values = Environment(cls)()
        return {
            cls.key(name): values[name]
            if name in values
            else cls.model_fields[name].get_default(call_default_factory=True)
            for name in cls.settings_fields()
        }


def checked(cls: type[BaseModel], **values: Any) -> Any:
    """``cls(**values)``, with the first bad value's one line (its kind's SettingError) raised alone."""
    try:
        return cls(**values)
    except ValidationError as exc:
        error = exc.errors()[0].get("ctx", {}).get("error")
        raise (error if isinstance(error, SettingError) else SettingError(str(error or exc))) from None
