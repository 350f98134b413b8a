"""ddd-expert: Domain-Driven Design guidance, chosen for the conversation.

The host calls `Prompt.fragments` while it builds the system prompt of a run
in which this skill is active (a trigger keyword in the user's message, or
`--skills ddd-expert`). The answer is:

- the core practice (priority 0), always;
- one fragment per DDD topic the user's message talks about (aggregates,
  bounded contexts, entities and value objects, domain events, repositories,
  ubiquitous language), priorities 10-15;
- one fragment per project language with idiomatic DDD advice for it
  (priority 30), so a Go project hears about Go and not about Java.

Fragments are added most important first while they fit `max-tokens` (the
host's estimate is one token per four characters); the host trims by
priority as well, so this only avoids computing text that would be cut.
"""

import re
from dataclasses import dataclass

from wit_world import exports
from wit_world.exports.prompt import PromptContext, PromptFragment
from wit_world.imports import log
from wit_world.imports.types import LogLevel

CHARS_PER_TOKEN = 4

CORE = PromptFragment(
    title="DDD core practice",
    priority=0,
    content="""\
## Domain-Driven Design

Apply Domain-Driven Design where the domain is complex enough to deserve it; \
plain CRUD does not need aggregates and events.

- Start from the business capability and the people who own it: find the \
bounded context before drawing classes.
- Design each aggregate around an invariant that must hold after every \
transaction; keep aggregates small and refer to other aggregates by id.
- Between contexts prefer domain events and eventual consistency over shared \
tables and distributed transactions.
- Use the ubiquitous language: names in code, tests and APIs are the words \
domain experts use, with the same meaning.
- Value objects for concepts defined by their attributes, entities for \
concepts with an identity and a lifecycle.
- Repositories load and save whole aggregates; the domain model never talks \
to the database directly.
- Put an anti-corruption layer where you integrate a foreign model, so its \
concepts do not leak into yours.

When you propose a model, name the bounded context, the aggregate roots and \
the invariants they protect, and say which alternative you rejected and why.""",
)


@dataclass(frozen=True)
class Topic:
    title: str
    priority: int
    # Regular expressions (case-insensitive) over the user's message.
    patterns: tuple[str, ...]
    content: str


TOPICS = (
    Topic(
        title="Aggregates and invariants",
        priority=10,
        patterns=(r"\baggregates?\b", r"\binvariants?\b", r"consistency boundar"),
        content="""\
### Aggregates and invariants

- An aggregate is a consistency boundary: everything that must be true at the \
end of a transaction lives inside one aggregate, behind its root.
- Write the invariant down first ("an order's total never exceeds the \
customer's credit limit"), then choose the smallest cluster of objects that \
can enforce it.
- Only the root is referenced from outside; other aggregates hold its id, \
never an object reference. Load by id through the repository.
- Modify one aggregate per transaction. A rule spanning aggregates is either \
a sign the boundary is wrong or a process: publish an event and let the \
other aggregate react (eventual consistency), with a compensating action if \
it fails.
- Methods on the root express intentions (`order.cancel(reason)`), validate \
and change state, and record domain events; no public setters.
- Protect concurrent writes with optimistic locking (a version number on the \
root) rather than long-held locks.
- Large aggregates (thousands of children, hot contention) usually mean an \
invariant was assumed that the business does not actually need.""",
    ),
    Topic(
        title="Bounded contexts and context maps",
        priority=11,
        patterns=(
            r"bounded[ -]contexts?",
            r"context[ -]maps?",
            r"anti[ -]?corruption",
            r"\bacl\b",
            r"shared kernel",
            r"customer[ /-]supplier",
            r"conformist",
            r"open host",
            r"published language",
            r"microservices?",
        ),
        content="""\
### Bounded contexts and context maps

- A bounded context is the boundary inside which one model and one language \
are consistent. The same word ("Customer", "Account") may mean different \
things in different contexts; that is expected, not a duplication to remove.
- Draw boundaries along business capabilities and team ownership, not along \
technical layers or database tables. One team per context works best.
- Make the relationships explicit in a context map: partnership, shared \
kernel (small, jointly owned), customer/supplier, conformist, open host \
service with a published language, or separate ways.
- Integrate a legacy or third-party model through an anti-corruption layer: \
a translator at the boundary that maps their concepts to yours, so changes \
on their side stop at one place.
- Contexts talk through explicit contracts (APIs, events with versioned \
schemas), never through each other's database.
- A microservice should not be smaller than a bounded context by default; \
split a context only for a clear operational reason.""",
    ),
    Topic(
        title="Entities and value objects",
        priority=12,
        patterns=(
            r"\bentit(?:y|ies)\b",
            r"value[ -]objects?",
            r"\bidentity\b",
            r"primitive obsession",
        ),
        content="""\
### Entities and value objects

- An entity has an identity that stays the same while its attributes change \
(an Order, a Patient); equality is by id.
- A value object is defined only by its attributes (Money, EmailAddress, \
DateRange); it is immutable, compared by value, and replaced instead of \
modified.
- Prefer value objects: they validate themselves in their constructor, so an \
invalid `Email` or a negative `Quantity` cannot exist anywhere in the model.
- Replace primitives that carry rules (`string currency`, `int cents`) by \
value objects; keep behaviour with the data (`money.add(other)` checks the \
currency).
- Generate identities in the domain (UUIDs or a typed id such as `OrderId`) \
rather than relying on the database, so an entity is complete before it is \
saved.""",
    ),
    Topic(
        title="Domain events",
        priority=13,
        patterns=(
            r"domain[ -]events?",
            r"event[ -]sourc",
            r"\bcqrs\b",
            r"\boutbox\b",
            r"eventual(?:ly)? consisten",
            r"\bsagas?\b",
        ),
        content="""\
### Domain events

- A domain event records something the business cares about that already \
happened: past tense, in the ubiquitous language (`OrderPlaced`, \
`PaymentRefused`), with the ids and facts a subscriber needs.
- The aggregate records events as part of its state change; they are \
published after the transaction commits. Use a transactional outbox so the \
state change and the event cannot diverge.
- Subscribers must be idempotent and tolerate reordering; delivery is at \
least once.
- Events crossing a context boundary are a published contract: version them \
and keep internal events separate from integration events.
- Event sourcing (state rebuilt from the event stream) is a persistence \
choice for one aggregate type, not a system-wide default; pair it with \
snapshots for long streams. CQRS separates write models from read models \
that are projected from events and may lag behind.""",
    ),
    Topic(
        title="Repositories",
        priority=14,
        patterns=(r"\brepositor(?:y|ies)\b", r"\bpersist", r"\borm\b", r"unit of work"),
        content="""\
### Repositories

- One repository per aggregate root, with a collection-like interface in the \
domain's terms: `get(order_id)`, `add(order)`, `find_overdue(today)`; no \
generic `query(sql)` and no repositories for inner entities.
- The interface belongs to the domain layer; the implementation (SQL, ORM, \
document store) lives in infrastructure and maps rows to aggregates.
- A repository loads and saves the whole aggregate, including its version \
for optimistic concurrency.
- Transactions are controlled by the application service (unit of work), not \
by the repository or the domain objects.
- Read-heavy screens and reports may bypass the domain model with dedicated \
query services; do not bend aggregates to serve every query.""",
    ),
    Topic(
        title="Ubiquitous language",
        priority=15,
        patterns=(r"ubiquitous", r"\bglossary\b", r"domain experts?", r"\bnaming\b"),
        content="""\
### Ubiquitous language

- Build the language with domain experts and use it everywhere: \
conversations, code, tests, API names, events and documentation.
- When the code needs a word the experts do not use, the model is probably \
missing a concept; ask instead of inventing one.
- Avoid technical or generic names in the domain layer (`Manager`, \
`Processor`, `Data`, `Info`); `Shipment.dispatch()` says more than \
`ShipmentService.update(status=2)`.
- Keep a short glossary per bounded context, and rename code when the \
language changes: a stale name is a bug in the model.""",
    ),
)

LANGUAGES = {
    "rust": """\
### DDD in Rust

- Value objects as newtypes with private fields and a fallible constructor \
(`Email::parse(s) -> Result<Email, EmailError>`); derive `Clone, PartialEq, \
Eq, Hash` and make invalid states unrepresentable with enums.
- Aggregate roots own their children (no `Rc<RefCell<_>>` graphs); methods \
take `&mut self`, check invariants and push events into a `Vec<DomainEvent>` \
drained after saving.
- Typed ids (`struct OrderId(Uuid)`) prevent mixing ids of different \
aggregates.
- Repositories are traits in the domain crate, implemented in an \
infrastructure crate; keep the domain crate free of sqlx/diesel and async \
runtime types. One crate or module per bounded context.""",
    "go": """\
### DDD in Go

- One package per bounded context (`internal/billing`, `internal/shipping`), \
with the domain types in it and adapters in sub-packages; no shared \
`models` package.
- Unexported struct fields and constructor functions (`NewOrder(...) \
(*Order, error)`) guard invariants; expose behaviour as methods, not fields.
- Value objects as small structs passed by value; typed ids \
(`type OrderID string`).
- Repository interfaces are declared where they are used (the domain or \
application package); pass `context.Context` to repository methods, not to \
domain methods. Return domain errors (`ErrCreditLimitExceeded`) as sentinel \
or typed errors.""",
    "java": """\
### DDD in Java

- Value objects as `record`s with validation in the compact constructor; \
entities as classes with a typed id and equality by id only.
- Keep the domain module free of framework annotations where you can; if JPA \
maps the aggregates, map only roots to repositories and keep setters private \
or package-private.
- Spring Data repositories per aggregate root; transactions (`@Transactional`) \
on application services, one aggregate per transaction.
- Publish domain events after commit (e.g. `@TransactionalEventListener` or \
an outbox table); one Maven/Gradle module or package per bounded context, \
enforced with ArchUnit tests.""",
    "kotlin": """\
### DDD in Kotlin

- Value objects as `@JvmInline value class` or `data class` with checks in \
`init`; sealed classes for domain states and results.
- Aggregate state in private `var`s behind intention-revealing methods; \
events collected in the root and published after commit.
- Keep the domain module free of Spring and JPA; map in adapters.""",
    "typescript": """\
### DDD in TypeScript

- Value objects as classes with private constructors and static factories \
returning a result (`Email.create(s)`); `readonly` fields; branded types \
(`type OrderId = string & { readonly brand: 'OrderId' }`) for ids.
- Discriminated unions for aggregate states and domain events; `switch` on \
`type` with exhaustiveness checks.
- Keep the domain folder free of framework and ORM imports (no NestJS \
decorators or TypeORM entities in it); repositories are interfaces there, \
implemented in infrastructure.
- One folder or package per bounded context, with lint rules that forbid \
importing another context's internals.""",
    "python": """\
### DDD in Python

- Value objects as `@dataclass(frozen=True)` with validation in \
`__post_init__`; entities as dataclasses with `eq=False` and an `id`.
- Aggregate roots expose methods that check invariants and append events to \
a list the application service publishes after commit.
- Repositories as `typing.Protocol`s in the domain package; SQLAlchemy \
mappings (imperative mapping keeps the domain classes clean) in \
infrastructure; a unit-of-work context manager owns the transaction.
- One package per bounded context; check the import rules with \
import-linter.""",
    "csharp": """\
### DDD in C#

- Value objects as `record`s (or `readonly record struct`) with validation in \
the constructor; strongly typed ids.
- Private setters and backing fields for collections on aggregate roots; EF \
Core owned types for value objects, one `DbSet` per aggregate root.
- Domain events collected on the root and dispatched from `SaveChanges` or an \
outbox; one project per bounded context.""",
}
# Names the host may detect for the same advice.
LANGUAGE_ALIASES = {
    "tsx": "typescript",
    "javascript": "typescript",
    "c#": "csharp",
    "c_sharp": "csharp",
}


def estimate_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def topics_for(message: str) -> list[Topic]:
    return [
        topic
        for topic in TOPICS
        if any(re.search(p, message, re.IGNORECASE) for p in topic.patterns)
    ]


def language_fragments(languages: list[str]) -> list[PromptFragment]:
    out = []
    seen = set()
    for name in languages:
        key = LANGUAGE_ALIASES.get(name.lower(), name.lower())
        if key in LANGUAGES and key not in seen:
            seen.add(key)
            out.append(
                PromptFragment(
                    # The heading without its "### ": "DDD in Rust".
                    title=LANGUAGES[key].split("\n", 1)[0].lstrip("# "),
                    content=LANGUAGES[key],
                    priority=30,
                )
            )
    return out


def select(context: PromptContext) -> list[PromptFragment]:
    wanted = [CORE]
    wanted += [
        PromptFragment(title=t.title, content=t.content, priority=t.priority)
        for t in topics_for(context.user_message)
    ]
    wanted += language_fragments(context.languages)
    # Most important first; keep what fits. The core always goes: the host
    # cuts it to the budget if even that is too small.
    budget = context.max_tokens
    kept = []
    used = 0
    for fragment in sorted(wanted, key=lambda f: f.priority):
        cost = estimate_tokens(fragment.content)
        if kept and used + cost > budget:
            log.log(
                LogLevel.DEBUG,
                f"left out `{fragment.title}` ({cost} tokens; {budget - used} left)",
            )
            continue
        kept.append(fragment)
        used += cost
    return kept


class Prompt(exports.Prompt):
    def fragments(self, context: PromptContext) -> list[PromptFragment]:
        kept = select(context)
        log.log(
            LogLevel.INFO,
            "fragments: " + ", ".join(f.title for f in kept),
        )
        return kept
