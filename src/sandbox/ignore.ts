/**
 * Gitignore-style globs for directory transfers (sandboxes.md rule 32): `*`, `?`, `**`, `[…]`,
 * a trailing `/` for directories only, a leading or inner `/` anchors to the transfer root, `!`
 * re-includes, `#` starts a comment; the last matching pattern wins.
 */

interface Rule {
  readonly regexp: RegExp;
  readonly negate: boolean;
  readonly dirOnly: boolean;
}

/** Decides whether a relative POSIX path (no leading `./`) is ignored. */
export type IgnoreMatcher = (relPath: string, isDir: boolean) => boolean;

/** Compiles `patterns` into a matcher. */
export function createIgnoreMatcher(patterns: readonly string[]): IgnoreMatcher {
  const rules = patterns.map(compile).filter((r): r is Rule => r !== undefined);
  return (relPath, isDir) => {
    let ignored = false;
    for (const rule of rules) {
      if (rule.dirOnly && !isDir) continue;
      if (rule.regexp.test(relPath)) ignored = !rule.negate;
    }
    return ignored;
  };
}

/** True when `relPath` (a file) or any directory above it is ignored. */
export function isIgnoredFile(matcher: IgnoreMatcher, relPath: string): boolean {
  const parts = relPath.split("/");
  for (let i = 1; i < parts.length; i++) {
    if (matcher(parts.slice(0, i).join("/"), true)) return true;
  }
  return matcher(relPath, false);
}

function compile(raw: string): Rule | undefined {
  let pattern = raw.trim();
  if (pattern === "" || pattern.startsWith("#")) return undefined;
  const negate = pattern.startsWith("!");
  if (negate) pattern = pattern.slice(1);
  const dirOnly = pattern.endsWith("/");
  if (dirOnly) pattern = pattern.replace(/\/+$/, "");
  const anchored = pattern.includes("/");
  pattern = pattern.replace(/^\/+/, "");
  if (pattern === "") return undefined;
  const body = globBody(pattern);
  const regexp = new RegExp(anchored ? `^${body}$` : `(^|/)${body}$`);
  return { regexp, negate, dirOnly };
}

/** A gitignore-style glob as the body of a regular expression (`**`, `*`, `?`, `[…]`). */
export function globBody(glob: string): string {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*" && glob[i + 1] === "*") {
      const slash = glob[i + 2] === "/";
      out += slash ? "(?:.*/)?" : ".*";
      i += slash ? 2 : 1;
    } else if (c === "*") {
      out += "[^/]*";
    } else if (c === "?") {
      out += "[^/]";
    } else if (c === "[") {
      const end = glob.indexOf("]", i + 1);
      if (end < 0) {
        out += "\\[";
        continue;
      }
      const set = glob.slice(i + 1, end).replace(/^!/, "^").replace(/\\/g, "\\\\");
      out += `[${set}]`;
      i = end;
    } else {
      out += c.replace(/[.+^${}()|\\]/g, "\\$&");
    }
  }
  return out;
}
