/**
 * Permanent lines of a running `exp` (OUT-H9, OUT-H10): failures (first 10 expanded), setup
 * failures, halts, warnings (once per code, experiment and eval) and notices.
 */
import type { RunEvent } from "../_shared/mod.ts";
import type { Plan } from "../plan/mod.ts";
import { locatorOf } from "../record/mod.ts";
import { attemptLines } from "./human.ts";

const EXPANDED_FAILURES = 10;

/** Turns run events into permanent output lines. */
export class PermanentLines {
  readonly #write: (line: string) => void;
  readonly #plan: Plan;
  #failures = 0;
  readonly #seen = new Set<string>();
  readonly #started = new Map<string, number>();

  constructor(plan: Plan, write: (line: string) => void) {
    this.#plan = plan;
    this.#write = write;
  }

  /** Handles one event. */
  event(e: RunEvent): void {
    switch (e.type) {
      case "attempt_start":
        this.#started.set(e.slot.experimentId, (this.#started.get(e.slot.experimentId) ?? 0) + 1);
        return;
      case "attempt_end": {
        const lines = attemptLines(e.result, locatorOf(e.result.attemptId));
        if (lines.length === 0) return;
        this.#failures++;
        if (this.#failures <= EXPANDED_FAILURES) lines.forEach((line) => this.#write(line));
        else if (this.#failures === EXPANDED_FAILURES + 1) {
          this.#write("… further failures are listed at the end");
        }
        return;
      }
      case "experiment_setup":
        if (e.status === "failed") {
          const experiment = this.#plan.experiments.find((x) => x.id === e.experimentId);
          const n = (experiment?.runnable ?? 0) - (this.#started.get(e.experimentId) ?? 0);
          this.#write(
            `✗ experiment setup failed · ${e.experimentId}: ${
              e.message ?? ""
            } (${n} attempts errored)`,
          );
        }
        return;
      case "diagnostic":
        return this.#diagnostic(e);
      case "interrupted":
        this.#write("! interrupted — cleaning up (Ctrl+C again forces exit)");
        return;
      default:
        return;
    }
  }

  #diagnostic(e: Extract<RunEvent, { type: "diagnostic" }>): void {
    if (e.code === "dispatch-halted") {
      this.#write(e.evalId ? `✗ ${e.message}` : `✗ ${e.message}`);
      return;
    }
    const key = `${e.code}\u0000${e.experimentId ?? ""}\u0000${e.evalId ?? ""}`;
    if (this.#seen.has(key)) return;
    this.#seen.add(key);
    if (e.level === "info") this.#write(`i ${e.message}`);
    else if (e.level === "warning") this.#write(`! ${e.message}`);
    else this.#write(`✗ ${e.code} · ${e.experimentId ?? ""}: ${e.message}`);
  }
}
