/** Discovery issues (authoring.md §1.6): collected, sorted by file, reported together. */
import { errorMessage, hasErrorName, UsageError } from "../_shared/mod.ts";
import { describeLoadError } from "../loader/mod.ts";

/** One problem found while discovering the project. */
export interface DiscoveryIssue {
  /** Project-relative path with `/` separators. */
  readonly file: string;
  readonly code: string;
  readonly level: "error" | "warning";
  /** One line. */
  readonly message: string;
  readonly hint?: string;
}

/** Turns an error thrown while importing `file` (a walked file) into an issue. */
export function importIssue(
  file: { readonly root: string; readonly relative: string },
  error: unknown,
): DiscoveryIssue {
  if (hasErrorName(error, "DefinitionError")) {
    return {
      file: file.relative,
      code: "discovery.invalid-definition",
      level: "error",
      message: firstLine(errorMessage(error)),
      hint: "fix the option named above",
    };
  }
  return {
    file: file.relative,
    code: "discovery.import-failed",
    level: "error",
    message: `cannot load: ${describeLoadError(error, file.root)}`,
    hint: "fix the syntax error, unresolved import or exception named above",
  };
}

/** The issue of a default export whose reading threw (a Proxy trap, a getter, a revoked Proxy). */
export function unreadableExport(file: string, error: unknown): DiscoveryIssue {
  return {
    file,
    code: "discovery.invalid-export",
    level: "error",
    message: `the default export cannot be read: ${firstLine(errorMessage(error))}`,
    hint: "export the value a define* function returns, not a Proxy or an object with getters",
  };
}

/** Sorts issues by file (code-unit order), keeping the order of issues within one file. */
export function sortIssues(issues: readonly DiscoveryIssue[]): DiscoveryIssue[] {
  return issues
    .map((issue, i) => ({ issue, i }))
    .sort((a, b) => compareCodeUnits(a.issue.file, b.issue.file) || a.i - b.i)
    .map(({ issue }) => issue);
}

/**
 * Throws one {@link UsageError} listing every error issue (`file: message [code]` each),
 * with a single hint; does nothing when there is no error.
 */
export function throwOnErrors(issues: readonly DiscoveryIssue[]): void {
  const errors = sortIssues(issues).filter((issue) => issue.level === "error");
  const [first, ...rest] = errors;
  if (!first) return;
  const line = (issue: DiscoveryIssue) => `${issue.file}: ${issue.message}`;
  // One hint for all lines (ERR-5): the issues' own hint when they agree, else a general one.
  const hints = new Set(errors.map((issue) => issue.hint));
  const hint = hints.size === 1 && first.hint !== undefined
    ? first.hint
    : "fix the files listed above, then run the command again";
  throw new UsageError(first.code, line(first), hint, {
    extraLines: rest.map((issue) => `${line(issue)} [${issue.code}]`),
  });
}

/** Plain UTF-16 code-unit comparison (authoring.md rule 1.3.3). */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function firstLine(text: string): string {
  return (text.split("\n")[0] ?? text).trim();
}
