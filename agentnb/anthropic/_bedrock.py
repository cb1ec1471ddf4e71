"""Claude on AWS Bedrock: :class:`AnthropicClient` over the SDK's ``AsyncAnthropicBedrock`` (the ``bedrock`` extra).

Only the SDK client differs: it sends the Messages API body to ``/model/{model}/invoke`` (or
``/invoke-with-response-stream``, framed in AWS's event-stream encoding), signs each request with SigV4 through
botocore, and names the API version in the body. Requests, replies, streaming and errors are ``AnthropicClient``'s.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict, cast

from .._settings import SecretString, load_settings
from ..exceptions import ServiceInitializationError
from ._client import AnthropicClient, given_or_built, sdk_options

if TYPE_CHECKING:
    from anthropic.lib.bedrock import AsyncAnthropicBedrock

__all__ = ["DEFAULT_AWS_REGION", "AnthropicBedrockClient", "AnthropicBedrockSettings"]

logger = logging.getLogger("agentnb.anthropic")

DEFAULT_AWS_REGION = "us-east-1"


class AnthropicBedrockSettings(TypedDict, total=False):
    """The settings :class:`AnthropicBedrockClient` reads; each field from the upper-cased environment variable."""

    aws_access_key_id: SecretString | None
    aws_secret_access_key: SecretString | None
    aws_region: str | None
    aws_profile: str | None
    aws_session_token: SecretString | None
    anthropic_bedrock_base_url: str | None
    anthropic_chat_model: str | None


class AnthropicBedrockClient(AnthropicClient):
    """Talks to Claude on AWS Bedrock, with AWS credentials instead of an Anthropic API key.

    Arguments win over a ``.env`` file (``env_file_path``), which wins over the environment: ``AWS_ACCESS_KEY_ID``,
    ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_PROFILE``, ``AWS_REGION`` (then ``AWS_DEFAULT_REGION``,
    the profile's region, and ``us-east-1`` with a warning), ``ANTHROPIC_BEDROCK_BASE_URL`` and
    ``ANTHROPIC_CHAT_MODEL``. Without keys or a profile, botocore looks for credentials its usual way when the
    first request is signed. A caller's ``anthropic_client`` (an ``AsyncAnthropicBedrock``) is used as it is.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.anthropic import AnthropicBedrockClient

        client = AnthropicBedrockClient(model="anthropic.claude-sonnet-4-5-20250929-v1:0", aws_region="us-east-1")
        print((await Agent(client).run("Name three primes.")).text)
        ```

    Args:
        model: The Bedrock model id or inference profile.
        aws_secret_key, aws_access_key, aws_session_token: Static AWS credentials.
        aws_region: The AWS region of the Bedrock runtime endpoint.
        aws_profile: A profile of the AWS config files to take credentials (and the region) from.
        base_url: Another endpoint than ``https://bedrock-runtime.{region}.amazonaws.com``.
        anthropic_client: A configured ``anthropic.AsyncAnthropicBedrock`` to use instead of building one.
        env_file_path, env_file_encoding: A ``.env`` file to read the settings from.
        timeout, max_retries, additional_beta_flags: As for :class:`AnthropicClient`.
    """

    OTEL_PROVIDER_NAME: str = "aws.bedrock"
    CREDENTIALS_HINT: ClassVar[str] = (
        "the AWS credentials: aws_access_key / aws_secret_key, AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or AWS_PROFILE"
    )
    ENDPOINT_HINT: ClassVar[str] = "aws_region / AWS_REGION and base_url / ANTHROPIC_BEDROCK_BASE_URL"

    def __init__(
        self,
        *,
        model: str | None = None,
        aws_secret_key: str | None = None,
        aws_access_key: str | None = None,
        aws_region: str | None = None,
        aws_profile: str | None = None,
        aws_session_token: str | None = None,
        base_url: str | None = None,
        anthropic_client: AsyncAnthropicBedrock | None = None,
        additional_beta_flags: Sequence[str] | None = None,
        env_file_path: str | None = None,
        env_file_encoding: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        **kwargs: Any,
    ) -> None:
        connection = {
            "aws_secret_key": aws_secret_key,
            "aws_access_key": aws_access_key,
            "aws_region": aws_region,
            "aws_profile": aws_profile,
            "aws_session_token": aws_session_token,
            "base_url": base_url,
        }
        settings = load_settings(
            AnthropicBedrockSettings,
            aws_access_key_id=aws_access_key,
            aws_secret_access_key=aws_secret_key,
            aws_region=aws_region,
            aws_profile=aws_profile,
            aws_session_token=aws_session_token,
            anthropic_bedrock_base_url=base_url,
            anthropic_chat_model=model,
            env_file_path=env_file_path,
            env_file_encoding=env_file_encoding,
        )
        sdk_client = given_or_built(
            "AnthropicBedrockClient",
            anthropic_client,
            connection,
            lambda: _build_bedrock_client(settings, sdk_options(timeout, max_retries)),
        )
        super().__init__(
            model=settings.get("anthropic_chat_model"),
            anthropic_client=sdk_client,
            additional_beta_flags=additional_beta_flags,
            **kwargs,
        )
        self._owns_client = anthropic_client is None

    @property
    def aws_region(self) -> str | None:
        """The region requests are signed for."""
        return cast("str | None", getattr(self.anthropic_client, "aws_region", None))


def _resolve_aws_region(aws_region: str | None, aws_profile: str | None) -> str:
    """The region as the reference finds it: given, ``AWS_DEFAULT_REGION``, the profile's, else ``us-east-1``."""
    if aws_region:
        return aws_region
    if region := os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION"):
        return region
    if importlib.util.find_spec("boto3") is not None:
        import boto3

        # Reads the AWS config files only: no request is made.
        profile_region = cast("str | None", boto3.Session(profile_name=aws_profile).region_name)
        if profile_region:
            return profile_region
    logger.warning("No AWS region specified, defaulting to %s", DEFAULT_AWS_REGION)
    return DEFAULT_AWS_REGION


def _secret(value: SecretString | str | None) -> str | None:
    return None if value is None else str(value)


def _build_bedrock_client(settings: AnthropicBedrockSettings, options: dict[str, Any]) -> AsyncAnthropicBedrock:
    if importlib.util.find_spec("botocore") is None:  # pragma: no cover - the extra is installed in tests
        raise ImportError('AnthropicBedrockClient signs requests with botocore: pip install "agentnb[bedrock]"')
    from anthropic.lib.bedrock import AsyncAnthropicBedrock

    try:
        return AsyncAnthropicBedrock(
            aws_secret_key=_secret(settings.get("aws_secret_access_key")),
            aws_access_key=_secret(settings.get("aws_access_key_id")),
            aws_region=_resolve_aws_region(settings.get("aws_region"), settings.get("aws_profile")),
            aws_profile=settings.get("aws_profile"),
            aws_session_token=_secret(settings.get("aws_session_token")),
            base_url=settings.get("anthropic_bedrock_base_url"),
            **options,
        )
    except ValueError as e:  # e.g. AWS_BEARER_TOKEN_BEDROCK set beside AWS keys
        raise ServiceInitializationError(f"AnthropicBedrockClient: {e}") from e
