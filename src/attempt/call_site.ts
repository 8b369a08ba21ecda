/** Finds the user call site of an assertion: the first stack frame inside the project. */
import { isAbsolute, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** The location of a frame: `at fn (<where>:<line>:<col>)` or `at <where>:<line>:<col>`. */
const FRAME_REGEXP = /^\s*at (?:.*? \()?(.+?):(\d+):(\d+)\)?$/;
/** A location that is a URL or a runtime-internal module, never a project-relative path. */
const SCHEME_REGEXP = /^[a-z][a-z0-9+.-]*:/i;
/** What a rewritten project-relative frame location may look like. */
const RELATIVE_REGEXP = /^[^\s()<>]+$/;
/** Frames {@link captureCallSite} looks at; niceeval's own frames come first. */
const CAPTURE_FRAMES = 10;

/** The structured stack frame V8 hands `Error.prepareStackTrace`. */
interface V8CallSite {
  getFileName(): string | null | undefined;
  getLineNumber(): number | null;
}

/** V8's stack-trace API on `Error`. */
interface V8ErrorConstructor {
  prepareStackTrace?: (error: Error, sites: V8CallSite[]) => unknown;
  stackTraceLimit: number;
  captureStackTrace(target: object, constructorOpt?: (...args: never[]) => unknown): void;
}

const V8_ERROR = Error as unknown as V8ErrorConstructor;

function structuredFrames(_error: Error, sites: V8CallSite[]): V8CallSite[] {
  return sites;
}

/**
 * The first project frame among this function's callers, as {@link callSiteOf} finds it, without
 * formatting the stack as text: at most 10 frames (V8's default) are captured as V8 call sites (source-mapped by
 * the runtime) and only their file names are read up to the first project frame. When someone
 * else formats stacks (`Error.prepareStackTrace` is set, as by a loader that rewrites frames),
 * their text is parsed instead.
 */
export function captureCallSite(root: string, ownDir: string): string | null {
  if (V8_ERROR.prepareStackTrace !== undefined || !("captureStackTrace" in V8_ERROR)) {
    return callSiteOf(new Error().stack, root, ownDir);
  }
  const limit = V8_ERROR.stackTraceLimit;
  const holder: { stack?: unknown } = {};
  let sites: unknown;
  V8_ERROR.prepareStackTrace = structuredFrames;
  V8_ERROR.stackTraceLimit = CAPTURE_FRAMES;
  try {
    V8_ERROR.captureStackTrace(holder, captureCallSite);
    // Read while `structuredFrames` is installed: V8 prepares the stack on first access.
    sites = holder.stack;
  } finally {
    delete V8_ERROR.prepareStackTrace;
    V8_ERROR.stackTraceLimit = limit;
  }
  if (!Array.isArray(sites)) return null;
  for (const site of sites as V8CallSite[]) {
    const where = site.getFileName();
    if (!where) continue;
    // Call sites name local modules by path; URLs and rewritten relative paths as in text.
    const rel = isAbsolute(where)
      ? relativeFile(where, root, ownDir)
      : projectRelative(where, root, ownDir);
    const line = rel === undefined ? null : site.getLineNumber();
    if (line !== null) return `${rel}:${line}`;
  }
  return null;
}

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
  if (where.startsWith("file://")) {
    let file: string;
    try {
      file = fileURLToPath(where);
    } catch {
      return undefined;
    }
    return relativeFile(file, root, ownDir);
  }
  if (
    SCHEME_REGEXP.test(where) || isAbsolute(where) || where.startsWith("..") ||
    !RELATIVE_REGEXP.test(where)
  ) {
    return undefined;
  }
  return projectPath(where);
}

/** An absolute file as a project-relative path, unless it is niceeval's own or outside `root`. */
function relativeFile(file: string, root: string, ownDir: string): string | undefined {
  if (file === ownDir || file.startsWith(ownDir + sep)) return undefined;
  const rel = relative(root, file);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return undefined;
  return projectPath(rel);
}

function projectPath(rel: string): string | undefined {
  const path = rel.split("\\").join("/");
  return path.split("/").includes("node_modules") ? undefined : path;
}
