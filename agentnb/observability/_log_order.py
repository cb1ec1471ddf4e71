"""Log records of one message list, kept in order by backends that sort by timestamp.

Records logged for the messages of one list in a tight loop often share a timestamp, and a backend that orders
by time alone may then show them shuffled. :class:`MessageListTimestampFilter` moves each record carrying the
message's index (``extra={"chat_message_index": i}``) ``i`` microseconds later, so the order survives.
"""

from __future__ import annotations

import logging
from typing import ClassVar

__all__ = ["MessageListTimestampFilter"]


class MessageListTimestampFilter(logging.Filter):
    """Shift a record carrying a message index ``i`` (``INDEX_KEY``) by ``i`` microseconds; keep every record.

    Example:
        >>> import logging
        >>> record = logging.LogRecord("x", logging.INFO, "", 0, "message", (), None)
        >>> record.chat_message_index = 3
        >>> before = record.created
        >>> MessageListTimestampFilter().filter(record), round((record.created - before) * 1e6)
        (True, 3)
    """

    INDEX_KEY: ClassVar[str] = "chat_message_index"

    def filter(self, record: logging.LogRecord) -> bool:
        index = getattr(record, self.INDEX_KEY, None)
        if index is not None:
            record.created += index * 1e-6
        return True
