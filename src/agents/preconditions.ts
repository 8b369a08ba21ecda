/**
 * Agent preconditions (docs/bail.md): the optional `precondition` of an agent, run once per
 * experiment before any of its Attempts starts. A returned failure or a throw is a failed
 * precondition; the caller halts the experiment with its message and hint.
 */
import { errorMessage, isPlainObject } from "../_shared/mod.ts";
import { resolveAgent } from "./define_agent.ts";
import type { AgentPreconditionContext } from "./types.ts";

/** A failed precondition as the run reports it. */
export interface PreconditionFailure {
  /** Names the agent and what is missing. */
  readonly message: string;
  /** How to fix it, or null. */
  readonly hint: string | null;
}

/**
 * Runs the precondition of `agent`, if it declares one.
 *
 * @param agent What the experiment holds as its agent.
 * @param ctx The experiment and the host environment.
 * @returns The failure, or null when the agent has no precondition or it holds.
 */
export async function checkPrecondition(
  agent: unknown,
  ctx: AgentPreconditionContext,
): Promise<PreconditionFailure | null> {
  const resolved = resolveAgent(agent);
  const precondition = resolved?.precondition;
  if (!resolved || !precondition) return null;
  const prefix = `agent "${resolved.name}" cannot run`;
  let found: unknown;
  try {
    found = await precondition(Object.freeze({ ...ctx }));
  } catch (error) {
    return { message: `${prefix}: its precondition threw: ${errorMessage(error)}`, hint: null };
  }
  if (found === undefined || found === null) return null;
  if (!isPlainObject(found) || typeof found.message !== "string") {
    return {
      message: `${prefix}: its precondition returned something other than { message, hint? }`,
      hint: null,
    };
  }
  return {
    message: `${prefix}: ${found.message}`,
    hint: typeof found.hint === "string" && found.hint !== "" ? found.hint : null,
  };
}
