/**
 * The build failure diagnostic (sandboxes.md §5.3): the `ERR_*` code and excerpt taken from a
 * failed build's message and log tail, the remediation hint, and the `detail` object capped at
 * 1000 bytes of UTF-8. Pure; no Docker I/O.
 */

/** Schema of the diagnostic's `detail` (rule 67). */
export const BUILD_FAILURE_SCHEMA = "niceeval.sandbox-build-failure/v1";
/** Largest encoded `detail` in bytes (rule 67). */
export const BUILD_FAILURE_MAX_BYTES = 1000;
/** Characters of the excerpt before capping (rule 68). */
export const BUILD_FAILURE_EXCERPT_CHARS = 600;

const ERROR_CODE_REGEXP = /\bERR_[A-Z0-9_]+\b/;
// deno-lint-ignore no-control-regex -- ANSI escapes are control characters by definition
const ANSI_REGEXP = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

/** Remediation hints of rule 70: what to match, the hint id, and the text reports show. */
export const BUILD_REMEDIATIONS: readonly {
  readonly match: readonly string[];
  readonly remediation: string;
  readonly text: string;
}[] = [
  {
    match: ["ERR_PNPM_IGNORED_BUILDS"],
    remediation: "pnpm-allow-builds",
    text: "Review the listed dependencies and set pnpm `allowBuilds` for each.",
  },
  {
    match: ["ERR_PNPM_OUTDATED_LOCKFILE"],
    remediation: "pnpm-update-lockfile",
    text: "Run `pnpm install` locally and commit the updated lockfile.",
  },
  {
    match: ["ERR_PNPM_NO_LOCKFILE"],
    remediation: "pnpm-add-lockfile",
    text: "Commit `pnpm-lock.yaml` into the build context.",
  },
  {
    match: ["no space left on device"],
    remediation: "docker-disk-full",
    text: "Free disk space for the Docker data root.",
  },
  {
    match: ["pull access denied", "manifest unknown"],
    remediation: "image-not-found",
    text: "Check the base image name, or pull it locally first.",
  },
];

/** What a failed build tells about itself, before it is tied to a slot. */
export interface BuildFailureFacts {
  /** `sandbox.build`, or `sandbox.pull` for a failed pull (rule 61). */
  readonly phase: "sandbox.build" | "sandbox.pull";
  /** The first `ERR_*` of the search text, else the error's own string `code`. */
  readonly errorCode?: string;
  /** Up to 600 characters from the line of the match, else the end of the search text. */
  readonly message: string;
  readonly remediation?: string;
}

/**
 * The `detail` object of one `sandbox-build-failed` diagnostic (rule 67), plus `remediationText`:
 * the text of rule 70 that reports show, carried at emission so that a report renders it from the
 * Record alone (rule 71). It goes and stays with `remediation`.
 */
export interface BuildFailureDetail {
  readonly schema: typeof BUILD_FAILURE_SCHEMA;
  readonly buildKey: string;
  readonly evalId: string;
  readonly attempt: number;
  readonly phase: BuildFailureFacts["phase"];
  readonly errorCode?: string;
  readonly message: string;
  readonly remediation?: string;
  readonly remediationText?: string;
}

/** Removes ANSI escape sequences (colours, cursor moves, titles). */
export function stripAnsi(text: string): string {
  return text.replace(ANSI_REGEXP, "");
}

/**
 * Extracts code, excerpt and remediation from a failed build (rules 68, 70). The search text is
 * `message + "\n" + logTail` with ANSI escapes removed.
 */
export function buildFailureFacts(
  input: {
    readonly message: string;
    readonly logTail: string;
    readonly code?: unknown;
    readonly phase?: BuildFailureFacts["phase"];
  },
): BuildFailureFacts {
  const text = stripAnsi(`${input.message}\n${input.logTail}`);
  const match = ERROR_CODE_REGEXP.exec(text);
  const errorCode = match?.[0] ?? (typeof input.code === "string" ? input.code : undefined);
  let message: string;
  if (match) {
    const lineStart = text.lastIndexOf("\n", match.index) + 1;
    message = [...text.slice(lineStart)].slice(0, BUILD_FAILURE_EXCERPT_CHARS).join("");
  } else {
    message = [...text].slice(-BUILD_FAILURE_EXCERPT_CHARS).join("");
  }
  const remediation = BUILD_REMEDIATIONS.find((r) => r.match.some((m) => text.includes(m)));
  return {
    phase: input.phase ?? "sandbox.build",
    ...(errorCode !== undefined ? { errorCode } : {}),
    message,
    ...(remediation ? { remediation: remediation.remediation } : {}),
  };
}

/**
 * The capped `detail` of one slot's diagnostic (rules 67, 69): while the UTF-8 JSON exceeds 1000
 * bytes, `message` is cut to 75 % of its code points plus `…`; once it is empty, `remediation` is
 * dropped with its text.
 */
export function buildFailureDetail(
  facts: BuildFailureFacts,
  slot: { readonly buildKey: string; readonly evalId: string; readonly attempt: number },
): BuildFailureDetail {
  let message = facts.message;
  let remediation = facts.remediation;
  const make = (): BuildFailureDetail => ({
    schema: BUILD_FAILURE_SCHEMA,
    buildKey: slot.buildKey.slice(0, 16),
    evalId: slot.evalId,
    attempt: slot.attempt,
    phase: facts.phase,
    ...(facts.errorCode !== undefined ? { errorCode: facts.errorCode } : {}),
    message,
    ...(remediation !== undefined ? remediationOf(remediation) : {}),
  });
  const size = (d: BuildFailureDetail) => new TextEncoder().encode(JSON.stringify(d)).length;
  let detail = make();
  while (size(detail) > BUILD_FAILURE_MAX_BYTES) {
    if (message !== "") {
      const chars = [...message];
      const keep = Math.floor(chars.length * 0.75);
      message = keep === 0 ? "" : chars.slice(0, keep).join("") + "…";
    } else if (remediation !== undefined) {
      remediation = undefined;
    } else {
      break; // only an oversized eval id is left; the id is never cut
    }
    detail = make();
  }
  return detail;
}

/** The text reports show for a remediation id; undefined for unknown ids. */
export function remediationText(remediation: string): string | undefined {
  return BUILD_REMEDIATIONS.find((r) => r.remediation === remediation)?.text;
}

function remediationOf(remediation: string): { remediation: string; remediationText?: string } {
  const text = remediationText(remediation);
  return text === undefined ? { remediation } : { remediation, remediationText: text };
}
