/**
 * @module attempt
 * Runs ONE Attempt: its sandbox (fresh or leased from a pool, with the cleanup stack), the agent's
 * setup and teardown, the eval's test body with its context `t`, sends with retries, assertions
 * sealed into an `AttemptResult` with its verdict. It knows nothing of queues, the Record or
 * output.
 */
export { abandonedResult, createAttemptRunner } from "./run_attempt.ts";
export { SandboxRuntime } from "./sandbox_runtime.ts";
