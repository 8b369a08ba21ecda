/**
 * The control handed to the per-Attempt work (see `AttemptControl`): one small object per Attempt
 * whose accessors read its execution, instead of a record of closures and getter descriptors.
 */
import { ATTEMPT_MAX_RETRIES, SEND_MAX_TRIES } from "./constants.ts";
import type { AttemptControl, BackoffRequest, RetryLimits, SandboxAdmission } from "./control.ts";

/** What the control reads and drives: the execution's side of `AttemptControl`. */
export interface ControlledExecution {
  readonly signal: AbortSignal;
  readonly attemptId: string;
  readonly startedAt: number;
  readonly started: boolean;
  readonly deadline: number | null;
  start(): void;
  endTimed(): void;
  backoff(request: BackoffRequest): Promise<void>;
  activity(text: string): void;
}

const LIMITS: RetryLimits = Object.freeze({
  sendMaxTries: SEND_MAX_TRIES,
  attemptMaxRetries: ATTEMPT_MAX_RETRIES,
});

/**
 * The control handed to the per-Attempt work: one small object whose accessors read the
 * execution, so that a deferred start fills them in while the work already holds it.
 */
export class Control implements AttemptControl {
  readonly #execution: ControlledExecution;
  readonly limits = LIMITS;
  readonly sandbox?: SandboxAdmission;

  constructor(execution: ControlledExecution, sandbox: SandboxAdmission | undefined) {
    this.#execution = execution;
    if (sandbox) this.sandbox = sandbox;
  }

  get signal(): AbortSignal {
    return this.#execution.signal;
  }
  get attemptId(): string {
    return this.#execution.attemptId;
  }
  get startedAt(): number {
    return this.#execution.startedAt;
  }
  get started(): boolean {
    return this.#execution.started;
  }
  get deadline(): number | null {
    return this.#execution.deadline;
  }
  start(): void {
    this.#execution.start();
  }
  endTimed(): void {
    this.#execution.endTimed();
  }
  backoff(request: BackoffRequest): Promise<void> {
    return this.#execution.backoff(request);
  }
  activity(text: string): void {
    this.#execution.activity(text);
  }
}
