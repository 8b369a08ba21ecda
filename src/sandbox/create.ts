/**
 * Create with retry (sandboxes.md §3.4, rules 41–45): at most 4 tries, delay
 * `1000 ms × 2^k × (0.5 + U)`, retries by class, reconciliation of an ambiguous try by its
 * provision token, and a new provision token for every try.
 */
import { type Clock, errorMessage, hasErrorName, type Random, sleep } from "../_shared/mod.ts";
import { SandboxCreateError } from "./errors.ts";
import type {
  CreateErrorClass,
  OwnerStamp,
  SandboxDiagnostic,
  SandboxHandle,
  SandboxProvider,
} from "./types.ts";

/** Create tries per sandbox. */
const CREATE_TRIES = 4;
/** Base delay before the second try. */
const CREATE_BASE_DELAY_MS = 1000;

const RATE_LIMIT_REGEXP = /\b429\b|toomanyrequests|rate.?limit/i;
const REJECTED_REGEXP =
  /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|handshake|\bENOENT\b.*\.sock|socket.*(missing|not found)/i;
const AMBIGUOUS_REGEXP =
  /ECONNRESET|EPIPE|ETIMEDOUT|timed? ?out|\b5\d\d\b|fetch failed|other side closed/i;

/** Added to the Attempt timeout for the requested lifetime (rule 48). */
const LIFETIME_RESERVE_MS = 300_000;

/** Provider default lifetimes (rule 48); providers not listed are unlimited. */
const DEFAULT_LIFETIME_MS: Readonly<Record<string, number>> = Object.freeze({
  docker: 24 * 3_600_000,
  e2b: 3_600_000,
  vercel: 45 * 60_000,
  local: Infinity,
});

/**
 * The requested lifetime (rule 48): the declared `lifetimeMs`, else `timeoutMs + 300 000` when
 * the Attempt has a deadline, else the provider's default (`Infinity` when unlimited).
 */
export function requestedLifetimeMs(
  provider: string,
  options: { lifetimeMs?: number | undefined; timeoutMs?: number | undefined },
): number {
  if (options.lifetimeMs !== undefined) return options.lifetimeMs;
  if (options.timeoutMs !== undefined) return options.timeoutMs + LIFETIME_RESERVE_MS;
  return Object.hasOwn(DEFAULT_LIFETIME_MS, provider) ? DEFAULT_LIFETIME_MS[provider]! : Infinity;
}

/** Options of {@link createWithRetry}. */
interface CreateWithRetryOptions {
  /** The stamp without its token; each try adds a new one. */
  readonly owner: Omit<OwnerStamp, "provisionToken">;
  /** `Infinity` when unlimited. */
  readonly lifetimeMs: number;
  readonly signal: AbortSignal;
  readonly clock: Clock;
  readonly random: Random;
  /** ACTIVE-row text, e.g. `sandbox retry 2/4 (rate_limit) — waiting 2s` (rule 44). */
  readonly progress?: (message: string) => void;
  readonly diagnostic?: (d: SandboxDiagnostic) => void;
  /** Awaited before every try: the scheduler's create pacing (rule 59) plugs in here. */
  readonly beforeTry?: (tryNumber: number, signal: AbortSignal) => Promise<void>;
}

/** A created sandbox and what it took. */
interface CreateOutcome {
  readonly handle: SandboxHandle;
  readonly tries: number;
  readonly provisionToken: string;
  /** Retries per class, in first-seen order (`RetryTally` reasons). */
  readonly retries: readonly { readonly class: CreateErrorClass; readonly count: number }[];
}

/** A provision token: 32 lowercase hex digits. */
function provisionToken(random: Random): string {
  return random.uuid().replaceAll("-", "").toLowerCase();
}

/** Delay before try `k + 2`. */
function createRetryDelayMs(k: number, random: Random): number {
  return CREATE_BASE_DELAY_MS * 2 ** k * (0.5 + random.next());
}

/** The shared classification of transport errors (§3.4 table); providers map their own first. */
export function classifyTransportError(error: unknown): CreateErrorClass {
  const e = (typeof error === "object" && error !== null ? error : {}) as Record<string, unknown>;
  const status = typeof e.status === "number" ? e.status : e.statusCode;
  if (status === 429) return "rate_limit";
  if (typeof status === "number" && status >= 500 && status <= 599) return "ambiguous";
  const text = [e.code, e.name, errorMessage(error)].filter((x) => typeof x === "string").join(" ");
  if (RATE_LIMIT_REGEXP.test(text)) return "rate_limit";
  if (REJECTED_REGEXP.test(text)) return "rejected";
  if (AMBIGUOUS_REGEXP.test(text)) return "ambiguous";
  return "fatal";
}

/** The class of a create failure: a `ProviderError`'s kind, else the provider's own answer. */
function classifyCreateFailure(provider: SandboxProvider, error: unknown): CreateErrorClass {
  if (hasErrorName(error, "ProviderError")) {
    const kind = (error as { kind?: unknown }).kind;
    if (kind === "rate_limit" || kind === "rejected" || kind === "ambiguous" || kind === "fatal") {
      return kind;
    }
  }
  try {
    const found = provider.classifyCreateError(error);
    return ["rate_limit", "rejected", "ambiguous", "fatal"].includes(found) ? found : "fatal";
  } catch {
    return "fatal"; // a throwing classifier cannot justify a retry
  }
}

/**
 * Creates one sandbox with retries. Rejects with `SandboxCreateError` (code
 * `sandbox-create-failed`) on exhaustion, a `fatal` class or a failed reconcile, and with the
 * signal's reason on abort. The caller keeps its slots held during the delays (rule 43).
 */
export async function createWithRetry<Plan>(
  provider: SandboxProvider<unknown, Plan>,
  plan: Plan,
  o: CreateWithRetryOptions,
): Promise<CreateOutcome> {
  const retries = new Map<CreateErrorClass, number>();
  const canReconcile = provider.findOwned !== undefined && provider.destroyDetached !== undefined;
  for (let tries = 1;; tries++) {
    const token = provisionToken(o.random);
    await o.beforeTry?.(tries, o.signal);
    o.signal.throwIfAborted();
    try {
      const handle = await provider.create(plan, {
        owner: { ...o.owner, provisionToken: token },
        lifetimeMs: o.lifetimeMs,
        signal: o.signal,
        progress: (m) => o.progress?.(m),
        diagnostic: (d) => o.diagnostic?.(d),
      });
      const tally = [...retries].map(([c, count]) => ({ class: c, count }));
      return { handle, tries, provisionToken: token, retries: tally };
    } catch (error) {
      o.signal.throwIfAborted();
      const cls = classifyCreateFailure(provider, error);
      const retryable = cls === "rate_limit" || cls === "rejected" ||
        (cls === "ambiguous" && canReconcile);
      if (!retryable || tries >= CREATE_TRIES) {
        throw createError(provider, cls, tries, error, retries);
      }
      const delayMs = createRetryDelayMs(tries - 1, o.random);
      o.progress?.(
        `sandbox retry ${tries + 1}/${CREATE_TRIES} (${cls}) — waiting ${
          Math.ceil(delayMs / 1000)
        }s`,
      );
      retries.set(cls, (retries.get(cls) ?? 0) + 1);
      await sleep(o.clock, delayMs, { signal: o.signal });
      if (cls === "ambiguous") await reconcile(provider, token, tries, error, o, retries);
    }
  }
}

/** Lists and destroys instances stamped with the failed try's token (rule 42). */
async function reconcile(
  provider: SandboxProvider<unknown, unknown>,
  token: string,
  tries: number,
  original: unknown,
  o: CreateWithRetryOptions,
  retries: ReadonlyMap<CreateErrorClass, number>,
): Promise<void> {
  try {
    const found = await provider.findOwned!({ provisionToken: token }, o.signal);
    for (const instance of found) await provider.destroyDetached!(instance.id, o.signal);
  } catch (error) {
    o.signal.throwIfAborted();
    o.diagnostic?.({
      code: "sandbox-reconcile-failed",
      level: "warning",
      message: `Cannot reconcile an ambiguous create of "${provider.name}": ${errorMessage(error)}`,
      data: { provider: provider.name, provisionToken: token },
    });
    throw createError(provider, "ambiguous", tries, original, retries);
  }
}

function createError(
  provider: SandboxProvider<unknown, unknown>,
  cls: CreateErrorClass,
  tries: number,
  error: unknown,
  retries: ReadonlyMap<CreateErrorClass, number>,
): SandboxCreateError {
  const scope = hasErrorName(error, "ProviderError") &&
      (error as { scope?: unknown }).scope === "experiment"
    ? "experiment"
    : "attempt";
  return new SandboxCreateError(
    { provider: provider.name, class: cls, tries, message: errorMessage(error) },
    scope,
    { cause: error },
    [...retries].map(([c, count]) => ({ class: c, count })),
  );
}
