/**
 * The options every coding-agent adapter accepts (docs/coding_agents.md "Options") and their
 * synchronous validation.
 */
import { check, checkOptions, DefinitionError, describe } from "../../_shared/mod.ts";
import type { EvidenceCoverage } from "../types.ts";
import { AGENT_NAME_REGEXP } from "../define_agent.ts";

/** Options every coding-agent adapter accepts. */
export interface CliAgentOptions {
  /** Display and configuration identity; defaults to the adapter's name. */
  name?: string;
  /** The model the CLI uses; defaults to the experiment's model, else the CLI's own default. */
  model?: string;
  /** An explicit path (or command name) of the CLI; wins over every other resolution. */
  bin?: string;
  /** An exact CLI version that niceeval installs from npm into its cache when needed. */
  version?: string;
  /** Extra arguments given to the CLI on every run. */
  args?: readonly string[];
  /** Fixed variables added to the CLI's environment (they win over the quiet defaults). */
  env?: Record<string, string>;
  /** Host variables passed through besides the CLI's own credentials; redacted in evidence. */
  passEnv?: readonly string[];
  /** The model endpoint; wins over the endpoint variable of the host. */
  baseUrl?: string;
  /** Lowers the declared coverage of individual channels. */
  evidenceCoverage?: Partial<EvidenceCoverage>;
}

/** The common options after validation. */
export interface CliSettings {
  readonly name: string;
  readonly model: string | undefined;
  readonly bin: string | undefined;
  readonly version: string | undefined;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly passEnv: readonly string[];
  readonly baseUrl: string | undefined;
}

/** Common option names; adapters with more options pass them in `extraKeys`. */
export const CLI_OPTION_KEYS: readonly string[] = Object.freeze([
  "name",
  "model",
  "bin",
  "version",
  "args",
  "env",
  "passEnv",
  "baseUrl",
  "evidenceCoverage",
]);

const ENV_NAME_REGEXP = /^[A-Za-z_][A-Za-z0-9_]*$/;
const VERSION_REGEXP = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

/**
 * Validates the common options of `spec`'s adapter. Adapter-specific keys are allowed in
 * `extraKeys` and returned untouched in the record for the adapter to check.
 *
 * @throws {DefinitionError} On the first unknown or invalid option.
 */
export function checkCliOptions(
  spec: { readonly what: string; readonly defaultName: string },
  options: unknown,
  extraKeys: readonly string[] = [],
): { settings: CliSettings; coverage: Partial<EvidenceCoverage>; rest: Record<string, unknown> } {
  const o = checkOptions(options ?? {}, { known: [...CLI_OPTION_KEYS, ...extraKeys] }, spec.what);
  const w = spec.what;
  const opt = (key: string) =>
    o[key] === undefined ? undefined : check.string(o[key], key, w, { nonEmpty: true });
  const version = opt("version");
  if (version !== undefined && !VERSION_REGEXP.test(version)) {
    invalid(w, "version", "an exact version like 1.2.3", version);
  }
  const settings: CliSettings = Object.freeze({
    name: check.string(o.name ?? spec.defaultName, "name", w, { pattern: AGENT_NAME_REGEXP }),
    model: opt("model"),
    bin: opt("bin"),
    version,
    args: stringsOf(o.args, "args", w, (s) => typeof s === "string"),
    env: envOf(o.env, w),
    passEnv: stringsOf(o.passEnv, "passEnv", w, (s) => ENV_NAME_REGEXP.test(s)),
    baseUrl: opt("baseUrl"),
  });
  const rest: Record<string, unknown> = {};
  for (const key of extraKeys) if (o[key] !== undefined) rest[key] = o[key];
  const coverage = (o.evidenceCoverage ?? {}) as Partial<EvidenceCoverage>;
  return { settings, coverage, rest };
}

function stringsOf(
  value: unknown,
  path: string,
  what: string,
  ok: (s: string) => boolean,
): readonly string[] {
  if (value === undefined) return Object.freeze([]);
  if (!Array.isArray(value)) invalid(what, path, "an array of strings", value);
  value.forEach((s, i) => {
    if (typeof s !== "string" || !ok(s)) invalid(what, `${path}[${i}]`, "a valid string", s);
  });
  return Object.freeze([...value as string[]]);
}

function envOf(value: unknown, what: string): Readonly<Record<string, string>> {
  if (value === undefined) return Object.freeze({});
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    invalid(what, "env", "an object of strings", value);
  }
  for (const [k, v] of Object.entries(value)) {
    if (!ENV_NAME_REGEXP.test(k) || typeof v !== "string") {
      invalid(what, `env.${k}`, "a string variable", v);
    }
  }
  return Object.freeze({ ...value as Record<string, string> });
}

function invalid(what: string, path: string, expected: string, value: unknown): never {
  throw new DefinitionError(
    "definition.invalid-value",
    path,
    `${what}: ${path} must be ${expected}, got ${describe(value)}`,
  );
}
