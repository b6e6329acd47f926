from ameide_proto.v1 import common_pb2 as _common_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CreateElementRequest(_message.Message):
    __slots__ = ("repository_id", "title", "body", "type_key", "element_kind", "classification", "metadata")
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    TYPE_KEY_FIELD_NUMBER: _ClassVar[int]
    ELEMENT_KIND_FIELD_NUMBER: _ClassVar[int]
    CLASSIFICATION_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    repository_id: str
    title: str
    body: str
    type_key: str
    element_kind: str
    classification: str
    metadata: _struct_pb2.Struct
    def __init__(self, repository_id: _Optional[str] = ..., title: _Optional[str] = ..., body: _Optional[str] = ..., type_key: _Optional[str] = ..., element_kind: _Optional[str] = ..., classification: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class CreateElementResponse(_message.Message):
    __slots__ = ("element", "version")
    ELEMENT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    element: _common_pb2.Element
    version: _common_pb2.Version
    def __init__(self, element: _Optional[_Union[_common_pb2.Element, _Mapping]] = ..., version: _Optional[_Union[_common_pb2.Version, _Mapping]] = ...) -> None: ...

class GetElementRequest(_message.Message):
    __slots__ = ("element_id", "version_id", "as_of")
    ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    element_id: str
    version_id: str
    as_of: str
    def __init__(self, element_id: _Optional[str] = ..., version_id: _Optional[str] = ..., as_of: _Optional[str] = ...) -> None: ...

class GetElementResponse(_message.Message):
    __slots__ = ("element", "version")
    ELEMENT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    element: _common_pb2.Element
    version: _common_pb2.Version
    def __init__(self, element: _Optional[_Union[_common_pb2.Element, _Mapping]] = ..., version: _Optional[_Union[_common_pb2.Version, _Mapping]] = ...) -> None: ...

class GetVersionRequest(_message.Message):
    __slots__ = ("version_id", "as_of")
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    version_id: str
    as_of: str
    def __init__(self, version_id: _Optional[str] = ..., as_of: _Optional[str] = ...) -> None: ...

class Chunk(_message.Message):
    __slots__ = ("chunk_key", "heading_path", "start", "end")
    CHUNK_KEY_FIELD_NUMBER: _ClassVar[int]
    HEADING_PATH_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    chunk_key: str
    heading_path: str
    start: int
    end: int
    def __init__(self, chunk_key: _Optional[str] = ..., heading_path: _Optional[str] = ..., start: _Optional[int] = ..., end: _Optional[int] = ...) -> None: ...

class GetVersionResponse(_message.Message):
    __slots__ = ("element", "version", "chunks")
    ELEMENT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    element: _common_pb2.Element
    version: _common_pb2.Version
    chunks: _containers.RepeatedCompositeFieldContainer[Chunk]
    def __init__(self, element: _Optional[_Union[_common_pb2.Element, _Mapping]] = ..., version: _Optional[_Union[_common_pb2.Version, _Mapping]] = ..., chunks: _Optional[_Iterable[_Union[Chunk, _Mapping]]] = ...) -> None: ...

class GetElementHistoryRequest(_message.Message):
    __slots__ = ("element_id",)
    ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    element_id: str
    def __init__(self, element_id: _Optional[str] = ...) -> None: ...

class GetElementHistoryResponse(_message.Message):
    __slots__ = ("element", "versions")
    ELEMENT_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    element: _common_pb2.Element
    versions: _containers.RepeatedCompositeFieldContainer[_common_pb2.Version]
    def __init__(self, element: _Optional[_Union[_common_pb2.Element, _Mapping]] = ..., versions: _Optional[_Iterable[_Union[_common_pb2.Version, _Mapping]]] = ...) -> None: ...

class RetireElementRequest(_message.Message):
    __slots__ = ("element_id", "reason")
    ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    element_id: str
    reason: str
    def __init__(self, element_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class RetireElementResponse(_message.Message):
    __slots__ = ("element",)
    ELEMENT_FIELD_NUMBER: _ClassVar[int]
    element: _common_pb2.Element
    def __init__(self, element: _Optional[_Union[_common_pb2.Element, _Mapping]] = ...) -> None: ...

class EraseVersionRequest(_message.Message):
    __slots__ = ("version_id", "reason")
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    version_id: str
    reason: str
    def __init__(self, version_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class AddRelationshipRequest(_message.Message):
    __slots__ = ("source_element_id", "target_element_id", "relationship_kind", "type_key", "metadata")
    SOURCE_ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    RELATIONSHIP_KIND_FIELD_NUMBER: _ClassVar[int]
    TYPE_KEY_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    source_element_id: str
    target_element_id: str
    relationship_kind: str
    type_key: str
    metadata: _struct_pb2.Struct
    def __init__(self, source_element_id: _Optional[str] = ..., target_element_id: _Optional[str] = ..., relationship_kind: _Optional[str] = ..., type_key: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class RetireRelationshipRequest(_message.Message):
    __slots__ = ("relationship_id",)
    RELATIONSHIP_ID_FIELD_NUMBER: _ClassVar[int]
    relationship_id: str
    def __init__(self, relationship_id: _Optional[str] = ...) -> None: ...

class ListRelationshipsRequest(_message.Message):
    __slots__ = ("element_id", "as_of")
    ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    element_id: str
    as_of: str
    def __init__(self, element_id: _Optional[str] = ..., as_of: _Optional[str] = ...) -> None: ...

class ListRelationshipsResponse(_message.Message):
    __slots__ = ("relationships",)
    RELATIONSHIPS_FIELD_NUMBER: _ClassVar[int]
    relationships: _containers.RepeatedCompositeFieldContainer[_common_pb2.Relationship]
    def __init__(self, relationships: _Optional[_Iterable[_Union[_common_pb2.Relationship, _Mapping]]] = ...) -> None: ...

class ExpandNeighborhoodRequest(_message.Message):
    __slots__ = ("element_id", "hops", "relationship_types", "max_nodes", "as_of")
    ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    HOPS_FIELD_NUMBER: _ClassVar[int]
    RELATIONSHIP_TYPES_FIELD_NUMBER: _ClassVar[int]
    MAX_NODES_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    element_id: str
    hops: int
    relationship_types: _containers.RepeatedScalarFieldContainer[str]
    max_nodes: int
    as_of: str
    def __init__(self, element_id: _Optional[str] = ..., hops: _Optional[int] = ..., relationship_types: _Optional[_Iterable[str]] = ..., max_nodes: _Optional[int] = ..., as_of: _Optional[str] = ...) -> None: ...

class NeighborhoodNode(_message.Message):
    __slots__ = ("element_id", "repository_id", "element_kind", "type_key", "source_kind", "classification", "created_at", "created_by", "head_version_id", "retired_at", "version_id", "title", "retired")
    ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_ID_FIELD_NUMBER: _ClassVar[int]
    ELEMENT_KIND_FIELD_NUMBER: _ClassVar[int]
    TYPE_KEY_FIELD_NUMBER: _ClassVar[int]
    SOURCE_KIND_FIELD_NUMBER: _ClassVar[int]
    CLASSIFICATION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    HEAD_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    RETIRED_AT_FIELD_NUMBER: _ClassVar[int]
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    RETIRED_FIELD_NUMBER: _ClassVar[int]
    element_id: str
    repository_id: str
    element_kind: str
    type_key: str
    source_kind: str
    classification: str
    created_at: str
    created_by: str
    head_version_id: str
    retired_at: str
    version_id: str
    title: str
    retired: bool
    def __init__(self, element_id: _Optional[str] = ..., repository_id: _Optional[str] = ..., element_kind: _Optional[str] = ..., type_key: _Optional[str] = ..., source_kind: _Optional[str] = ..., classification: _Optional[str] = ..., created_at: _Optional[str] = ..., created_by: _Optional[str] = ..., head_version_id: _Optional[str] = ..., retired_at: _Optional[str] = ..., version_id: _Optional[str] = ..., title: _Optional[str] = ..., retired: _Optional[bool] = ...) -> None: ...

class NeighborhoodEdge(_message.Message):
    __slots__ = ("relationship_id", "type_key", "source_element_id", "target_element_id")
    RELATIONSHIP_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_KEY_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    relationship_id: str
    type_key: str
    source_element_id: str
    target_element_id: str
    def __init__(self, relationship_id: _Optional[str] = ..., type_key: _Optional[str] = ..., source_element_id: _Optional[str] = ..., target_element_id: _Optional[str] = ...) -> None: ...

class ExpandNeighborhoodResponse(_message.Message):
    __slots__ = ("element_id", "as_of", "nodes", "edges")
    ELEMENT_ID_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    EDGES_FIELD_NUMBER: _ClassVar[int]
    element_id: str
    as_of: str
    nodes: _containers.RepeatedCompositeFieldContainer[NeighborhoodNode]
    edges: _containers.RepeatedCompositeFieldContainer[NeighborhoodEdge]
    def __init__(self, element_id: _Optional[str] = ..., as_of: _Optional[str] = ..., nodes: _Optional[_Iterable[_Union[NeighborhoodNode, _Mapping]]] = ..., edges: _Optional[_Iterable[_Union[NeighborhoodEdge, _Mapping]]] = ...) -> None: ...
