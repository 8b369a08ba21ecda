/**
 * Builds the test context `t` (authoring.md §3) over an assertion recorder and the Attempt's
 * session lines. Every method delegates; the only state here is which lines exist.
 */
import type { AsyncLocalStorage } from "node:async_hooks";
import { AssertionAuthoringError } from "../_shared/mod.ts";
import { sumUsage, type TurnRecord, worstCoverage } from "../agents/mod.ts";
import type { AssertionRecorder, EvidenceSnapshot } from "../expect/mod.ts";
import type { DiagnosticInput, ProgressUpdate, StreamEvent } from "../agents/mod.ts";
import { SessionLine } from "./session_line.ts";
import type { LineDeps } from "./session_line.ts";
import type { Kind, SendInput, SessionHandle, TestContext, TurnHandle } from "../discovery/mod.ts";

/** The private signal `t.skip` throws; recognised by brand across API copies. */
const SKIP_KEY: unique symbol = Symbol.for("niceeval.skip") as never;

/** True for the value `t.skip` throws. */
export function isSkipSignal(value: unknown): boolean {
  return typeof value === "object" && value !== null && SKIP_KEY in value;
}

/** Methods of `t` reserved for a later release: calling one throws `not-supported`. */
const LATER_METHODS = ["sendFile", "requireInputRequest", "respond", "respondAll", "judge"];
/** Properties of `t` reserved for a later release: reading one throws `not-supported`. */
const LATER_PROPERTIES = ["reasoningEffort"];

/** Everything `t` needs. */
export interface ContextDeps extends LineDeps {
  readonly kind: Kind;
  readonly recorder: AssertionRecorder;
  readonly groups: AsyncLocalStorage<readonly string[]>;
}

/** Creates `t` and its session lines; `lines` grows with `t.newSession()`. */
export function createTestContext(
  deps: ContextDeps,
): { t: TestContext<Kind>; lines: SessionLine[] } {
  const lines: SessionLine[] = [new SessionLine(0, deps)];
  const t = ConversationObject.testContext(deps, lines);
  return { t: t as unknown as TestContext<Kind>, lines };
}

/**
 * `t` and the `t.newSession()` handles. Their methods are own closures, so that they also work
 * destructured and spread. Their getters are shared by every Attempt and read the line through
 * `this`: per-Attempt accessor functions would give every `t` its own hidden class (V8 cannot
 * share a shape between objects whose accessors differ), which outlives the Attempt's young
 * objects.
 */
class ConversationObject {
  readonly #line: SessionLine;
  readonly #deps: ContextDeps;
  /** Every line of the Attempt for `t`; undefined for a session handle. */
  readonly #lines: readonly SessionLine[] | undefined;

  static readonly #REPLY: PropertyDescriptor = {
    get(this: ConversationObject) {
      return lastMessage(this.#line.turns);
    },
    enumerable: true,
  };
  static readonly #SESSION_ID: PropertyDescriptor = {
    get(this: ConversationObject) {
      return this.#line.session.id;
    },
    enumerable: true,
  };
  static readonly #EVENTS: PropertyDescriptor = {
    get(this: ConversationObject) {
      return Object.freeze(
        this.#line.turns.flatMap((turn) => turn.events),
      ) as readonly StreamEvent[];
    },
    enumerable: true,
  };
  static readonly #SIGNAL: PropertyDescriptor = {
    get(this: ConversationObject) {
      return this.#deps.signal;
    },
    enumerable: true,
  };
  static readonly #USAGE: PropertyDescriptor = {
    get(this: ConversationObject) {
      const turns = this.#lines ? sortedTurns(this.#lines) : this.#line.turns;
      return sumUsage(turns.map((turn) => turn.usage));
    },
    enumerable: true,
  };
  // Not enumerable: spreading `t` must not throw.
  static readonly #SANDBOX: PropertyDescriptor = {
    get(this: ConversationObject) {
      const deps = this.#deps;
      return deps.sandbox?.() ?? notAvailable(deps, "no-sandbox", "t.sandbox");
    },
  };
  static readonly #LATER: readonly (readonly [string, PropertyDescriptor])[] = LATER_PROPERTIES
    .map((name) => [name, {
      get(this: ConversationObject) {
        return notAvailable(this.#deps, "not-supported", `t.${name}`);
      },
    }]);

  private constructor(
    line: SessionLine,
    deps: ContextDeps,
    lines: readonly SessionLine[] | undefined,
  ) {
    this.#line = line;
    this.#deps = deps;
    this.#lines = lines;
  }

  /** `t`: the main session's conversation, the Attempt-wide assertions and the helpers. */
  static testContext(deps: ContextDeps, lines: SessionLine[]): ConversationObject {
    const t = new ConversationObject(lines[0]!, deps, lines);
    const own = t as unknown as Record<string, unknown>;
    const recorder = deps.recorder;
    own.evaluationKind = deps.kind;
    // Properties added by key rather than by name turn an object into a dictionary once it has
    // more than a dozen fields outside the object: these come first, while it has few.
    for (const name of LATER_METHODS) {
      own[name] = () => notAvailable(deps, "not-supported", `t.${name}`);
    }
    const read = () => snapshot(deps, sortedTurns(lines), "attempt");
    // `t` has no order assertions: turns of different sessions have no common order (§3.2).
    Object.assign(t, recorder.scoped(read, { orders: false }));
    Object.assign(t, helpers(deps, lines));
    own.check = recorder.check;
    own.score = recorder.score;
    t.#defineConversation();
    Object.defineProperty(t, "signal", ConversationObject.#SIGNAL);
    own.model = deps.model;
    own.flags = deps.flags;
    Object.defineProperty(t, "usage", ConversationObject.#USAGE);
    Object.defineProperty(t, "sandbox", ConversationObject.#SANDBOX);
    for (const [name, descriptor] of ConversationObject.#LATER) {
      Object.defineProperty(t, name, descriptor);
    }
    Object.freeze(t);
    return t;
  }

  /** A `t.newSession()` handle over `line`. */
  static sessionHandle(line: SessionLine, deps: ContextDeps): ConversationObject {
    const handle = new ConversationObject(line, deps, undefined);
    Object.assign(handle, deps.recorder.scoped(() => snapshot(deps, [...line.turns], "session")));
    handle.#defineConversation();
    Object.defineProperty(handle, "usage", ConversationObject.#USAGE);
    Object.freeze(handle);
    return handle;
  }

  /** Adds `send`, `reply`, `sessionId` and `events` of the line. */
  #defineConversation(): void {
    const line = this.#line;
    const deps = this.#deps;
    (this as unknown as Record<string, unknown>).send = (input: SendInput) => {
      const sent = sendOn(line, input, deps);
      // The failure is recorded with the Attempt either way; a send nobody awaits (it was still
      // in flight when the body settled) must not surface as an unhandled rejection.
      sent.catch(ignore);
      return sent;
    };
    Object.defineProperty(this, "reply", ConversationObject.#REPLY);
    Object.defineProperty(this, "sessionId", ConversationObject.#SESSION_ID);
    Object.defineProperty(this, "events", ConversationObject.#EVENTS);
  }
}

/** The helpers of `t`; they share one closure scope. */
function helpers(deps: ContextDeps, lines: SessionLine[]) {
  return {
    newSession: () => {
      const line = new SessionLine(lines.length, deps);
      lines.push(line);
      return ConversationObject.sessionHandle(line, deps) as unknown as SessionHandle<Kind>;
    },
    progress: (u: ProgressUpdate) => deps.control.activity(`running eval · ${u.message}`),
    log: (message: string) => {
      deps.state.log(String(message));
      deps.control.activity(`running eval · ${message}`);
    },
    diagnostic: (d: DiagnosticInput) => deps.state.diagnostic(d),
    skip: (reason: string) => skip(deps, reason),
    group: <V>(title: string, body: () => V | PromiseLike<V>) => {
      const path = [...(deps.groups.getStore() ?? []), String(title)];
      return deps.groups.run(path, async () => await body());
    },
  };
}

function ignore(): void {}

async function sendOn(
  line: SessionLine,
  input: SendInput,
  deps: ContextDeps,
): Promise<TurnHandle<Kind>> {
  return turnHandle(await line.send(inputText(input, deps)), deps);
}

function skip(deps: ContextDeps, reason: unknown): never {
  if (typeof reason !== "string" || reason.trim() === "") {
    throw deps.authoringError(
      new AssertionAuthoringError(
        "invalid-argument",
        "Cannot skip: t.skip(reason) needs a non-empty reason",
      ),
    );
  }
  // Registered at the call: catching the signal does not undo the skip (rule 3.2.2). A skip
  // from code still running after the body settled comes too late, like a late assertion.
  if (!deps.state.bodySettled) deps.state.skipReason ??= reason;
  throw Object.assign(new Error(`Skipped: ${reason}`), { [SKIP_KEY]: true, name: "SkipSignal" });
}

function notAvailable(deps: ContextDeps, code: string, member: string): never {
  const message = code === "no-sandbox"
    ? "Cannot read t.sandbox: this Attempt runs without a sandbox"
    : `Cannot use ${member}: it is not supported in this release`;
  throw deps.authoringError(new AssertionAuthoringError(code, message));
}

function turnHandle(turn: TurnRecord, deps: ContextDeps): TurnHandle<Kind> {
  const handle: Record<string, unknown> = {
    ...deps.recorder.scoped(() => snapshot(deps, [turn], "turn")),
    events: turn.events,
    toolCalls: turn.toolCalls,
    status: turn.status,
    message: turn.message,
  };
  if (turn.data !== undefined) handle.data = turn.data;
  if (turn.usage !== undefined) handle.usage = turn.usage;
  return Object.freeze(handle) as unknown as TurnHandle<Kind>;
}

function snapshot(
  deps: ContextDeps,
  turns: readonly TurnRecord[],
  scope: EvidenceSnapshot["scope"],
): EvidenceSnapshot {
  return {
    turns,
    scope,
    declaredCoverage: worstCoverage(
      turns.map((turn) => turn.coverage),
      deps.agent.evidenceCoverage,
    ),
  };
}

function inputText(input: SendInput, deps: ContextDeps): string {
  if (typeof input === "string") return input;
  if (typeof input === "object" && input !== null && typeof input.text === "string") {
    const extra = Object.keys(input).filter((key) => key !== "text");
    if (extra.length === 0) return input.text;
    throw deps.authoringError(
      new AssertionAuthoringError(
        "not-supported",
        `Cannot send: input field "${extra[0]}" is not supported in this release`,
      ),
    );
  }
  throw deps.authoringError(
    new AssertionAuthoringError(
      "invalid-argument",
      "Cannot send: send(input) takes a string or { text }",
    ),
  );
}

function lastMessage(turns: readonly TurnRecord[]): string {
  for (let i = turns.length - 1; i >= 0; i--) {
    const events = turns[i]!.events;
    for (let j = events.length - 1; j >= 0; j--) {
      const event = events[j]!;
      if (event.type === "message" && event.role === "assistant" && event.text.trim() !== "") {
        return event.text;
      }
    }
  }
  return "";
}

/** Every completed turn of every line, in completion order. */
function sortedTurns(lines: readonly SessionLine[]): TurnRecord[] {
  return lines.flatMap((line) => line.turns).sort((a, b) =>
    a.endedAt - b.endedAt || a.session - b.session
  );
}
