"""Type stubs for lct, liblct for Python."""
import datetime
import os
from typing import (Any, Callable, Dict, Iterator, List, NamedTuple,
                    Optional, Sequence, Tuple, Union)

import pandas

__version__: str
MAGIC: bytes
FORMAT_VERSION: int
PROGRESS_BYTES: int
KEY_COLUMNS: Tuple[Tuple[str, str], ...]

Path = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
Pattern = Union[str, Sequence[str], None]
Bound = Union[float, int, str, datetime.datetime, None]
Columns = Union[str, Sequence[str], None]
Progress = Union[bool, Callable[[int, int], Any], None]

class Ext:
    code: int
    data: bytes
    def __init__(self, code: int, data: bytes) -> None: ...

class ObjectKey(NamedTuple):
    chunk_hash: bytes
    model_name: str
    kv_rank: int
    object_group_id: int
    cache_salt: str
    obj_id: int
    bytes: int

class LayoutDesc(NamedTuple):
    shapes: Any
    dtypes: Any
    bytes: int

class Header:
    type: str
    magic: bytes
    format_version: int
    level: str
    trace_schema_version: int
    t_mono_start: float
    t_wall_start: float
    sm_config_json: str
    sm_config_digest: str
    level_meta: Optional[Dict[str, Any]]

class Record:
    @property
    def type(self) -> str: ...
    @property
    def t_mono(self) -> float: ...
    @property
    def t_wall(self) -> float: ...
    @property
    def qualname(self) -> str: ...
    @property
    def args(self) -> Dict[str, Any]: ...
    @property
    def offset(self) -> int: ...
    @property
    def op(self) -> str: ...
    def object_keys(self) -> List[ObjectKey]: ...
    def layout(self) -> Optional[LayoutDesc]: ...

class TraceReader:
    def __init__(self, path: Path, *, max_frame: int = ...) -> None: ...
    def __enter__(self) -> "TraceReader": ...
    def __exit__(self, *exc: object) -> None: ...
    @property
    def header(self) -> Header: ...
    @property
    def path(self) -> str: ...
    def records(self) -> Iterator[Record]: ...
    def stats(self) -> Dict[str, Any]: ...
    def close(self) -> None: ...

def read_table(path: Path, columns: Columns = ..., qualname: Pattern = ...,
               since: Bound = ..., until: Bound = ..., threads: int = ...,
               *, datetimes: bool = ...,
               progress: Progress = ...) -> Dict[str, Any]: ...
def read_pandas(path: Path, columns: Columns = ..., qualname: Pattern = ...,
                since: Bound = ..., until: Bound = ..., threads: int = ...,
                *, datetimes: bool = ...,
                progress: Progress = ...) -> pandas.DataFrame: ...
def keys(path: Path, read: Pattern = ..., write: Pattern = ...,
         all_calls: bool = ..., qualname: Pattern = ..., since: Bound = ...,
         until: Bound = ..., *,
         progress: Progress = ...) -> pandas.DataFrame: ...
def mrc(path: Path, read: Pattern = ..., write: Pattern = ...,
        qualname: Pattern = ..., since: Bound = ..., until: Bound = ...,
        requests: str = ..., sample: Optional[float] = ..., seed: int = ...,
        samples: Optional[int] = ..., *, prefix: bool = ...,
        lookups_only: bool = ...,
        chunk_size: Optional[int] = ...,
        policies: Optional[Sequence[str]] = ...) -> pandas.DataFrame: ...
def sim(path: Path, capacity: Union[int, str], *, read: Pattern = ...,
        write: Pattern = ..., qualname: Pattern = ..., since: Bound = ...,
        until: Bound = ..., lookups_only: bool = ...,
        l1: Union[int, str, None] = ..., chunk_size: Optional[int] = ...,
        points: int = ..., policy: str = ...,
        per_key: bool = ..., l1_policy: str = ...) -> pandas.DataFrame: ...
