/** `defineAgent` and the brand check that turns a user's agent into a driveable one (§7.1). */
import { brand, isBranded, isProxy } from "../_shared/mod.ts";
import { DefinitionError } from "../_shared/mod.ts";
import { deepFreeze, type JsonValue } from "../_shared/mod.ts";
import { check, checkOptions, describe } from "../_shared/mod.ts";
import { jsonProblem } from "./_problem.ts";
import { completeEvidenceCoverage, coverageProblem, normalizeCoverage } from "./coverage.ts";
import type { Agent, AgentDefinition, EvidenceCoverage, ResolvedAgent } from "./types.ts";

/** Agent names: display and configuration identity. */
export const AGENT_NAME_REGEXP: RegExp = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const WHAT = "defineAgent()";
const TABLE = {
  known: [
    "name",
    "kind",
    "identity",
    "evidenceCoverage",
    "send",
    "setup",
    "teardown",
    "classifySendFailure",
    "precondition",
  ],
  required: ["name", "evidenceCoverage", "send"],
} as const;

/**
 * Defines an agent from its contract. Validation is synchronous; the result is frozen and
 * branded, and `identity` defaults to `null`.
 *
 * @param def The agent's name, kind, identity, declared coverage and functions.
 * @returns The opaque agent to pass to `defineExperiment({ agent })`.
 * @throws {DefinitionError} On the first unknown, missing or invalid option.
 * @example
 * ```ts
 * import { completeEvidenceCoverage, defineAgent } from "niceeval/adapter";
 * export const echo = defineAgent({
 *   name: "echo",
 *   evidenceCoverage: completeEvidenceCoverage,
 *   send: (input) =>
 *     Promise.resolve({
 *       status: "completed",
 *       events: [{ type: "message", role: "assistant", text: input.text }],
 *     }),
 * });
 * ```
 */
export function defineAgent(def: AgentDefinition): Agent {
  const options = checkOptions(def, TABLE, WHAT);
  const name = check.string(options.name, "name", WHAT, { pattern: AGENT_NAME_REGEXP });
  const kind = options.kind ?? "direct";
  if (kind !== "direct" && kind !== "sandbox") {
    throw new DefinitionError(
      "definition.invalid-value",
      "kind",
      `${WHAT}: kind must be "direct" or "sandbox", got ${describe(kind)}`,
    );
  }
  const agent: Record<string, unknown> = {
    name,
    kind,
    identity: checkIdentity(options.identity ?? null),
    evidenceCoverage: checkCoverage(options.evidenceCoverage),
    send: check.function(options.send, "send", WHAT),
  };
  for (const key of ["setup", "teardown", "classifySendFailure", "precondition"] as const) {
    if (options[key] !== undefined) agent[key] = check.function(options[key], key, WHAT);
  }
  return Object.freeze(brand(agent, "agent")) as unknown as ResolvedAgent;
}

function checkIdentity(value: unknown): JsonValue {
  const found = jsonProblem(value, "identity");
  if (found) {
    throw new DefinitionError("definition.invalid-value", found.path, `${WHAT}: ${found.message}`);
  }
  return deepFreeze(structuredClone(value)) as JsonValue;
}

function checkCoverage(value: unknown): EvidenceCoverage {
  const found = coverageProblem(value, "evidenceCoverage", { partial: false });
  if (found) {
    throw new DefinitionError("definition.invalid-value", found.path, `${WHAT}: ${found.message}`);
  }
  return normalizeCoverage(value as EvidenceCoverage, completeEvidenceCoverage);
}

/**
 * Recognises an agent made by `defineAgent` (or a built-in) from any copy of the API, by brand.
 *
 * @param value What a user passed as an agent.
 * @returns The agent in its driveable form, or `undefined` when `value` is not an agent.
 */
export function resolveAgent(value: unknown): ResolvedAgent | undefined {
  // An experiment's agent is resolved for every Attempt: a frozen one, which cannot change, once.
  const frozen = typeof value === "object" && value !== null && !isProxy(value) &&
    Object.isFrozen(value);
  if (frozen && RESOLVED.has(value)) return RESOLVED.get(value);
  const resolved = isBranded(value, "agent") &&
      typeof (value as { send?: unknown }).send === "function"
    ? value as ResolvedAgent
    : undefined;
  if (frozen) RESOLVED.set(value, resolved);
  return resolved;
}

/** {@link resolveAgent} of frozen values; agents are few (one or two per experiment). */
const RESOLVED = new WeakMap<object, ResolvedAgent | undefined>();
