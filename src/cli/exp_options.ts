/** Parsed options of `niceeval exp` (cli.md §3). */
import {
  MAX_ATTEMPTS,
  MAX_BUDGET_USD,
  MAX_BUILD_CONCURRENCY,
  MAX_CONCURRENCY,
  MAX_TIMER_MS,
  UsageError,
} from "../_shared/mod.ts";
import { compileGrep, type RerunTier } from "../plan/mod.ts";
import {
  decimalFlag,
  durationFlag,
  flagSet,
  flagValue,
  forbidTogether,
  intFlag,
  type ParsedFlags,
  tagsFlag,
} from "./flags.ts";
import { parseRampRange } from "./ramp_options.ts";

/** Everything `exp` was asked to do. */
export interface ExpOptions {
  readonly selector?: string;
  readonly evalPrefixes: string[];
  /** Positionals as typed, for NEXT lines. */
  readonly positionals: string[];
  readonly attempts?: number;
  readonly maxConcurrency?: number;
  /** `--ramp <from>:<to>` (RAMP-1). */
  readonly ramp?: { readonly from: number; readonly to: number };
  /** `--no-ramp`: config `ramp` is ignored (CAP-1). */
  readonly noRamp: boolean;
  readonly timeoutMs?: number;
  readonly tags: string[];
  /** `-t, --grep` patterns (OR), checked to compile (issue 18.2). */
  readonly grep?: readonly string[];
  /** `--last-failed`: only evals whose latest result failed or errored (docs/selection.md). */
  readonly lastFailed?: boolean;
  readonly json: boolean;
  readonly junit?: string;
  readonly dry: boolean;
  readonly rerun: RerunTier;
  readonly earlyExit?: boolean;
  readonly budget?: number;
  readonly record?: string;
  /** `--max-build-concurrency`: overrides config `maxBuildConcurrency` (cli.md §3.2). */
  readonly maxBuildConcurrency?: number;
  /** `--no-bail`: the circuit breaker is off (docs/bail.md). */
  readonly noBail?: boolean;
  /** Present in `--teardown` mode (CMD-9), which takes no other setting. */
  readonly teardown?: TeardownOptions;
}

/** The `--teardown` mode and its lease recovery flags (ORPH-7, LEASE-10, CMD-9 … CMD-11). */
export interface TeardownOptions {
  /** The experiment selector (required). */
  readonly selector: string;
  /** Inspect (without a token) or recover (with one) this sharedState key. */
  readonly recoverSharedState?: string;
  readonly ownerToken?: string;
  readonly confirmOwnerTerminated: boolean;
  readonly confirmRemoteQuiesced: boolean;
}

/** Flags that may accompany `--teardown` (CMD-9). */
const TEARDOWN_FLAGS: readonly string[] = [
  "teardown",
  "recover-shared-state",
  "owner-token",
  "confirm-owner-terminated",
  "confirm-remote-quiesced",
];
const RECOVERY_FLAGS = TEARDOWN_FLAGS.slice(2);
const SHARED_STATE_KEY_REGEXP = /^[a-z0-9][a-z0-9._/-]{0,127}$/;
const UUID_REGEXP = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Validates flags and positionals of `exp` (FLAG-4, ERR-7) before anything is read. */
export function expOptions(flags: ParsedFlags): ExpOptions {
  const teardown = teardownOptions(flags);
  if (teardown) {
    return {
      evalPrefixes: [],
      positionals: [...flags.positionals],
      tags: [],
      json: false,
      dry: false,
      rerun: "none",
      noRamp: false,
      selector: teardown.selector,
      teardown,
    };
  }
  forbidTogether(flags, "early-exit", "no-early-exit");
  forbidTogether(flags, "dry", "junit");
  forbidTogether(flags, "max-concurrency", "ramp");
  forbidTogether(flags, "ramp", "no-ramp");
  const [selector, ...evalPrefixes] = flags.positionals;
  const rerun = flagValue(flags, "rerun");
  const out: { -readonly [K in keyof ExpOptions]: ExpOptions[K] } = {
    evalPrefixes,
    positionals: [...flags.positionals],
    tags: tagsFlag(flags),
    ...grepOptions(flags),
    json: flagSet(flags, "json"),
    dry: flagSet(flags, "dry"),
    // --last-failed reruns the failed Attempts it selects unless --rerun says otherwise.
    rerun: rerun === undefined
      ? (flagSet(flags, "last-failed") ? "failed" : "none")
      : rerun as RerunTier,
    noRamp: flagSet(flags, "no-ramp"),
  };
  if (selector !== undefined) out.selector = selector;
  const attempts = intFlag(flags, "attempts", { max: MAX_ATTEMPTS });
  if (attempts !== undefined) out.attempts = attempts;
  const cap = intFlag(flags, "max-concurrency", { max: MAX_CONCURRENCY });
  if (cap !== undefined) out.maxConcurrency = cap;
  const ramp = flagValue(flags, "ramp");
  if (ramp !== undefined) out.ramp = parseRampRange(ramp, "--ramp");
  const builds = intFlag(flags, "max-build-concurrency", { max: MAX_BUILD_CONCURRENCY });
  if (builds !== undefined) out.maxBuildConcurrency = builds;
  const timeout = durationFlag(flags, "timeout", { maxMs: MAX_TIMER_MS });
  if (timeout !== undefined) out.timeoutMs = timeout;
  const budget = decimalFlag(flags, "budget", { max: MAX_BUDGET_USD });
  if (budget !== undefined) out.budget = budget;
  if (flagSet(flags, "early-exit")) out.earlyExit = true;
  if (flagSet(flags, "no-early-exit")) out.earlyExit = false;
  if (flagSet(flags, "no-bail")) out.noBail = true;
  const junit = flagValue(flags, "junit");
  if (junit !== undefined) {
    if (junit.trim() === "") {
      throw new UsageError(
        "usage",
        "--junit requires a file path",
        "pass a path, for example --junit junit.xml",
      );
    }
    out.junit = junit;
  }
  const record = flagValue(flags, "record");
  if (record !== undefined) {
    if (record.trim() === "") {
      throw new UsageError(
        "usage",
        "--record requires a directory path",
        "pass a path, for example --record .niceeval/record-2",
      );
    }
    out.record = record;
  }
  return out;
}

/** `-t, --grep` (compiled here: a bad pattern fails before anything is read), `--last-failed`. */
function grepOptions(flags: ParsedFlags): { grep?: string[]; lastFailed?: boolean } {
  const grep = flags.values.get("grep") ?? [];
  compileGrep(grep);
  return {
    ...(grep.length > 0 ? { grep } : {}),
    ...(flagSet(flags, "last-failed") ? { lastFailed: true } : {}),
  };
}

/**
 * Validates `--teardown` and the recovery flags before anything is read (CMD-9, CMD-11, LEASE-10):
 * undefined without `--teardown`.
 */
function teardownOptions(flags: ParsedFlags): TeardownOptions | undefined {
  const key = flagValue(flags, "recover-shared-state");
  const token = flagValue(flags, "owner-token");
  for (const name of RECOVERY_FLAGS) {
    if (flagSet(flags, name) && key === undefined) {
      throw new UsageError(
        "usage",
        `--${name} requires --recover-shared-state <key>`,
        "inspect the lease first: niceeval exp <selector> --teardown --recover-shared-state <key>",
      );
    }
  }
  if (!flagSet(flags, "teardown")) {
    if (key === undefined) return undefined;
    throw new UsageError(
      "usage",
      "--recover-shared-state requires --teardown",
      `run niceeval exp <selector> --teardown --recover-shared-state ${key}`,
    );
  }
  for (const name of flags.values.keys()) {
    if (TEARDOWN_FLAGS.includes(name)) continue;
    throw new UsageError(
      "usage",
      `--${name} cannot be combined with --teardown`,
      "--teardown accepts only --recover-shared-state, --owner-token, --confirm-owner-terminated and --confirm-remote-quiesced",
    );
  }
  const [selector, ...evalPrefixes] = flags.positionals;
  if (evalPrefixes.length > 0) {
    throw new UsageError(
      "usage",
      `--teardown takes no eval prefixes, got "${evalPrefixes[0]}"`,
      `run niceeval exp ${selector} --teardown`,
    );
  }
  if (selector === undefined) {
    throw new UsageError(
      "usage",
      "--teardown requires an experiment selector",
      "name the experiments to compensate, for example niceeval exp db --teardown",
    );
  }
  return { selector, ...recoveryOptions(flags, key, token) };
}

function recoveryOptions(
  flags: ParsedFlags,
  key: string | undefined,
  token: string | undefined,
): Omit<TeardownOptions, "selector"> {
  const confirmOwnerTerminated = flagSet(flags, "confirm-owner-terminated");
  const confirmRemoteQuiesced = flagSet(flags, "confirm-remote-quiesced");
  const out = { confirmOwnerTerminated, confirmRemoteQuiesced };
  if (key === undefined) return out;
  if (!SHARED_STATE_KEY_REGEXP.test(key)) {
    throw new UsageError(
      "usage",
      `--recover-shared-state requires a sharedState key, got "${key}"`,
      "pass the key of the experiment's sharedState, for example --recover-shared-state db/main",
    );
  }
  if (token === undefined) {
    const confirmation = confirmOwnerTerminated
      ? "confirm-owner-terminated"
      : confirmRemoteQuiesced
      ? "confirm-remote-quiesced"
      : undefined;
    if (confirmation === undefined) return { ...out, recoverSharedState: key };
    throw new UsageError(
      "usage",
      `--${confirmation} requires --owner-token <t>`,
      `inspect the lease to learn its owner token: niceeval exp <selector> --teardown --recover-shared-state ${key}`,
    );
  }
  if (!UUID_REGEXP.test(token)) {
    throw new UsageError(
      "usage",
      `--owner-token requires a UUID, got "${token}"`,
      `copy the owner token printed by niceeval exp <selector> --teardown --recover-shared-state ${key}`,
    );
  }
  const missing = [
    ...(confirmOwnerTerminated ? [] : ["--confirm-owner-terminated"]),
    ...(confirmRemoteQuiesced ? [] : ["--confirm-remote-quiesced"]),
  ];
  if (missing.length > 0) {
    throw new UsageError(
      "shared-state-recovery-confirmation-required",
      `Cannot recover sharedState key "${key}": missing ${missing.join(" and ")}`,
      "confirm that the owner process has ended and that no remote work still uses the state, then pass both flags",
    );
  }
  return { ...out, recoverSharedState: key, ownerToken: token };
}
