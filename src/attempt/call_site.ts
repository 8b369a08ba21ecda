/** Finds the user call site of an assertion: the first stack frame inside the project. */
import { isAbsolute, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** The location of a frame: `at fn (<where>:<line>:<col>)` or `at <where>:<line>:<col>`. */
const FRAME_REGEXP = /^\s*at (?:.*? \()?(.+?):(\d+):(\d+)\)?$/;
/** A location that is a URL or a runtime-internal module, never a project-relative path. */
const SCHEME_REGEXP = /^[a-z][a-z0-9+.-]*:/i;
/** What a rewritten project-relative frame location may look like. */
const RELATIVE_REGEXP = /^[^\s()<>]+$/;

/**
 * Returns `<project-relative file>:<line>` of the first stack frame that lies in `root` outside
 * `node_modules` and outside niceeval's own sources (`ownDir`), or null. Frames are `file:` URLs
 * (native loader) or already project-relative paths (frames rewritten by a loader).
 */
export function callSiteOf(stack: string | undefined, root: string, ownDir: string): string | null {
  for (const line of (stack ?? "").split("\n").slice(1)) {
    const match = FRAME_REGEXP.exec(line);
    if (!match) continue;
    const rel = projectRelative(match[1]!, root, ownDir);
    if (rel !== undefined) return `${rel}:${match[2]}`;
  }
  return null;
}

function projectRelative(where: string, root: string, ownDir: string): string | undefined {
  let rel: string;
  if (where.startsWith("file://")) {
    let file: string;
    try {
      file = fileURLToPath(where);
    } catch {
      return undefined;
    }
    if (file === ownDir || file.startsWith(ownDir + sep)) return undefined;
    rel = relative(root, file);
    if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return undefined;
  } else if (
    SCHEME_REGEXP.test(where) || isAbsolute(where) || where.startsWith("..") ||
    !RELATIVE_REGEXP.test(where)
  ) {
    return undefined;
  } else {
    rel = where;
  }
  rel = rel.split("\\").join("/");
  return rel.split("/").includes("node_modules") ? undefined : rel;
}
