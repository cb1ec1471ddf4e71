"""Claude on Google Vertex AI: :class:`AnthropicClient` over the SDK's ``AsyncAnthropicVertex`` (the ``vertex`` extra).

Only the SDK client differs: it sends the Messages API body to
``/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict`` (``:streamRawPredict``
for a stream, answered with the same server-sent events) with an OAuth bearer token. Requests, replies, streaming
and errors are ``AnthropicClient``'s.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict, cast

from .._settings import SecretString, load_settings
from ..exceptions import ServiceInitializationError
from ._client import AnthropicClient, given_or_built, sdk_options

if TYPE_CHECKING:
    from anthropic.lib.vertex import AsyncAnthropicVertex
    from google.auth.credentials import Credentials as GoogleCredentials

__all__ = ["AnthropicVertexClient", "AnthropicVertexSettings"]


class AnthropicVertexSettings(TypedDict, total=False):
    """The settings :class:`AnthropicVertexClient` reads; each field from the upper-cased environment variable."""

    cloud_ml_region: str | None
    anthropic_vertex_project_id: str | None
    anthropic_vertex_base_url: str | None
    anthropic_chat_model: str | None


class AnthropicVertexClient(AnthropicClient):
    """Talks to Claude on Google Vertex AI, with a Google access token or credentials instead of an API key.

    Arguments win over a ``.env`` file (``env_file_path``), which wins over the environment: ``CLOUD_ML_REGION``,
    ``ANTHROPIC_VERTEX_PROJECT_ID``, ``ANTHROPIC_VERTEX_BASE_URL`` and ``ANTHROPIC_CHAT_MODEL``. With neither
    ``access_token`` nor ``credentials``, google-auth finds the application default credentials (and the project,
    when none is set) on the first request. A caller's ``anthropic_client`` (an ``AsyncAnthropicVertex``) is used
    as it is.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.anthropic import AnthropicVertexClient

        client = AnthropicVertexClient(model="claude-sonnet-4-5@20250929", region="us-east5", project_id="my-project")
        print((await Agent(client).run("Name three primes.")).text)
        ```

    Args:
        model: The Vertex model name (``claude-sonnet-4-5@20250929``).
        region: The Vertex region (``us-east5``, ``europe-west1``, ``global``...).
        project_id: The Google Cloud project.
        access_token: An OAuth access token, sent as it is (no google-auth needed).
        credentials: ``google.auth`` credentials, refreshed when they expire.
        base_url: Another endpoint than the region's ``aiplatform.googleapis.com``.
        anthropic_client: A configured ``anthropic.AsyncAnthropicVertex`` to use instead of building one.
        env_file_path, env_file_encoding: A ``.env`` file to read the settings from.
        timeout, max_retries, additional_beta_flags: As for :class:`AnthropicClient`.
    """

    OTEL_PROVIDER_NAME: str = "google.vertex.ai"
    CREDENTIALS_HINT: ClassVar[str] = (
        "the Google credentials: access_token= / credentials= or the application default credentials"
    )
    ENDPOINT_HINT: ClassVar[str] = "region / CLOUD_ML_REGION and base_url / ANTHROPIC_VERTEX_BASE_URL"

    def __init__(
        self,
        *,
        model: str | None = None,
        region: str | None = None,
        project_id: str | None = None,
        access_token: str | None = None,
        credentials: GoogleCredentials | None = None,
        base_url: str | None = None,
        anthropic_client: AsyncAnthropicVertex | None = None,
        additional_beta_flags: Sequence[str] | None = None,
        env_file_path: str | None = None,
        env_file_encoding: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        **kwargs: Any,
    ) -> None:
        connection = {
            "region": region,
            "project_id": project_id,
            "access_token": access_token,
            "credentials": credentials,
            "base_url": base_url,
        }
        settings = load_settings(
            AnthropicVertexSettings,
            cloud_ml_region=region,
            anthropic_vertex_project_id=project_id,
            anthropic_vertex_base_url=base_url,
            anthropic_chat_model=model,
            env_file_path=env_file_path,
            env_file_encoding=env_file_encoding,
        )
        token = access_token.get_secret_value() if isinstance(access_token, SecretString) else access_token
        sdk_client = given_or_built(
            "AnthropicVertexClient",
            anthropic_client,
            connection,
            lambda: _build_vertex_client(settings, token, credentials, sdk_options(timeout, max_retries)),
        )
        super().__init__(
            model=settings.get("anthropic_chat_model"),
            anthropic_client=sdk_client,
            additional_beta_flags=additional_beta_flags,
            **kwargs,
        )
        self._owns_client = anthropic_client is None

    @property
    def region(self) -> str | None:
        """The Vertex region requests go to."""
        return cast("str | None", getattr(self.anthropic_client, "region", None))

    @property
    def project_id(self) -> str | None:
        """The Google Cloud project requests go to (``None`` until google-auth finds it, when none was set)."""
        return cast("str | None", getattr(self.anthropic_client, "project_id", None))


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # the parent package is missing too
        return False


def _build_vertex_client(
    settings: AnthropicVertexSettings,
    access_token: str | None,
    credentials: GoogleCredentials | None,
    options: dict[str, Any],
) -> AsyncAnthropicVertex:
    region = settings.get("cloud_ml_region")
    if not region:
        raise ServiceInitializationError(
            "AnthropicVertexClient needs a region: pass region=... (e.g. 'us-east5') or set CLOUD_ML_REGION."
        )
    project_id = settings.get("anthropic_vertex_project_id")
    if project_id is None and (access_token is not None or credentials is not None):
        # Only the application default credentials name a project; a token or credentials object does not.
        raise ServiceInitializationError(
            "AnthropicVertexClient needs a project with access_token / credentials: pass project_id=... or set "
            "ANTHROPIC_VERTEX_PROJECT_ID."
        )
    if access_token is None and credentials is None and not _installed("google.auth"):
        raise ImportError(
            'AnthropicVertexClient finds Google credentials with google-auth: pip install "agentnb[vertex]", '
            "or pass access_token=..."
        )
    from anthropic import NOT_GIVEN
    from anthropic.lib.vertex import AsyncAnthropicVertex

    return AsyncAnthropicVertex(
        region=region,
        project_id=project_id if project_id is not None else NOT_GIVEN,
        access_token=access_token,
        credentials=credentials,
        base_url=settings.get("anthropic_vertex_base_url"),
        **options,
    )
