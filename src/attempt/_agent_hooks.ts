/**
 * The agent's setup and teardown around the body (authoring.md §7.1; sandboxes.md §3.1 step 10):
 * a setup failure errors the Attempt, a teardown failure or timeout is a cleanup diagnostic.
 */
import { AbortReason, type Clock, errorMessage, sleep } from "../_shared/mod.ts";
import type { ResolvedAgent } from "../agents/mod.ts";
import type { AttemptControl } from "../scheduler/mod.ts";
import { type FailureContext, failureOf } from "./failure.ts";
import { ownCodeOf, type SessionLine } from "./session_line.ts";
import type { AttemptState } from "./state.ts";

/** Bound of agent teardown (authoring.md §7.1). */
const AGENT_TEARDOWN_TIMEOUT_MS = 30_000;

/** Runs the agent's setup; a throw errors the Attempt, unless its signal aborted meanwhile. */
export async function runAgentSetup(
  agent: ResolvedAgent,
  main: SessionLine,
  state: AttemptState,
  failures: FailureContext,
  control: AttemptControl,
): Promise<void> {
  if (!agent.setup) return;
  const setup = agent.setup.bind(agent);
  await state.phase("agent.setup", async () => {
    control.activity("agent setup");
    try {
      await setup(main.context(0));
    } catch (error) {
      if (control.signal.aborted) state.cutShort = true;
      else {
        const code = ownCodeOf(error) ?? "agent-setup-failed";
        state.fail(failureOf(failures, "agent.setup", code, error));
      }
    }
  });
}

/**
 * Runs the agent's teardown with the main session's context, bounded by 30 s. Its signal is its
 * own (aborted at the bound): the Attempt's signal has already aborted (`test-settled`).
 */
export async function runAgentTeardown(
  agent: ResolvedAgent,
  main: SessionLine,
  state: AttemptState,
  o: { control: AttemptControl; clock: Clock; sandboxId: string | null },
): Promise<void> {
  const { control, clock } = o;
  if (!agent.teardown) return;
  const teardown = agent.teardown.bind(agent);
  await state.phase("agent.teardown", async () => {
    control.activity("cleaning up");
    const bound = new AbortController();
    const timer = new AbortController();
    let timedOut = false;
    try {
      await Promise.race([
        teardown(main.context(0, bound.signal)),
        sleep(clock, AGENT_TEARDOWN_TIMEOUT_MS, { signal: timer.signal }).then(() => {
          timedOut = true;
          bound.abort(new AbortReason("timeout"));
          throw new Error(
            `Agent teardown did not finish within ${AGENT_TEARDOWN_TIMEOUT_MS / 1000}s`,
          );
        }),
      ]);
    } catch (error) {
      // The same data as every other cleanup failure (sandboxes.md rule 39).
      const message = errorMessage(error);
      state.diagnostic({
        code: "agent-teardown-failed",
        level: "warning",
        message: `Cannot tear down agent "${agent.name}": ${message}`,
        data: { phase: "agent.teardown", timedOut, message, sandboxId: o.sandboxId },
      });
    } finally {
      timer.abort();
    }
  });
}
