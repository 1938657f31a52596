"""openapi_ref.py: following an OpenAPI document's "$ref"s, shared by
openapi_subset.py, runai_schema.py and scripts/openapi-sync.py."""


def deref(doc, obj):
    """obj, or what its "$ref" (a "#/..." path in doc) names, followed
    until it is no reference."""
    while isinstance(obj, dict) and "$ref" in obj:
        node = doc
        for part in obj["$ref"].lstrip("#/").split("/"):
            node = node[part]
        obj = node
    return obj
