"""Azure Functions entry point: the skill's ASGI app behind the Functions host.

Locally, `uvicorn function_app:api` serves the same app without Core Tools.
Nothing heavy happens here: settings are read at the first request.
"""

from __future__ import annotations

import os

import azure.functions as func

from skills.skill.app import build_app

AUTH_LEVEL_SETTING = "FUNCTION_AUTH_LEVEL"
"""App setting: `function` (default) makes the host require a function key; `anonymous`
is only for apps that Easy Auth (Microsoft Entra) guards, as infra/ sets up in entra mode.
Read here because the host needs the level when it loads the app."""


def auth_level(environ: os._Environ[str] | dict[str, str]) -> func.AuthLevel:
    """The HTTP auth level the app setting asks for; anything but `anonymous` is FUNCTION."""
    anonymous = environ.get(AUTH_LEVEL_SETTING, "").strip().lower() == "anonymous"
    return func.AuthLevel.ANONYMOUS if anonymous else func.AuthLevel.FUNCTION


api = build_app()
app = func.AsgiFunctionApp(app=api, http_auth_level=auth_level(os.environ))
