/** Parsed options of `niceeval exp` (cli.md §3). */
import { UsageError } from "../_shared/mod.ts";
import type { RerunTier } from "../plan/mod.ts";
import {
  decimalFlag,
  flagSet,
  flagValue,
  forbidTogether,
  intFlag,
  type ParsedFlags,
  tagsFlag,
} from "./flags.ts";

/** Everything `exp` was asked to do. */
export interface ExpOptions {
  readonly selector?: string;
  readonly evalPrefixes: string[];
  /** Positionals as typed, for NEXT lines. */
  readonly positionals: string[];
  readonly attempts?: number;
  readonly maxConcurrency?: number;
  readonly timeoutMs?: number;
  readonly tags: string[];
  readonly json: boolean;
  readonly junit?: string;
  readonly dry: boolean;
  readonly rerun: RerunTier;
  readonly earlyExit?: boolean;
  readonly budget?: number;
  readonly record?: string;
}

/** Validates flags and positionals of `exp` (FLAG-4, ERR-7) before anything is read. */
export function expOptions(flags: ParsedFlags): ExpOptions {
  forbidTogether(flags, "early-exit", "no-early-exit");
  forbidTogether(flags, "dry", "junit");
  const [selector, ...evalPrefixes] = flags.positionals;
  const rerun = flagValue(flags, "rerun");
  const out: { -readonly [K in keyof ExpOptions]: ExpOptions[K] } = {
    evalPrefixes,
    positionals: [...flags.positionals],
    tags: tagsFlag(flags),
    json: flagSet(flags, "json"),
    dry: flagSet(flags, "dry"),
    rerun: rerun === undefined ? "none" : rerun as RerunTier,
  };
  if (selector !== undefined) out.selector = selector;
  const attempts = intFlag(flags, "attempts");
  if (attempts !== undefined) out.attempts = attempts;
  const cap = intFlag(flags, "max-concurrency");
  if (cap !== undefined) out.maxConcurrency = cap;
  const timeout = intFlag(flags, "timeout");
  if (timeout !== undefined) out.timeoutMs = timeout;
  const budget = decimalFlag(flags, "budget");
  if (budget !== undefined) out.budget = budget;
  if (flagSet(flags, "early-exit")) out.earlyExit = true;
  if (flagSet(flags, "no-early-exit")) out.earlyExit = false;
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
