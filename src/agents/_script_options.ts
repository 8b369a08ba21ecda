/**
 * Options of `scriptedAgent` (authoring.md §8.1): their types, their validation into frozen
 * copies, and the configuration identity derived from the script.
 */
import { DefinitionError } from "../_shared/mod.ts";
import { deepFreeze, isPlainObject, type JsonValue } from "../_shared/mod.ts";
import { check, checkOptions, describe, MAX_TIMER_MS, USAGE_FIELDS } from "../_shared/mod.ts";
import { choices, jsonProblem } from "./_problem.ts";
import type { AgentContext, EvidenceCoverage, TurnInput, Usage } from "./types.ts";
import { copyUsage, validateUsage } from "./usage.ts";

/** One scripted tool occurrence. */
interface ScriptTool {
  name: string;
  /** @default {} */
  input?: JsonValue;
  output?: JsonValue;
  /** `pending` emits a start without a finish. @default "completed" */
  status?: "completed" | "failed" | "rejected" | "pending";
}

/** What a scripted rule answers with. */
export interface ScriptReply {
  /** The assistant message. */
  text?: string;
  thinking?: string;
  tools?: readonly ScriptTool[];
  /** @default "completed" */
  status?: "completed" | "failed";
  /** Adds an `error` event after the message. */
  error?: string;
  data?: JsonValue;
  usage?: Usage;
  /** Passed to `ctx.session.capture`. */
  sessionId?: string;
  /** Waits before answering; aborts with `ctx.signal`. */
  delayMs?: number;
  /** Throws `SendRejectedError` while `ctx.sendTry < times` (default 1). */
  reject?: { reason: "rate_limit" | "network"; times?: number; retryAfterMs?: number };
  /** Throws `Error(throw)`: the Attempt is errored. */
  throw?: string;
}

/** Decides whether a rule answers: exact text, a pattern, or a predicate. */
type ScriptWhen = string | RegExp | ((input: TurnInput, ctx: AgentContext) => boolean);

/** A reply computed at send time. */
type ScriptReplyFunction = (
  input: TurnInput,
  ctx: AgentContext,
) => ScriptReply | Promise<ScriptReply>;

/** One rule of a script; the first matching rule answers. */
export interface ScriptRule {
  when: ScriptWhen;
  /** An array answers the n-th match on a session line with element n; the last repeats. */
  reply: ScriptReply | readonly ScriptReply[] | ScriptReplyFunction;
}

/** Options of `scriptedAgent`. */
export interface ScriptedAgentOptions {
  /** @default "scripted" */
  name?: string;
  script: readonly ScriptRule[];
  /** Answers inputs no rule matches; without it such a send throws (`scripted-no-match`). */
  fallback?: ScriptReply;
  /** @default completeEvidenceCoverage */
  evidenceCoverage?: Partial<EvidenceCoverage>;
}

/** The validated options: frozen replies and private copies of every RegExp. */
export interface CheckedScript {
  readonly name: string;
  readonly rules: readonly ScriptRule[];
  readonly fallback: ScriptReply | undefined;
  readonly evidenceCoverage: unknown;
  readonly identity: JsonValue;
}

const WHAT = "scriptedAgent()";
const REPLY_KEYS = [
  "text",
  "thinking",
  "tools",
  "status",
  "error",
  "data",
  "usage",
  "sessionId",
  "delayMs",
  "reject",
  "throw",
];
const TOOL_STATUSES = ["completed", "failed", "rejected", "pending"];

/** Validates the options; throws `DefinitionError` on the first problem. */
export function checkScript(opts: unknown, namePattern: RegExp): CheckedScript {
  const table = {
    known: ["name", "script", "fallback", "evidenceCoverage"],
    required: ["script"],
  };
  const options = checkOptions(opts, table, WHAT);
  const name = options.name === undefined
    ? "scripted"
    : check.string(options.name, "name", WHAT, { pattern: namePattern });
  if (!Array.isArray(options.script)) invalid("script", "an array of rules", options.script);
  const rules = Object.freeze(options.script.map((rule, i) => checkRule(rule, `script[${i}]`)));
  const fallback = options.fallback === undefined
    ? undefined
    : checkReply(options.fallback, "fallback");
  return {
    name,
    rules,
    fallback,
    evidenceCoverage: options.evidenceCoverage ?? {},
    identity: scriptIdentity(rules, fallback),
  };
}

function checkRule(value: unknown, path: string): ScriptRule {
  const rule = checkOptions(
    value,
    { known: ["when", "reply"], required: ["when", "reply"] },
    WHAT,
    path,
  );
  const { when, reply } = rule;
  let checkedWhen: ScriptWhen;
  if (typeof when === "string" || typeof when === "function") {
    checkedWhen = when as ScriptWhen;
  } else if (isRegExp(when)) {
    // A private copy: `lastIndex` is reset on every test and the user's object never mutates it.
    checkedWhen = new RegExp(when.source, when.flags);
  } else {
    invalid(`${path}.when`, "a string, a RegExp or a function", when);
  }
  let checkedReply: ScriptRule["reply"];
  if (typeof reply === "function") {
    checkedReply = reply as ScriptReplyFunction;
  } else if (Array.isArray(reply)) {
    if (reply.length === 0) invalid(`${path}.reply`, "a non-empty array of replies", reply);
    checkedReply = Object.freeze(reply.map((r, j) => checkReply(r, `${path}.reply[${j}]`)));
  } else {
    checkedReply = checkReply(reply, `${path}.reply`);
  }
  return Object.freeze({ when: checkedWhen, reply: checkedReply });
}

/** Validates one reply into a frozen copy without absent fields; throws `DefinitionError`. */
export function checkReply(value: unknown, path: string): ScriptReply {
  if (!isPlainObject(value)) invalid(path, "a reply object", value);
  const reply = checkOptions(value, { known: REPLY_KEYS }, WHAT, path);
  const out: Record<string, unknown> = {};
  for (const key of ["text", "thinking", "error", "sessionId", "throw"]) {
    if (reply[key] !== undefined) out[key] = check.string(reply[key], `${path}.${key}`, WHAT);
  }
  if (reply.status !== undefined) {
    out.status = oneOf(reply.status, ["completed", "failed"], `${path}.status`);
  }
  if (reply.tools !== undefined) out.tools = checkTools(reply.tools, `${path}.tools`);
  if (reply.data !== undefined) out.data = checkJson(reply.data, `${path}.data`);
  if (reply.usage !== undefined) out.usage = checkUsage(reply.usage, `${path}.usage`);
  if (reply.delayMs !== undefined) {
    out.delayMs = check.nonNegativeNumber(reply.delayMs, `${path}.delayMs`, WHAT, MAX_TIMER_MS);
  }
  if (reply.reject !== undefined) out.reject = checkReject(reply.reject, `${path}.reject`);
  return deepFreeze(out) as ScriptReply;
}

function checkTools(value: unknown, path: string): readonly ScriptTool[] {
  if (!Array.isArray(value)) invalid(path, "an array of tools", value);
  return value.map((entry, i) => {
    const at = `${path}[${i}]`;
    const table = { known: ["name", "input", "output", "status"], required: ["name"] };
    const tool = checkOptions(entry, table, WHAT, at);
    const out: ScriptTool = {
      name: check.string(tool.name, `${at}.name`, WHAT, { nonEmpty: true }),
    };
    if (tool.input !== undefined) out.input = checkJson(tool.input, `${at}.input`);
    if (tool.output !== undefined) out.output = checkJson(tool.output, `${at}.output`);
    if (tool.status !== undefined) {
      out.status = oneOf(tool.status, TOOL_STATUSES, `${at}.status`) as NonNullable<
        ScriptTool["status"]
      >;
    }
    return out;
  });
}

function checkReject(value: unknown, path: string): ScriptReply["reject"] {
  const table = { known: ["reason", "times", "retryAfterMs"], required: ["reason"] };
  const reject = checkOptions(value, table, WHAT, path);
  const out: Record<string, unknown> = {
    reason: oneOf(reject.reason, ["rate_limit", "network"], `${path}.reason`),
  };
  if (reject.times !== undefined) {
    out.times = check.positiveInteger(reject.times, `${path}.times`, WHAT);
  }
  if (reject.retryAfterMs !== undefined) {
    out.retryAfterMs = check.nonNegativeNumber(
      reject.retryAfterMs,
      `${path}.retryAfterMs`,
      WHAT,
      MAX_TIMER_MS,
    );
  }
  return out as ScriptReply["reject"];
}

function checkUsage(value: unknown, path: string): Usage {
  checkOptions(value, { known: USAGE_FIELDS }, WHAT, path);
  const found = validateUsage(value, path);
  if (found) {
    throw new DefinitionError("definition.invalid-value", found.path, `${WHAT}: ${found.message}`);
  }
  return copyUsage(value as Usage);
}

function checkJson(value: unknown, path: string): JsonValue {
  const found = jsonProblem(value, path);
  if (found) {
    throw new DefinitionError("definition.invalid-value", found.path, `${WHAT}: ${found.message}`);
  }
  return structuredClone(value) as JsonValue;
}

function oneOf(value: unknown, allowed: readonly string[], path: string): string {
  if (typeof value !== "string" || !allowed.includes(value)) {
    invalid(path, `one of ${choices(allowed)}`, value);
  }
  return value;
}

function invalid(path: string, expected: string, value: unknown): never {
  throw new DefinitionError(
    "definition.invalid-value",
    path,
    `${WHAT}: ${path} must be ${expected}, got ${describe(value)}`,
  );
}

/** True for a RegExp from any realm. */
function isRegExp(value: unknown): value is RegExp {
  return Object.prototype.toString.call(value) === "[object RegExp]";
}

/**
 * The script as JSON: each RegExp as `/source/flags` and each function as its source text, so
 * editing the script changes the configuration identity.
 */
function scriptIdentity(
  rules: readonly ScriptRule[],
  fallback: ScriptReply | undefined,
): JsonValue {
  const script = rules.map((rule) => ({
    when: typeof rule.when === "string" ? rule.when : String(rule.when),
    reply: typeof rule.reply === "function" ? String(rule.reply) : rule.reply as JsonValue,
  }));
  // Built by assignment: a conditional of two literals types `fallback` as optional-undefined,
  // which is not JSON for a project that type-checks these sources without
  // exactOptionalPropertyTypes.
  const identity: Record<string, JsonValue> = { script };
  if (fallback !== undefined) identity.fallback = fallback as JsonValue;
  return deepFreeze(structuredClone(identity));
}
