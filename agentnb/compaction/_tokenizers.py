"""Token counters for compaction: a fast estimate by default, tiktoken's real counts when it can load offline.

tiktoken ships its code on PyPI but fetches each encoding's rank file from a blob store on first use. The
:class:`TiktokenTokenizer` here never does that unless asked (``allow_download=True``): it reads the file
named by ``encoding_file``, tiktoken's own cache (``TIKTOKEN_CACHE_DIR``), or a copy that an installed
package ships in its wheel (LiteLLM bundles ``cl100k_base``, ``p50k_base`` and ``o200k_base``).
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import importlib.util
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._compaction_protocols import TokenizerProtocol

__all__ = [
    "CharacterEstimatorTokenizer",
    "TiktokenTokenizer",
    "TokenizerProtocol",
    "default_tokenizer",
    "find_encoding_file",
]

_BLOB_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
# Packages known to ship tiktoken's cache files in their wheel, and where (relative to the package).
_BUNDLED: tuple[tuple[str, str], ...] = (("litellm", "litellm_core_utils/tokenizers"),)
_LOAD_LOCK = threading.Lock()


class CharacterEstimatorTokenizer:
    """About four characters a token: no dependency, no data file, a few nanoseconds a message.

    Example:
        ```python
        from agentnb.compaction import CharacterEstimatorTokenizer

        CharacterEstimatorTokenizer().count_tokens("hello world, hello")  # 4
        ```
    """

    def count_tokens(self, text: str) -> int:
        """``len(text) // 4``, at least 1."""
        return max(1, len(text) // 4)

    def __repr__(self) -> str:
        return "CharacterEstimatorTokenizer()"


def _cache_dir() -> Path:
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        value = os.environ.get(variable)
        if value:
            return Path(value)
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def find_encoding_file(encoding_name: str) -> Path | None:
    """A local copy of an encoding's rank file: in tiktoken's cache, or shipped by an installed package.

    Looks without importing the packages it looks in; returns ``None`` when there is none on this machine.
    """
    key = hashlib.sha1(_BLOB_URL.format(name=encoding_name).encode()).hexdigest()
    candidates = [_cache_dir() / key]
    for package, folder in _BUNDLED:
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.origin:
            candidates.append(Path(spec.origin).parent / folder / key)
    return next((path for path in candidates if path.is_file()), None)


class TiktokenTokenizer:
    """Real token counts with tiktoken (``pip install "agentnb[tokenizers]"``), loaded without a network.

    Args:
        encoding_name: tiktoken's encoding (``o200k_base`` for GPT-4o and later, ``cl100k_base`` for GPT-4).
        model: A model name to take the encoding from instead (``tiktoken.encoding_for_model``).
        encoding_file: The encoding's ``.tiktoken`` rank file; by default a local copy is searched for
            (see :func:`find_encoding_file`).
        allow_download: When no local copy exists, let tiktoken download the file (and cache it).

    Raises:
        ImportError: tiktoken is not installed.
        FileNotFoundError: No local copy of the encoding and ``allow_download`` is off.

    Example:
        ```python
        from agentnb.compaction import TiktokenTokenizer

        TiktokenTokenizer("o200k_base").count_tokens("hello world")  # 2
        ```
    """

    def __init__(
        self,
        encoding_name: str = "o200k_base",
        *,
        model: str | None = None,
        encoding_file: str | os.PathLike[str] | None = None,
        allow_download: bool = False,
    ) -> None:
        try:
            tiktoken = importlib.import_module("tiktoken")
        except ImportError as e:
            raise ImportError('TiktokenTokenizer needs tiktoken: pip install "agentnb[tokenizers]"') from e
        if model is not None:
            encoding_name = str(tiktoken.encoding_name_for_model(model))
        self.encoding_name = encoding_name
        path = Path(encoding_file) if encoding_file is not None else find_encoding_file(encoding_name)
        if path is not None and not path.is_file():
            raise FileNotFoundError(f"Encoding file {str(path)!r} for {encoding_name!r} does not exist.")
        if path is None and not allow_download:
            raise FileNotFoundError(
                f"No local copy of tiktoken's {encoding_name!r} encoding: pass encoding_file=PATH (the "
                f"'{encoding_name}.tiktoken' file), put it in TIKTOKEN_CACHE_DIR, or pass allow_download=True."
            )
        self._encoding: Any = _load(tiktoken, encoding_name, path)
        self._encode: Callable[..., list[int]] = self._encoding.encode_ordinary

    def count_tokens(self, text: str) -> int:
        """The number of tokens tiktoken's encoding gives ``text`` (special tokens read as plain text)."""
        return len(self._encode(text))

    def __repr__(self) -> str:
        return f"TiktokenTokenizer({self.encoding_name!r})"


def _load(tiktoken: Any, encoding_name: str, path: Path | None) -> Any:
    if path is None:
        return tiktoken.get_encoding(encoding_name)
    public: Any = importlib.import_module("tiktoken_ext.openai_public")
    constructor = getattr(public, encoding_name, None)
    if constructor is None:
        raise ValueError(f"Unknown tiktoken encoding {encoding_name!r}.")
    # The encoding's constructor names the blob URL; read the local file in its place (hash still checked).
    with _LOAD_LOCK:
        original = public.load_tiktoken_bpe

        def read_local(_url: str, expected_hash: str | None = None) -> dict[bytes, int]:
            return _read_ranks(path, expected_hash)

        public.load_tiktoken_bpe = read_local
        try:
            spec = constructor()
        finally:
            public.load_tiktoken_bpe = original
    return tiktoken.Encoding(**spec)


def _read_ranks(path: Path, expected_hash: str | None) -> dict[bytes, int]:
    """A ``.tiktoken`` file's ranks (``base64-token rank`` lines), its SHA-256 checked against tiktoken's."""
    data = path.read_bytes()
    if expected_hash is not None and hashlib.sha256(data).hexdigest() != expected_hash:
        raise ValueError(f"{str(path)!r} is not tiktoken's file for this encoding (its SHA-256 differs).")
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


_default: list[TokenizerProtocol] = []


def default_tokenizer() -> TokenizerProtocol:
    """tiktoken's ``o200k_base`` when it is installed and loads offline, else :class:`CharacterEstimatorTokenizer`."""
    if not _default:
        tokenizer: TokenizerProtocol
        try:
            tokenizer = TiktokenTokenizer()
        except (ImportError, FileNotFoundError, ValueError):
            tokenizer = CharacterEstimatorTokenizer()
        _default.append(tokenizer)
    return _default[0]
