/** Finds the user call site of an assertion: the first stack frame inside the project. */
import { relative } from "node:path";
import { fileURLToPath } from "node:url";

const FRAME_REGEXP = /(file:\/\/[^\s()]+?):(\d+):(\d+)/;

/**
 * Returns `<project-relative file>:<line>` of the first stack frame that lies in `root` outside
 * `node_modules` and outside niceeval's own sources (`ownDir`), or null.
 */
export function callSiteOf(stack: string | undefined, root: string, ownDir: string): string | null {
  for (const line of (stack ?? "").split("\n").slice(1)) {
    const match = FRAME_REGEXP.exec(line);
    if (!match) continue;
    let file: string;
    try {
      file = fileURLToPath(match[1]!);
    } catch {
      continue;
    }
    if (file.startsWith(ownDir) || file.includes("/node_modules/")) continue;
    const rel = relative(root, file);
    if (rel.startsWith("..")) continue;
    return `${rel.split("\\").join("/")}:${match[2]}`;
  }
  return null;
}
