/**
 * Permanent lines of a running `exp` (OUT-H9, OUT-H10): failures (first 10 expanded), setup
 * failures, errors without an Attempt, halts, warnings (once per code, experiment and eval),
 * notices and the first interrupt. The same lines go above the live panel and into plain output.
 */
import { plural, type RunEvent } from "../_shared/mod.ts";
import type { Plan } from "../plan/mod.ts";
import { locatorOf } from "../record/mod.ts";
import { paintMarker } from "./box.ts";
import { attemptLines, hasAttemptLines } from "./human.ts";

const EXPANDED_FAILURES = 10;

/** Options of {@link PermanentLines}. */
interface PermanentLinesOptions {
  /** Colour the leading `✗` and `!` (a terminal without `NO_COLOR`). */
  readonly color?: boolean;
}

/** Turns run events into permanent output lines, passed one by one to `write`. */
export class PermanentLines {
  readonly #write: (line: string) => void;
  readonly #plan: Plan;
  readonly #color: boolean;
  #failures = 0;
  readonly #seen = new Set<string>();
  readonly #started = new Map<string, number>();

  constructor(plan: Plan, write: (line: string) => void, options: PermanentLinesOptions = {}) {
    this.#plan = plan;
    this.#write = write;
    this.#color = options.color ?? false;
  }

  /** Handles one event. */
  event(e: RunEvent): void {
    switch (e.type) {
      case "attempt_start":
        this.#started.set(e.slot.experimentId, (this.#started.get(e.slot.experimentId) ?? 0) + 1);
        return;
      case "attempt_end": {
        if (!hasAttemptLines(e.result)) return;
        const lines = attemptLines(e.result, locatorOf(e.result.attemptId));
        this.#failures++;
        if (this.#failures <= EXPANDED_FAILURES) lines.forEach((line) => this.#out(line));
        else if (this.#failures === EXPANDED_FAILURES + 1) {
          this.#out("… further failures are listed at the end");
        }
        return;
      }
      case "experiment_setup":
        if (e.status === "failed") {
          const experiment = this.#plan.experiments.find((x) => x.id === e.experimentId);
          const n = (experiment?.runnable ?? 0) - (this.#started.get(e.experimentId) ?? 0);
          const message = e.message ?? "";
          const errored = plural(n, "attempt");
          this.#out(
            `✗ experiment setup failed · ${e.experimentId}: ${message} (${errored} errored)`,
          );
        }
        return;
      case "diagnostic":
        return this.#diagnostic(e);
      case "interrupted":
        this.#out("! interrupted — cleaning up (Ctrl+C again forces exit)");
        return;
      default:
        return;
    }
  }

  #diagnostic(e: Extract<RunEvent, { type: "diagnostic" }>): void {
    // Halt messages already read `experiment halted: …` / `eval halted · <evalId>: …`.
    if (e.code === "dispatch-halted") {
      this.#out(`✗ ${e.message}`);
      return;
    }
    const key = `${e.code}\u0000${e.experimentId ?? ""}\u0000${e.evalId ?? ""}`;
    if (this.#seen.has(key)) return;
    this.#seen.add(key);
    if (e.level === "info") this.#out(`i ${e.message}`);
    else if (e.level === "warning") this.#out(`! ${e.message}`);
    else {
      const errored = e.data?.errored;
      const count = typeof errored === "number" ? ` (${plural(errored, "attempt")} errored)` : "";
      this.#out(`✗ ${e.code} · ${e.experimentId ?? ""}: ${e.message}${count}`);
    }
  }

  #out(line: string): void {
    this.#write(paintMarker(line, this.#color));
  }
}
