/**
 * Which loader a process uses (toolchain.md §8 rules 1–3), decided once from facts the process
 * seam gathers: `NICEEVAL_LOADER`, whether this is a compiled binary, and what the process's own
 * import map resolves.
 */
import { UsageError } from "../_shared/mod.ts";
import { API_NAMES } from "./api.ts";
import type { ImportMap } from "./import_map.ts";

/** The two module loaders. */
export type LoaderKind = "native" | "embedded";

/** The loaders `NICEEVAL_LOADER` accepts. */
export const LOADER_KINDS: readonly LoaderKind[] = ["native", "embedded"];

/** What the process seam knows when it selects the loader. */
export interface LoaderFacts {
  /** The value of `NICEEVAL_LOADER`, when set. */
  readonly requested: string | undefined;
  /** True in a compiled binary (`Deno.build.standalone`). */
  readonly standalone: boolean;
  /** Resolves a bare specifier in this process's import map; undefined when it does not. */
  readonly resolve: (specifier: string) => string | undefined;
  /**
   * The project's generated import map, undefined when it cannot be read (the embedded loader
   * reports why when it loads the project).
   */
  readonly projectMap: () => ImportMap | undefined;
}

/** The selected loader, and the note to print when niceeval fell back to `embedded`. */
export interface LoaderSelection {
  readonly kind: LoaderKind;
  readonly note?: string;
}

/** Suffix resolved to check a prefix entry (`"@lib/"`) of an import map. */
const PREFIX_PROBE = "niceeval-probe.ts";

/**
 * Selects the loader: `NICEEVAL_LOADER` when set (`native` is refused in a compiled binary),
 * `embedded` in a compiled binary, else `native` when `niceeval` and every bare name of the
 * project's map resolve in this process as the project maps them, else `embedded` with a note.
 *
 * @throws {UsageError} `usage` for an unknown `NICEEVAL_LOADER` value, or `native` in a binary
 */
export function selectLoader(facts: LoaderFacts): LoaderSelection {
  const requested = facts.requested;
  if (requested !== undefined && requested !== "") {
    if (!(LOADER_KINDS as readonly string[]).includes(requested)) {
      throw new UsageError(
        "usage",
        `NICEEVAL_LOADER must be "native" or "embedded", got "${requested}"`,
        "set NICEEVAL_LOADER=native or NICEEVAL_LOADER=embedded, or unset it",
      );
    }
    if (requested === "native" && facts.standalone) {
      throw new UsageError(
        "usage",
        'NICEEVAL_LOADER is "native", but a compiled niceeval can only use its embedded loader',
        "unset NICEEVAL_LOADER or set it to embedded, or run niceeval under Deno",
      );
    }
    return { kind: requested as LoaderKind };
  }
  if (facts.standalone) return { kind: "embedded" };
  if (facts.resolve("niceeval") === undefined) {
    return { kind: "embedded", note: fallbackNote('"niceeval" does not resolve') };
  }
  const map = facts.projectMap();
  const alias = map === undefined ? "" : unmatchedAlias(map, facts.resolve);
  if (alias === undefined) return { kind: "native" };
  const reason = alias === ""
    ? "the project's deno.json cannot be read"
    : `"${alias}" does not resolve as the project maps it`;
  return { kind: "embedded", note: fallbackNote(reason) };
}

/**
 * The first bare name of the project's `imports` (the `niceeval*` names aside) that this process
 * does not resolve as the project does: a local target must resolve to the same URL, any other
 * target must resolve at all. Undefined when every name does.
 */
export function unmatchedAlias(
  map: ImportMap,
  resolve: (specifier: string) => string | undefined,
): string | undefined {
  for (const [key, target] of Object.entries(map.imports)) {
    if ((API_NAMES as readonly string[]).includes(key)) continue;
    const prefix = key.endsWith("/");
    const found = resolve(prefix ? key + PREFIX_PROBE : key);
    if (found === undefined) return key;
    if (target.startsWith("file:") && found !== (prefix ? target + PREFIX_PROBE : target)) {
      return key;
    }
  }
  return undefined;
}

function fallbackNote(reason: string): string {
  return `note: loading project files with niceeval's embedded loader: ${reason} in this ` +
    "process (run Deno with the project's deno.json to use the native loader)";
}
