"""The errors of the task pipelines: every one a :class:`~dpc_errors.DpcError` naming the bad value.

>>> try:
...     raise DatasetError("data.jsonl:3: `label` (=7) is not an index of `endings` (4 endings)")
... except TaskError as error:
...     print(error)
data.jsonl:3: `label` (=7) is not an index of `endings` (4 endings)
"""

from __future__ import annotations

from dpc_errors import DpcError

__all__ = ["DatasetError", "TaskError"]


class TaskError(DpcError):
    """Bad input to a task pipeline (SWAG/AF, AFLite, INLI, COPA): options, files, labels."""


class DatasetError(TaskError):
    """A dataset file that cannot be read as its format: the message names the file and line."""
