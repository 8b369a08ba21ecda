/**
 * The cleanup stack of an Attempt or pool instance (sandboxes.md §3.3, rules 36–40): entries
 * unwind last-in first-out, each with a fresh bound on the injected clock; a failure or timeout
 * becomes a diagnostic and unwinding continues; provider stop and slot release always run. After
 * a second interrupt (`force`) every other entry is skipped and these two get 5 s each.
 */
import { type Clock, errorMessage, onAbort } from "../_shared/mod.ts";
import type { SandboxDiagnostic } from "./types.ts";

/** Bound of one cleanup entry. */
export const CLEANUP_TIMEOUT_MS = 30_000;
/** Bound of provider stop and slot release after a second interrupt. */
export const FORCED_CLEANUP_TIMEOUT_MS = 5_000;

/** What an entry undoes; decides its failure code and whether it survives a forced unwind. */
export type CleanupKind =
  | "agent-teardown"
  | "prepare-cleanup"
  | "layer-teardown"
  | "lease-release"
  | "provider-stop"
  | "slot-release";

const KINDS: Record<
  CleanupKind,
  { code: string; level: "warning" | "error"; phase: string; essential: boolean }
> = {
  "agent-teardown": {
    code: "agent-teardown-failed",
    level: "warning",
    phase: "agent.teardown",
    essential: false,
  },
  "prepare-cleanup": {
    code: "sandbox-cleanup-failed",
    level: "warning",
    phase: "sandbox.cleanup",
    essential: false,
  },
  "layer-teardown": {
    code: "sandbox-teardown-failed",
    level: "warning",
    phase: "sandbox.teardown",
    essential: false,
  },
  "lease-release": {
    code: "sandbox-reset-failed",
    level: "warning",
    phase: "sandbox.reset",
    essential: false,
  },
  "provider-stop": {
    code: "sandbox-stop-failed",
    level: "error",
    phase: "sandbox.stop",
    essential: true,
  },
  "slot-release": {
    code: "sandbox-slot-release-failed",
    level: "error",
    phase: "sandbox.slot",
    essential: true,
  },
};

/** One entry; `run` gets a fresh signal that aborts when its bound passes. */
interface CleanupEntry {
  readonly kind: CleanupKind;
  /** The physical sandbox concerned, for diagnostics. */
  readonly sandboxId?: string;
  run(signal: AbortSignal): void | Promise<void>;
}

/** A cleanup failure; `data` is `{ phase, timedOut, message, sandboxId }`. */
export interface CleanupDiagnostic extends SandboxDiagnostic {
  readonly level: "warning" | "error";
  readonly data: {
    readonly phase: string;
    readonly timedOut: boolean;
    readonly message: string;
    readonly sandboxId: string | null;
  };
}

/** Options of {@link CleanupStack}. */
interface CleanupStackOptions {
  readonly clock: Clock;
  /** Aborts on the second interrupt. */
  readonly force?: AbortSignal;
  /** Also receives each diagnostic as it happens. */
  readonly onDiagnostic?: (d: CleanupDiagnostic) => void;
}

type Outcome = { ok: true } | { ok: false; timedOut: boolean; message: string };

/** A LIFO stack of cleanup entries. */
export class CleanupStack {
  readonly #entries: CleanupEntry[] = [];
  readonly #o: CleanupStackOptions;
  #failures = 0;

  constructor(options: CleanupStackOptions) {
    this.#o = options;
  }

  /** Number of entries not yet unwound. */
  get size(): number {
    return this.#entries.length;
  }

  /** Failed entries so far; an entry can read how the ones above it went (rule 86). */
  get failures(): number {
    return this.#failures;
  }

  /** Pushes an entry; it runs before every entry pushed earlier. */
  push(entry: CleanupEntry): void {
    this.#entries.push(entry);
  }

  /** Runs every entry, last first; resolves with the failures, never rejects (rule 39). */
  async unwind(): Promise<CleanupDiagnostic[]> {
    const out: CleanupDiagnostic[] = [];
    for (let entry = this.#entries.pop(); entry; entry = this.#entries.pop()) {
      const kind = KINDS[entry.kind];
      const outcome: Outcome = this.#o.force?.aborted && !kind.essential
        ? { ok: false, timedOut: false, message: "skipped after a second interrupt" }
        : await this.#runBounded(entry, kind.essential);
      if (outcome.ok) continue;
      const diagnostic: CleanupDiagnostic = {
        code: kind.code,
        level: kind.level,
        message: `${kind.phase} ${outcome.timedOut ? "timed out" : "failed"}: ${outcome.message}`,
        data: {
          phase: kind.phase,
          timedOut: outcome.timedOut,
          message: outcome.message,
          sandboxId: entry.sandboxId ?? null,
        },
      };
      this.#failures++;
      out.push(diagnostic);
      this.#o.onDiagnostic?.(diagnostic);
    }
    return out;
  }

  #runBounded(entry: CleanupEntry, essential: boolean): Promise<Outcome> {
    const { clock, force } = this.#o;
    const controller = new AbortController();
    return new Promise<Outcome>((resolve) => {
      let timer: unknown;
      let deadline = 0;
      let settled = false;
      let forceListener: Disposable | undefined;
      const finish = (outcome: Outcome) => {
        if (settled) return;
        settled = true;
        clock.clearTimeout(timer);
        forceListener?.[Symbol.dispose]();
        resolve(outcome);
      };
      const arm = (ms: number) => {
        clock.clearTimeout(timer);
        deadline = clock.now() + ms;
        timer = clock.setTimeout(() => {
          const message = `did not finish within ${ms / 1000}s`;
          controller.abort(new Error(message));
          finish({ ok: false, timedOut: true, message });
        }, ms);
      };
      const onForce = () => {
        if (!essential) {
          controller.abort(new Error("second interrupt"));
          finish({ ok: false, timedOut: false, message: "abandoned after a second interrupt" });
        } else if (deadline - clock.now() > FORCED_CLEANUP_TIMEOUT_MS) {
          arm(FORCED_CLEANUP_TIMEOUT_MS);
        }
      };
      arm(force?.aborted ? FORCED_CLEANUP_TIMEOUT_MS : CLEANUP_TIMEOUT_MS);
      // A second interrupt shortens or abandons the entry; removed once the entry settled.
      if (!force?.aborted) forceListener = onAbort(force, onForce);
      // A timed-out or abandoned entry's promise is left behind (rule 37); its late settlement
      // lands in `finish`, which ignores it.
      Promise.resolve()
        .then(() => entry.run(controller.signal))
        .then(
          () => finish({ ok: true }),
          (error) => finish({ ok: false, timedOut: false, message: errorMessage(error) }),
        );
    });
  }
}
