#!/usr/bin/python
"""Find the Pulumi tools a user installed already, so that pulumi_tool builds only what
is missing (the cold builds take about 45 minutes of one core)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: pulumi_installed
short_description: Find a compatible Pulumi CLI, language host and kubernetes provider the user has
description:
  - The CLI is the first C(pulumi) on I(search_path) outside I(exclude) (the project's own
    links). It is used when its major version is the SDK's and it is no older than the
    Python SDK the program runs with, the rule Pulumi's Automation API applies.
  - The language host is the C(pulumi-language-python) beside that CLI, with its
    C(pulumi-language-python-exec) script (Pulumi's installer puts them together).
  - The provider is C(pulumi-resource-kubernetes) in I(plugin_dir)'s
    C(resource-kubernetes-v<provider_version>), what C(pulumi plugin install) writes:
    exactly the version the pulumi-kubernetes SDK asks the engine for.
  - Returns the paths found and, for each tool not used, why.
options:
  search_path:
    description: The PATH to search, colon-separated.
    required: true
    type: str
  exclude:
    description: Directories of I(search_path) to skip.
    type: list
    elements: path
    default: []
  sdk_version:
    description: The version of the Python SDK (package C(pulumi)) the program runs with.
    required: true
    type: str
  provider_version:
    description: The kubernetes provider's version, without a leading v.
    required: true
    type: str
  plugin_dir:
    description: The user's Pulumi plugin directory (C($PULUMI_HOME/plugins), by default C(~/.pulumi/plugins)).
    required: true
    type: path
"""

RETURN = r"""
found:
  description: "{tool name: path} of the tools to use as they are."
  type: dict
  returned: always
skipped:
  description: "{tool name: why a tool on this machine is not used} (absent when there is none)."
  type: dict
  returned: always
cli_version:
  description: The version the user's CLI printed, when there is one.
  type: str
  returned: always
"""

CLI = "pulumi"
LANGUAGE_HOST = "pulumi-language-python"
EXEC_SCRIPT = "pulumi-language-python-exec"
PROVIDER = "pulumi-resource-kubernetes"
VERSION = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")


def parse_version(text: str) -> tuple[int, int, int] | None:
    match = VERSION.search(text)
    return tuple(int(part) for part in match.groups()) if match else None


def first_on_path(name: str, search_path: str, exclude: list[str]) -> Path | None:
    skip = {os.path.realpath(directory) for directory in exclude}
    for directory in filter(None, search_path.split(os.pathsep)):
        candidate = Path(directory) / name
        if os.path.realpath(directory) not in skip and candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def cli_verdict(printed: str, sdk_version: str) -> str | None:
    """None when a CLI that printed `printed` for `pulumi version` runs this SDK, else why not."""
    have, need = parse_version(printed), parse_version(sdk_version)
    if need is None:
        raise ValueError(f"the Python SDK's version {sdk_version!r} is not a version")
    if have is None:
        return f"`pulumi version` printed {printed.strip()[:80]!r}, not a version"
    if have[0] != need[0] or have < need:
        return (f"it is v{'.'.join(map(str, have))}; the Python SDK {sdk_version} needs a "
                f"{need[0]}.x CLI of at least {sdk_version}")
    return None


def find(search_path: str, exclude: list[str], sdk_version: str, provider_version: str, plugin_dir: str,
         run=subprocess.run) -> dict:
    found: dict[str, str] = {}
    skipped: dict[str, str] = {}
    cli_version = ""
    cli = first_on_path(CLI, search_path, exclude)
    if cli is not None:
        printed = run([str(cli), "version"], capture_output=True, text=True, timeout=60,
                      env={**os.environ, "PULUMI_SKIP_UPDATE_CHECK": "true"}).stdout
        cli_version = printed.strip()
        why = cli_verdict(printed, sdk_version)
        if why:
            skipped[CLI] = f"{cli}: {why}"
        else:
            found[CLI] = str(cli)
            home = cli.resolve().parent
            host = home / LANGUAGE_HOST
            if host.is_file() and (home / EXEC_SCRIPT).is_file():
                found[LANGUAGE_HOST] = str(host)
            else:
                skipped[LANGUAGE_HOST] = f"{home} has no {LANGUAGE_HOST} with {EXEC_SCRIPT} beside it"
    provider = Path(plugin_dir) / f"resource-kubernetes-v{provider_version}" / PROVIDER
    if provider.is_file() and os.access(provider, os.X_OK):
        found[PROVIDER] = str(provider)
    return {"found": found, "skipped": skipped, "cli_version": cli_version}


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "search_path": {"type": "str", "required": True},
            "exclude": {"type": "list", "elements": "path", "default": []},
            "sdk_version": {"type": "str", "required": True},
            "provider_version": {"type": "str", "required": True},
            "plugin_dir": {"type": "path", "required": True},
        },
        supports_check_mode=True,
    )
    try:
        result = find(**module.params)
    except ValueError as error:
        module.fail_json(msg=str(error))
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
