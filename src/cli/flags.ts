/**
 * Flag tables of every command and the strict checks commander does not make (cli.md §1, §3):
 * rejected flags, unknown flags with suggestions, single-valued flags given twice, optional-value
 * flags (CLI-2), and value validation (ERR-7).
 */
import { UsageError } from "../_shared/mod.ts";
import { closest } from "../_shared/mod.ts";

/** One flag of one command. */
export interface FlagSpec {
  /** Long name without dashes. */
  readonly name: string;
  /** One-letter short form without the dash (`t` for `-t`), accepted only where declared. */
  readonly short?: string;
  /** Value placeholder (`<n>`), or undefined for a switch. */
  readonly value?: string;
  /** Allowed values of an optional-value flag (CLI-2); the first is the bare default. */
  readonly optionalValues?: readonly string[];
  readonly repeatable?: boolean;
  readonly description: string;
}

/** `-t, --grep` of `exp` (issue 18.2, docs/selection.md). */
const GREP_FLAG: FlagSpec = {
  name: "grep",
  short: "t",
  value: "<regex|text>",
  repeatable: true,
  description:
    "keep only evals whose ID or description contains this text or matches it as a regular expression, ignoring case; repeatable (default: none)",
};

/** Flags of `exp` (cli.md §3.2, the parts of this release). */
export const EXP_FLAGS: readonly FlagSpec[] = [
  {
    name: "attempts",
    value: "<n>",
    description:
      "how many times each eval runs in each experiment; integer 1–1000 (default: experiment attempts, else 1)",
  },
  {
    name: "max-concurrency",
    value: "<n>",
    description:
      "concurrency limit: most Attempts running at once, over all experiments; integer 1–1000; turns a config ramp off (default: config maxConcurrency, else the provider default)",
  },
  {
    name: "ramp",
    value: "<from>:<to>",
    description:
      "let niceeval adjust the concurrency limit between from and to as the run goes: it climbs while the whole limit is in use and backs off when the agent's API pushes back with rate limits; keeps config ramp step/windowMs (default: config ramp, else off)",
  },
  {
    name: "no-ramp",
    description: "ignore the config ramp; use a fixed concurrency limit (default: off)",
  },
  {
    name: "timeout",
    value: "<duration>",
    description:
      "per-Attempt deadline: 5000 (ms), 500ms, 30s or 5m; 1ms to 2147483647ms (default: experiment → eval → config timeoutMs, else unlimited)",
  },
  {
    name: "tag",
    value: "<t>",
    repeatable: true,
    description: "keep only evals carrying a given tag; repeatable (default: none)",
  },
  GREP_FLAG,
  {
    name: "last-failed",
    description:
      "keep only evals whose latest result failed or errored, and rerun their failed Attempts (default: off)",
  },
  {
    name: "json",
    description: "NDJSON event stream on stdout; with --dry one plan document (default: off)",
  },
  {
    name: "junit",
    value: "<path>",
    description: "also write JUnit XML to this file, in an existing directory (default: none)",
  },
  {
    name: "dry",
    description:
      "show what would run and which earlier results are reused; run nothing (default: off)",
  },
  {
    name: "rerun",
    optionalValues: ["failed", "all"],
    description:
      "run again instead of reusing earlier results: bare or =failed reruns failed Attempts, =all reruns everything (default: reuse earlier passed and failed results)",
  },
  {
    name: "early-exit",
    description:
      "stop running an eval's remaining attempts once one passes (default: experiment earlyExit)",
  },
  {
    name: "no-early-exit",
    description: "run every attempt, even after one passed (default: experiment earlyExit)",
  },
  {
    name: "no-bail",
    description:
      "keep running an experiment whose first 5 attempts all fail with the same error (default: stop it)",
  },
  {
    name: "budget",
    value: "<usd>",
    description:
      "estimated-cost budget per selected experiment; decimal 0–1000000 (default: experiment budget, else unlimited)",
  },
  {
    name: "record",
    value: "<root>",
    description: "directory where results are stored (default: .niceeval/record)",
  },
  {
    name: "max-build-concurrency",
    value: "<n>",
    description:
      "image/template builds at once; integer 1–64 (default: config maxBuildConcurrency, else 2)",
  },
  {
    name: "teardown",
    description:
      "only run the selected experiments' teardown, to clean up what killed runs left behind; no evals, no setup (default: off)",
  },
  {
    name: "recover-shared-state",
    value: "<key>",
    description:
      "with --teardown: inspect the shared state a killed run still holds, or free it with --owner-token (default: none)",
  },
  {
    name: "owner-token",
    value: "<t>",
    description: "owner token (UUID) of the held shared state to free (default: none)",
  },
  {
    name: "confirm-owner-terminated",
    description: "confirm that the process holding the shared state has ended (default: off)",
  },
  {
    name: "confirm-remote-quiesced",
    description: "confirm that nothing remote still writes the shared state (default: off)",
  },
];

/** Flags of `exp list`. */
export const EXP_LIST_FLAGS: readonly FlagSpec[] = [
  {
    name: "tag",
    value: "<t>",
    repeatable: true,
    description: "keep only evals carrying a given tag; repeatable (default: none)",
  },
  { name: "json", description: "one JSON document on stdout (default: off)" },
];

/** Flags of `list`. */
export const LIST_FLAGS: readonly FlagSpec[] = EXP_LIST_FLAGS;

/** Flags of `init`. */
export const INIT_FLAGS: readonly FlagSpec[] = [
  { name: "example", description: "also write the keyless day-one example project (default: off)" },
];

/** Commands whose rejected flags get the fixed texts of cli.md §3.3 (elsewhere: unknown flag). */
const REJECTED_COMMANDS: ReadonlySet<string> = new Set(["exp", "exp list"]);

/** Flags of `exp` rejected with fixed texts (cli.md §3.3, FLAG-5). */
const REJECTED: Readonly<Record<string, readonly [string, string]>> = {
  agent: [
    "--agent is not an exp option; the agent is part of the experiment file",
    "add a file under experiments/ that calls defineExperiment({ agent })",
  ],
  model: [
    "--model is not an exp option; the model is part of the experiment file",
    'add a file under experiments/ with defineExperiment({ agent, model: "<name>" })',
  ],
  force: ["--force is not an exp option", "use --rerun all to execute every Attempt again"],
  "keep-sandbox": [
    "--keep-sandbox is not available yet",
    "inspect a failed Attempt with niceeval show @<locator>",
  ],
};

/** The parsed flags of one command. */
export interface ParsedFlags {
  readonly positionals: string[];
  readonly values: Map<string, string[]>;
}

/**
 * Parses `args` against `specs`: `--flag value`, `--flag=value`, `--` ends flags. Throws
 * `UsageError` for every rule of CLI-1 … CLI-3 and §3.3.
 */
export function parseFlags(
  args: readonly string[],
  specs: readonly FlagSpec[],
  command: string,
): ParsedFlags {
  const positionals: string[] = [];
  const values = new Map<string, string[]>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      positionals.push(arg);
      continue;
    }
    const long = arg.startsWith("--");
    const body = long ? arg.slice(2) : arg.slice(1);
    const eq = body.indexOf("=");
    const typed = eq < 0 ? body : body.slice(0, eq);
    const inline = eq < 0 ? undefined : body.slice(eq + 1);
    // A declared short flag (`-t`) stands for its long name; other single-dash words are unknown.
    const shortSpec = long ? undefined : specs.find((s) => s.short === typed);
    const name = shortSpec?.name ?? typed;
    const rejected = REJECTED_COMMANDS.has(command) && Object.hasOwn(REJECTED, name)
      ? REJECTED[name]
      : undefined;
    if (rejected) throw new UsageError("flag-rejected", rejected[0], rejected[1]);
    const spec = long ? specs.find((s) => s.name === name) : shortSpec;
    if (!spec) throw unknownFlag(arg.split("=")[0]!, specs, command);
    let value: string;
    if (spec.optionalValues) {
      const next = args[i + 1];
      if (inline !== undefined) value = inline;
      else if (next !== undefined && spec.optionalValues.includes(next)) value = args[++i]!;
      else value = spec.optionalValues[0]!;
      if (!spec.optionalValues.includes(value)) {
        throw new UsageError(
          "usage",
          `--${name} accepts ${spec.optionalValues.join(" or ")}, got ${quoteValue(value)}`,
          `see niceeval ${command} --help`,
        );
      }
    } else if (spec.value) {
      const next = inline ?? args[++i];
      if (next === undefined || (inline === undefined && next.startsWith("--"))) {
        throw new UsageError(
          "usage",
          `${long ? `--${name}` : `-${typed}`} requires a value ${spec.value}`,
          `see niceeval ${command} --help`,
        );
      }
      value = next;
    } else {
      if (inline !== undefined) {
        throw new UsageError(
          "usage",
          `--${name} takes no value, got ${quoteValue(inline)}`,
          `see niceeval ${command} --help`,
        );
      }
      value = "";
    }
    const prev = values.get(name) ?? [];
    if (prev.length > 0 && !spec.repeatable) {
      throw new UsageError("usage", `--${name} was given more than once`, `give --${name} once`);
    }
    values.set(name, [...prev, value]);
  }
  return { positionals, values };
}

/** The usage error of an unknown flag, with a suggestion within edit distance 2 (ERR-6). */
export function unknownFlag(
  flag: string,
  specs: readonly FlagSpec[],
  command: string,
): UsageError {
  const near = closest(flag.replace(/^-+/, ""), specs.map((s) => s.name));
  return new UsageError(
    "usage",
    `unknown flag ${PLAIN_FLAG_REGEXP.test(flag) ? flag : quoteValue(flag)}`,
    near ? `did you mean --${near}?` : `see ${command ? `niceeval ${command}` : "niceeval"} --help`,
  );
}

/**
 * Index in `args` of the first positional as {@link parseFlags} would see it, or -1. It never
 * throws: flags it does not know count as switches (CMD-2 uses it to find `exp … list`).
 */
export function firstPositionalIndex(args: readonly string[], specs: readonly FlagSpec[]): number {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") return i + 1 < args.length ? i + 1 : -1;
    if (!arg.startsWith("-") || arg === "-") return i;
    if (arg.includes("=")) continue;
    const spec = arg.startsWith("--")
      ? specs.find((s) => s.name === arg.slice(2))
      : specs.find((s) => s.short === arg.slice(1));
    const next = args[i + 1];
    if (spec?.value !== undefined && next !== undefined && !next.startsWith("--")) i++;
    else if (next !== undefined && spec?.optionalValues?.includes(next)) i++;
  }
  return -1;
}

/** The single value of a flag, if given. */
export function flagValue(flags: ParsedFlags, name: string): string | undefined {
  return flags.values.get(name)?.[0];
}

/** True when a switch was given. */
export function flagSet(flags: ParsedFlags, name: string): boolean {
  return flags.values.has(name);
}

/** The `--tag` values; an empty tag is a usage error (it could never match). */
export function tagsFlag(flags: ParsedFlags): string[] {
  const tags = flags.values.get("tag") ?? [];
  if (tags.some((tag) => tag.trim() === "")) {
    throw new UsageError(
      "usage",
      "--tag requires a non-empty tag",
      "pass a tag, for example --tag smoke",
    );
  }
  return tags;
}

/** Digits only: no sign, no whitespace, no exponent, no separators (ERR-7). */
const INTEGER_REGEXP = /^[0-9]+$/;
/** Digits with an optional fraction: no sign, no whitespace, no exponent. */
const DECIMAL_REGEXP = /^(?:[0-9]+|[0-9]*\.[0-9]+)$/;
/** A flag shown as typed in a message: short, without whitespace or control characters. */
const PLAIN_FLAG_REGEXP = /^[^\s\p{C}]{1,80}$/u;
/** Line breaks and control characters, which ERR-5's one-line messages must not contain. */
const CONTROL_REGEXP = /[\p{Cc}\u2028\u2029]/gu;
/** Longest value quoted whole in a message; longer ones are cut with `…`. */
const QUOTED_VALUE_MAX = 80;

/**
 * A flag value for a one-line message: JSON-quoted (line breaks and control characters escaped)
 * and cut to {@link QUOTED_VALUE_MAX} characters.
 */
export function quoteValue(raw: string): string {
  const chars = [...raw];
  const cut = chars.length > QUOTED_VALUE_MAX
    ? chars.slice(0, QUOTED_VALUE_MAX).join("") + "…"
    : raw;
  return JSON.stringify(cut);
}

/**
 * `text` as one line for ERR-5: line breaks and other control characters become `\uXXXX` escapes.
 * The last guard before `main` prints a message; values should be quoted with {@link quoteValue}.
 */
export function oneLine(text: string): string {
  return text.replace(
    CONTROL_REGEXP,
    (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, "0")}`,
  );
}

/** Parses an integer flag from `min` to `max` (ERR-7, docs/limits.md). */
export function intFlag(
  flags: ParsedFlags,
  name: string,
  range: { min?: number; max: number },
): number | undefined {
  const raw = flagValue(flags, name);
  if (raw === undefined) return undefined;
  const min = range.min ?? 1;
  const n = INTEGER_REGEXP.test(raw) ? Number(raw) : NaN;
  if (!(n >= min)) {
    throw new UsageError(
      "usage",
      `--${name} requires an integer ≥ ${min}, got ${quoteValue(raw)}`,
      `pass a whole number, for example --${name} ${Math.max(min, 1)}`,
    );
  }
  if (n > range.max) {
    throw new UsageError(
      "usage",
      `--${name} requires an integer ≤ ${range.max}, got ${quoteValue(raw)}`,
      `pass a whole number from ${min} to ${range.max} (limits: docs/limits.md)`,
    );
  }
  return n;
}

/** A duration: digits, then an optional unit (issue 18.8); no sign, space or fraction. */
const DURATION_REGEXP = /^([0-9]+)(ms|s|m)?$/;
/** Milliseconds per duration unit; a plain number is milliseconds. */
const DURATION_UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000 };

/**
 * Parses a duration flag to milliseconds: `500`, `500ms`, `30s`, `5m` (plain numbers are ms), from
 * 1 ms to `maxMs` (docs/limits.md, docs/small_ones.md).
 */
export function durationFlag(
  flags: ParsedFlags,
  name: string,
  range: { maxMs: number },
): number | undefined {
  const raw = flagValue(flags, name);
  if (raw === undefined) return undefined;
  const match = DURATION_REGEXP.exec(raw);
  if (!match) {
    throw new UsageError(
      "usage",
      `--${name} requires a duration: a whole number with ms, s or m (plain numbers are ms), got ${
        quoteValue(raw)
      }`,
      `pass for example --${name} 30s, --${name} 2m or --${name} 5000`,
    );
  }
  const ms = Number(match[1]) * DURATION_UNIT_MS[match[2] ?? "ms"]!;
  if (!(ms >= 1)) {
    throw new UsageError(
      "usage",
      `--${name} requires a duration ≥ 1ms, got ${quoteValue(raw)}`,
      `pass for example --${name} 30s`,
    );
  }
  if (ms > range.maxMs) {
    throw new UsageError(
      "usage",
      `--${name} requires a duration ≤ ${range.maxMs}ms, got ${quoteValue(raw)}`,
      `pass at most ${range.maxMs}ms, ${Math.floor(range.maxMs / 1000)}s or ${
        Math.floor(range.maxMs / 60_000)
      }m (limits: docs/limits.md)`,
    );
  }
  return ms;
}

/** Parses a decimal flag from 0 to `max`. */
export function decimalFlag(
  flags: ParsedFlags,
  name: string,
  range: { max: number },
): number | undefined {
  const raw = flagValue(flags, name);
  if (raw === undefined) return undefined;
  const n = DECIMAL_REGEXP.test(raw) ? Number(raw) : NaN;
  if (!Number.isFinite(n)) {
    throw new UsageError(
      "usage",
      `--${name} requires a decimal ≥ 0, got ${quoteValue(raw)}`,
      `pass a number of USD, for example --${name} 5`,
    );
  }
  if (n > range.max) {
    throw new UsageError(
      "usage",
      `--${name} requires a decimal ≤ ${range.max}, got ${quoteValue(raw)}`,
      `pass a number of USD from 0 to ${range.max} (limits: docs/limits.md)`,
    );
  }
  return n;
}

/** Rejects forbidden combinations (FLAG-4). */
export function forbidTogether(flags: ParsedFlags, a: string, b: string): void {
  if (flags.values.has(a) && flags.values.has(b)) {
    throw new UsageError(
      "usage",
      `--${a} cannot be combined with --${b}`,
      `drop one of --${a} and --${b}`,
    );
  }
}
