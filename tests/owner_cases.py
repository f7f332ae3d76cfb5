"""A second user's requests that name the first user's things, generated from OpenAPI.

:func:`operations` reads a server's own OpenAPI document; :func:`cases` makes, for one
operation, a valid request of the second user's (bob's) own, its *baseline*, and one
variant per place a string can go (path, query and header parameters, and the body:
walked through ``$ref``, ``anyOf`` and nested objects) and per value of the first user's
(alice's) that place could name: her thread, checkpoint, run, assistant, store
namespace, item key or user name, as the field's name (or its description) says; a
field whose name says nothing gets her thread id and her assistant id. A free-form
object (``additionalProperties``: a run's ``config`` and its ``configurable``, a
``checkpoint``, ``context``, ``metadata``...) is given the keys LangGraph reads there
(:data:`WELL_KNOWN`). Beside them, per operation: one variant naming all of hers at once
(a coherent set: her thread, its checkpoint and run, its inbox), and decoys: one place
naming a namespace of hers while every other place a namespace may be named (those
:data:`DECOY_FIELDS` the schema lacks too) names bob's own.

Nothing here talks to a server: ``tests/test_serve_owners.py`` sends the requests.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

#: Routes that are no one's data.
SKIPPED_PATHS = frozenset(
    {"/health", "/docs", "/openapi.json", "/redoc", "/", "/docs/oauth2-redirect"}
)
#: The methods an operation may have.
METHODS = ("get", "post", "put", "patch", "delete")
#: Keys given to every free-form object: what LangGraph reads in a config's
#: ``configurable``, in a checkpoint, and what Aegra adds beside them.
WELL_KNOWN = ("thread_id", "checkpoint_id", "checkpoint_ns", "run_id", "assistant_id", "user_id")
#: Body fields a store route may read its namespace from (a decoy fills them all).
DECOY_FIELDS = ("namespace", "namespace_prefix", "prefix")
#: Field names (lower case, without ``_`` and ``-``) and what they name.
NAMED = {
    "threadid": "thread",
    "checkpointid": "checkpoint",
    "runid": "run",
    "assistantid": "assistant",
    "namespace": "namespace",
    "namespaceprefix": "namespace",
    "prefix": "namespace",
    "suffix": "namespace",
    "key": "key",
    "userid": "user",
}
#: The kinds of field that address a store item.
ITEM = ("namespace", "key")
#: What a baseline gives a required string that names none of bob's things.
BASELINE_TEXT = {"graph_id": "solver_debate", "status": "success"}
#: A run's input and context in a baseline (the stub model the server lists).
MODEL_CONTEXT = {"model": "stub"}


# -- whose things ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Owner:
    """What one user's requests may name.

    Attributes:
        user: The user's identity.
        threads: Label -> thread id (the first is the one a baseline names).
        checkpoints: Label -> the latest checkpoint id of the thread of that label.
        runs: Label -> a run id of the thread of that label.
        assistant: An assistant the user made.
        items: ``(label, namespace, key)`` of store items the user holds.
        prefixes: Namespace prefixes that cover the user's items.
        question: The question a run of the user's asks.
    """

    user: str
    threads: Mapping[str, str]
    checkpoints: Mapping[str, str]
    runs: Mapping[str, str]
    assistant: str
    items: tuple[tuple[str, tuple[str, ...], str], ...]
    prefixes: tuple[tuple[str, ...], ...] = ()
    question: str = ""

    @property
    def thread(self) -> str:
        return next(iter(self.threads.values()))


@dataclass(frozen=True)
class Value:
    """One thing of alice's a field may name.

    Attributes:
        what: Said in a failure (``alice's finished thread``).
        text: The value as a string.
        labels: The value as a namespace (a store field), else ``None``.
        key: The key of her item in that namespace, if she has one there.
    """

    what: str
    text: str
    labels: tuple[str, ...] | None = None
    key: str | None = None


def values_of(owner: Owner, kind: str) -> list[Value]:
    """Each of the owner's things a field of this kind may name."""
    name = owner.user
    if kind == "thread":
        return [Value(f"{name}'s {label} thread", t) for label, t in owner.threads.items()]
    if kind == "checkpoint":
        return [
            Value(f"{name}'s {label} thread's checkpoint", c)
            for label, c in owner.checkpoints.items()
        ]
    if kind == "run":
        return [Value(f"{name}'s {label} thread's run", r) for label, r in owner.runs.items()]
    if kind == "assistant":
        return [Value(f"{name}'s assistant", owner.assistant)]
    if kind == "namespace":
        found = [
            Value(f"{name}'s {label} namespace", ".".join(ns), ns, key)
            for label, ns, key in owner.items
        ]
        return found + [Value(f"the prefix {list(p)}", ".".join(p), p) for p in owner.prefixes]
    if kind == "key":
        return [Value(f"{name}'s {label} item's key", key) for label, _, key in owner.items]
    if kind == "user":
        return [Value(f"{name}'s user name", name)]
    # a field whose name says nothing: her first thread and her assistant
    return [values_of(owner, "thread")[0], values_of(owner, "assistant")[0]]


def baseline_of(owner: Owner, kind: str, name: str, *, runs: bool) -> Any:
    """What a baseline gives a field of this kind: the owner's own (``None``: nothing)."""
    if kind == "thread":
        return owner.thread
    if kind == "checkpoint":
        return next(iter(owner.checkpoints.values()))
    if kind == "run":
        return next(iter(owner.runs.values()))
    if kind == "assistant":
        return "solver_debate" if runs else owner.assistant
    if kind == "namespace":
        return list(owner.items[0][1])
    if kind == "key":
        return owner.items[0][2]
    if kind == "user":
        return owner.user
    return BASELINE_TEXT.get(name, f"{owner.user}-{name}")


# -- the document ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """A place a string goes.

    Attributes:
        where: ``path``, ``query``, ``header`` or ``body``.
        at: The parameter's name, or the body's keys down to the field.
        kind: What its name says it names (``thread``, ..., ``other``).
        string: Whether it takes a string.
        array: Whether it takes a list of strings.
        injected: Whether the schema does not name it (a key of a free-form object).
        options: The options its description names (``do_nothing``...).
    """

    where: str
    at: tuple[str, ...]
    kind: str
    string: bool = True
    array: bool = False
    injected: bool = False
    options: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.where} {'.'.join(self.at)}"


@dataclass(frozen=True)
class Operation:
    """One path and method of the document.

    Attributes:
        method: Upper case.
        path: The path template (``/threads/{thread_id}``).
        params: Its parameters, schemas resolved.
        body: Its request body's schema (resolved at the top), or ``None``.
        body_required: Whether the body must be sent.
    """

    method: str
    path: str
    params: tuple[dict[str, Any], ...]
    body: dict[str, Any] | None
    body_required: bool

    @property
    def name(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def creates_runs(self) -> bool:
        """Whether it starts a run: its body names an assistant and an input."""
        props = (self.body or {}).get("properties", {})
        return "assistant_id" in props and "input" in props


def resolve(schema: Any, doc: Mapping[str, Any]) -> dict[str, Any]:
    """A schema with its ``$ref`` followed (local references only)."""
    seen = 0
    while isinstance(schema, dict) and "$ref" in schema and seen < 20:
        node: Any = doc
        for part in str(schema["$ref"]).removeprefix("#/").split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        schema = {**node, **{k: v for k, v in schema.items() if k != "$ref"}}
        seen += 1
    return schema if isinstance(schema, dict) else {}


def alternatives(schema: dict[str, Any], doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The schema's non-null alternatives (``anyOf``/``oneOf``), each resolved."""
    options = schema.get("anyOf") or schema.get("oneOf")
    if not options:
        return [schema]
    found = []
    for option in options:
        option = resolve(option, doc)
        if option.get("type") != "null":
            found.extend(alternatives(option, doc))
    return found


def operations(doc: Mapping[str, Any]) -> list[Operation]:
    """Every operation of the document but :data:`SKIPPED_PATHS`', deletions last.

    A deletion of bob's own thread or assistant comes after every request that might
    reach alice's through it.
    """
    found = []
    for path, item in doc.get("paths", {}).items():
        if path in SKIPPED_PATHS:
            continue
        shared = item.get("parameters", [])
        for method in METHODS:
            op = item.get(method)
            if op is None:
                continue
            params = tuple(
                {**p, "schema": resolve(p.get("schema", {}), doc)}
                for p in (resolve(p, doc) for p in [*shared, *op.get("parameters", [])])
            )
            body = op.get("requestBody")
            schema = None
            if body is not None:
                content = resolve(body, doc).get("content", {})
                raw = content.get("application/json", {}).get("schema")
                if raw is not None:
                    options = alternatives(resolve(raw, doc), doc)
                    schema = next((o for o in options if o.get("type") == "object"), options[0])
            required = bool(body and resolve(body, doc).get("required"))
            found.append(Operation(method.upper(), path, params, schema, required))
    return sorted(found, key=lambda o: o.method == "DELETE")


def kind_of(name: str, schema: Mapping[str, Any]) -> str:
    """What a field names, by its name, else by its title or description."""
    flat = name.lower().replace("_", "").replace("-", "")
    if flat in NAMED:
        return NAMED[flat]
    words = f"{schema.get('title', '')} {schema.get('description', '')}".lower()
    if "checkpoint id" in words:
        return "checkpoint"
    return "other"


def options_of(schema: Mapping[str, Any]) -> tuple[str, ...]:
    """The options a field's description names that return an existing object."""
    words = str(schema.get("description", ""))
    return ("do_nothing",) if "do_nothing" in words else ()


def body_slots(
    schema: dict[str, Any], doc: Mapping[str, Any], at: tuple[str, ...] = ()
) -> Iterator[Slot]:
    """Every place of the body a string goes, free-form objects given :data:`WELL_KNOWN`."""
    options = alternatives(resolve(schema, doc), doc)
    types = {o.get("type") for o in options}
    array = any(
        o.get("type") == "array" and resolve(o.get("items", {}), doc).get("type") == "string"
        for o in options
    )
    if at and ("string" in types or array):
        name = at[-1]
        yield Slot(
            "body", at, kind_of(name, schema), "string" in types, array, options=options_of(schema)
        )
    for option in options:
        if option.get("type") != "object" and "properties" not in option:
            continue
        for name, sub in option.get("properties", {}).items():
            yield from body_slots(sub, doc, (*at, name))
        if option.get("additionalProperties") not in (None, False) and at:
            for name in WELL_KNOWN:
                yield Slot("body", (*at, name), kind_of(name, {}), injected=True)
            if at[-1] == "config":  # LangGraph reads a config's ids in its configurable
                for name in WELL_KNOWN:
                    yield Slot(
                        "body", (*at, "configurable", name), kind_of(name, {}), injected=True
                    )


def param_slots(op: Operation) -> Iterator[Slot]:
    """Every parameter that takes a string (or a list of strings)."""
    for param in op.params:
        where = param.get("in", "query")
        if where not in ("path", "query", "header"):
            continue
        options = alternatives(param["schema"], {})
        types = {o.get("type") for o in options}
        array = any(o.get("type") == "array" for o in options)
        if "string" in types or array:
            name = param["name"]
            yield Slot(where, (name,), kind_of(name, param["schema"]), "string" in types, array)


# -- requests --------------------------------------------------------------------------------


@dataclass
class Request:
    """One HTTP request of bob's.

    Attributes:
        method: The method.
        path: The path, its parameters filled.
        params: The query, in order (a list parameter repeats).
        headers: Extra headers.
        body: The JSON body (``None``: none is sent).
    """

    method: str
    path: str
    params: list[tuple[str, str]] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None

    def text(self) -> str:
        """Everything the request says, to tell what a response only echoes."""
        return json.dumps([self.path, self.params, self.headers, self.body], default=str)


@dataclass(frozen=True)
class Case:
    """One request: an operation's baseline, or a variant naming something of alice's.

    Attributes:
        operation: ``METHOD /path``.
        field: Which place holds alice's value (``baseline`` for none).
        value: What of alice's it holds.
        request: The request.
    """

    operation: str
    field: str
    value: str
    request: Request

    @property
    def name(self) -> str:
        return (
            self.operation
            if self.field == "baseline"
            else f"{self.operation} [{self.field} = {self.value}]"
        )


def _baseline(op: Operation, bob: Owner, doc: Mapping[str, Any]) -> tuple[dict[str, str], Request]:
    runs = op.creates_runs
    # an item's address (a namespace beside a key) names bob's item
    item = {kind_of(p["name"], p["schema"]) for p in op.params} >= set(ITEM)
    path_values = {}
    params: list[tuple[str, str]] = []
    for param in op.params:
        name, where, schema = param["name"], param.get("in"), param["schema"]
        kind = kind_of(name, schema)
        if where == "path":
            path_values[name] = str(baseline_of(bob, kind, name, runs=runs))
        elif where == "query" and (param.get("required") or (kind in ITEM and item)):
            value = baseline_of(bob, kind, name, runs=runs)
            params += [(name, v) for v in (value if isinstance(value, list) else [value])]
    body = None
    if op.body is not None and (op.body_required or not _has_optional_body(op)):
        body = _example(op.body, doc, bob, runs)
    path = op.path.format(**path_values)
    return path_values, Request(op.method, path, params, {}, body)


def _has_optional_body(op: Operation) -> bool:
    """A body the route may go without (then the parameters carry the request)."""
    return not op.body_required and any(p.get("in") == "query" for p in op.params)


def _example(schema: dict[str, Any], doc: Mapping[str, Any], bob: Owner, runs: bool) -> Any:
    """A valid body: required fields filled with bob's own (a run's with its input too)."""
    schema = alternatives(resolve(schema, doc), doc)[0]
    props = schema.get("properties", {})
    body: dict[str, Any] = {}
    for name in schema.get("required", []):
        sub = alternatives(resolve(props.get(name, {}), doc), doc)[0]
        kind = kind_of(name, sub)
        if "default" in sub:
            body[name] = sub["default"]
        elif sub.get("type") == "object":
            body[name] = _addressed(sub, doc, bob) if sub.get("properties") else {}
        elif sub.get("type") == "array":
            value = baseline_of(bob, kind, name, runs=runs)
            body[name] = value if isinstance(value, list) else [value]
        elif sub.get("type") in ("integer", "number"):
            body[name] = max(1, int(sub.get("minimum", 1)))
        elif sub.get("type") == "boolean":
            body[name] = False
        else:
            body[name] = baseline_of(bob, kind, name, runs=runs)
    if "context" in props and "config" in props:
        body["context"] = dict(MODEL_CONTEXT)  # the model the server lists
        body["config"] = {"tags": [f"{bob.user}-0"]}  # made new per request (see cases)
    if runs:
        body["input"] = {"question": bob.question}
        if "stream_mode" in props:
            body["stream_mode"] = ["values"]
    return body


def _addressed(schema: dict[str, Any], doc: Mapping[str, Any], bob: Owner) -> dict[str, Any]:
    """A required object that names things (a checkpoint): bob's own in each such field."""
    body = _example(schema, doc, bob, False)
    for name, sub in schema.get("properties", {}).items():
        kind = kind_of(name, resolve(sub, doc))
        if name not in body and kind in ("thread", "checkpoint", "run", "assistant"):
            body[name] = baseline_of(bob, kind, name, runs=False)
    return body


def _set(
    request: Request, slot: Slot, value: Any, path_values: dict[str, str], op: Operation
) -> None:
    """Put ``value`` in the slot (a string, or a list for a slot of labels)."""
    name = slot.at[-1]
    if slot.where == "path":
        path_values = {**path_values, name: str(value)}
        request.path = op.path.format(**path_values)
    elif slot.where == "query":
        request.params = [(k, v) for k, v in request.params if k != name]
        request.params += [(name, v) for v in (value if isinstance(value, list) else [value])]
    elif slot.where == "header":
        request.headers[name] = str(value)
    else:
        if request.body is None:
            request.body = {}
        if slot.at[:2] == ("config", "configurable") and "context" in request.body:
            # Aegra takes one or the other: the model goes where the ids go
            context = request.body.pop("context")
            config = request.body.setdefault("config", {})
            config["configurable"] = {**context, **config.get("configurable", {})}
        node = request.body
        for key in slot.at[:-1]:
            if not isinstance(node.get(key), dict):
                node[key] = {}
            node = node[key]
        node[name] = value


def _shaped(slot: Slot, value: Value) -> Any:
    """The value as the slot takes it: labels or a string, a list where only that goes."""
    if value.labels is not None and slot.kind == "namespace":
        return list(value.labels) if slot.array else value.text
    return value.text if slot.string else [value.text]


def _key_slot(slots: list[Slot], slot: Slot) -> Slot | None:
    """The item-key place beside a namespace place (same location), if any."""
    for other in slots:
        if other.kind == "key" and other.where == slot.where and other.at[:-1] == slot.at[:-1]:
            return other
    return None


def _items_of(alice: Owner, thread: str) -> tuple[tuple[str, tuple[str, ...], str], ...]:
    """Her items in the thread's namespaces first, then those of no thread of hers."""
    own = [i for i in alice.items if thread in i[1]]
    free = [i for i in alice.items if not any(t in i[1] for t in alice.threads.values())]
    return (*own, *free)


def cases(doc: Mapping[str, Any], op: Operation, bob: Owner, alice: Owner) -> list[Case]:
    """Bob's baseline request of the operation and every variant naming alice's things."""
    path_values, base = _baseline(op, bob, doc)
    slots = list(param_slots(op))
    if op.body is not None:
        slots += list(body_slots(op.body, doc))
    found = [Case(op.name, "baseline", "bob's own", base)]

    def variant(
        slot_values: list[tuple[Slot, Any]], field: str, what: str, with_body: bool = True
    ) -> None:
        request = copy.deepcopy(base)
        if with_body and request.body is None and op.body is not None:
            request.body = _example(op.body, doc, bob, op.creates_runs)
        config = request.body.get("config") if isinstance(request.body, dict) else None
        if isinstance(config, dict) and "tags" in config:
            # Aegra makes one assistant per user, graph and config: each request its own
            config["tags"] = [f"{bob.user}-{len(found)}"]
        here = dict(path_values)
        for slot, value in slot_values:
            _set(request, slot, value, here, op)
            if slot.where == "path":
                here[slot.at[-1]] = str(value)
        found.append(Case(op.name, field, what, request))

    for slot in slots:
        # a key the schema does not name is tried with her first thing of its kind only
        for value in values_of(alice, slot.kind)[: 1 if slot.injected else None]:
            pairs = [(slot, _shaped(slot, value))]
            key_slot = _key_slot(slots, slot)
            if value.key and key_slot is not None:
                pairs.append((key_slot, value.key))
            variant(pairs, slot.label, value.what, with_body=slot.where == "body")

    # all of hers at once, one thread at a time: its checkpoint, run and inbox with it
    for label, thread in alice.threads.items():
        coherent = Owner(
            alice.user,
            {label: thread},
            {label: alice.checkpoints[label]} if label in alice.checkpoints else {},
            {label: alice.runs[label]} if label in alice.runs else {},
            alice.assistant,
            _items_of(alice, thread),
        )
        pairs = []
        for slot in slots:
            if slot.injected or slot.kind not in (
                "thread",
                "checkpoint",
                "run",
                "assistant",
                "namespace",
                "key",
                "user",
            ):
                if slot.options and not slot.injected:
                    pairs.append((slot, slot.options[0]))
                continue
            value = values_of(coherent, slot.kind)[0]
            pairs.append((slot, _shaped(slot, value)))
        if pairs:
            variant(pairs, "all of alice's", f"her {label} thread's")

    # decoys: one place names hers, every other place a namespace may be named, bob's
    named = [s for s in slots if s.kind == "namespace" and not s.injected]
    if named:
        mine = list(bob.items[0][1])
        decoys = [
            Slot("body", (name,), "namespace", False, True)
            for name in DECOY_FIELDS
            if op.body is not None and not any(s.at == (name,) for s in named)
        ]
        theirs = [v for v in values_of(alice, "namespace") if v.labels is not None][:3]
        for slot in named:
            others = [s for s in [*named, *decoys] if s != slot and s.at[-1] != "suffix"]
            if not others:
                continue
            for value in theirs:
                pairs = [(slot, _shaped(slot, value))]
                pairs += [(o, mine if o.array else ".".join(mine)) for o in others]
                key_slot = _key_slot(slots, slot)
                if value.key and key_slot is not None:
                    pairs.append((key_slot, value.key))
                names = " + ".join(o.label for o in others)
                variant(pairs, f"decoy {slot.label} (bob's in {names})", value.what)
    return found
