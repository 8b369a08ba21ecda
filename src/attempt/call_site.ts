/** Finds the user call site of an assertion: the first stack frame inside the project. */
import { isAbsolute, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** The location of a frame: `at fn (<where>:<line>:<col>)` or `at <where>:<line>:<col>`. */
const FRAME_REGEXP = /^\s*at (?:.*? \()?(.+?):(\d+):(\d+)\)?$/;
/** A location that is a URL or a runtime-internal module, never a project-relative path. */
const SCHEME_REGEXP = /^[a-z][a-z0-9+.-]*:/i;
/** What a rewritten project-relative frame location may look like. */
const RELATIVE_REGEXP = /^[^\s()<>]+$/;
/** Frames looked at when the first, narrow look finds no project frame (V8's default). */
const CAPTURE_FRAMES = 10;
/**
 * Frames of the first look below the caller's entry function: the few niceeval frames between
 * the user's call and that function, plus the user's frame. Formatting a frame costs the runtime
 * about as much as the whole capture, so the common case formats only these.
 */
const NARROW_FRAMES = 3;
/** Bound of the per-finder memo of frame files; a project has far fewer distinct files. */
const MAX_MEMO = 1_000;
/** Bound of the per-finder set of call sites handed out; beyond it, sites are not shared. */
const MAX_SITES = 10_000;

/** V8's stack-trace API on `Error`. */
interface V8ErrorConstructor {
  stackTraceLimit: number;
  captureStackTrace(target: object, constructorOpt?: (...args: never[]) => unknown): void;
}

const V8_ERROR = Error as unknown as V8ErrorConstructor;

/** A function that is on the stack of every capture: frames above its call are skipped. */
export type FrameMarker = (...args: never[]) => unknown;

/**
 * Finds call sites for one project root. The stack is captured as text, formatted by whoever
 * formats stacks (the runtime, or a loader's `Error.prepareStackTrace` that rewrites frames), so
 * the global stack-trace settings are never swapped: only `Error.stackTraceLimit`, briefly.
 * Frame files resolve to project paths once each (memoised): assertions repeat the same files.
 * Identical call sites are handed out as one string, so that the entries of many Attempts do
 * not each keep their own copy.
 */
export class CallSiteFinder {
  readonly #root: string;
  readonly #ownDir: string;
  /** `root` + separator when `root` is already normalised: frames below it need no `relative`. */
  readonly #rootPrefix: string | undefined;
  readonly #memo = new Map<string, string | undefined>();
  readonly #sites = new Map<string, string>();

  constructor(root: string, ownDir: string) {
    this.#root = root;
    this.#ownDir = ownDir;
    this.#rootPrefix = isAbsolute(root) && resolve(root) === root
      ? (root.endsWith(sep) ? root : root + sep)
      : undefined;
  }

  /**
   * `<project-relative file>:<line>` of the first project frame among the callers of `below`
   * (or of this method), or null. Looks at {@link NARROW_FRAMES} frames first, then at
   * {@link CAPTURE_FRAMES}; when `below` is not on the stack, at the frames of this method's
   * callers, as {@link captureCallSite} does.
   *
   * `entry`, when given, is the function the user's code called (its callers' frames are all
   * that can be the user's): its first caller frame is looked at first, alone, which formats one
   * frame instead of {@link NARROW_FRAMES}. When that frame is no project frame, or `entry` is not
   * on the stack, the look goes on from `below` as without `entry`; the frames between `below`
   * and `entry` must be niceeval's own, so that both looks find the same frame.
   */
  find(below?: FrameMarker, entry?: FrameMarker): string | null {
    if (entry !== undefined) {
      const lines = stackText(entry, 1).split("\n");
      if (lines.length > 1) {
        const found = this.#firstProjectFrame(lines);
        if (found !== null) return found;
      }
    }
    if (below !== undefined) {
      const narrow = stackText(below, NARROW_FRAMES);
      const lines = narrow.split("\n");
      if (lines.length > 1) {
        const found = this.#firstProjectFrame(lines);
        if (found !== null || lines.length <= NARROW_FRAMES) return found;
        return this.#firstProjectFrame(stackText(below, CAPTURE_FRAMES).split("\n"));
      }
    }
    return this.#firstProjectFrame(stackText(this.find, CAPTURE_FRAMES).split("\n"));
  }

  /** The first frame line (after the header) that lies in the project, formatted. */
  #firstProjectFrame(lines: readonly string[]): string | null {
    for (let i = 1; i < lines.length; i++) {
      const match = FRAME_REGEXP.exec(lines[i]!);
      if (!match) continue;
      const rel = this.#projectRelative(match[1]!);
      if (rel !== undefined) return this.#shared(`${rel}:${match[2]}`);
    }
    return null;
  }

  /** The string handed out earlier for `site`, else `site` itself, kept for later. */
  #shared(site: string): string {
    const sites = this.#sites;
    const known = sites.get(site);
    if (known !== undefined) return known;
    if (sites.size < MAX_SITES) sites.set(site, site);
    return site;
  }

  #projectRelative(where: string): string | undefined {
    const memo = this.#memo;
    if (memo.has(where)) return memo.get(where);
    const rel = this.#rootPrefix !== undefined && where.startsWith("file://")
      ? this.#fileRelative(where)
      : projectRelative(where, this.#root, this.#ownDir);
    if (memo.size < MAX_MEMO) memo.set(where, rel);
    return rel;
  }

  /** {@link projectRelative} of a `file:` URL when the root is normalised. */
  #fileRelative(url: string): string | undefined {
    let file: string;
    try {
      file = fileURLToPath(url);
    } catch {
      return undefined;
    }
    const own = this.#ownDir;
    if (file === own || file.startsWith(own + sep)) return undefined;
    // A normalised file strictly below the normalised root: its relative path is the rest.
    const prefix = this.#rootPrefix!;
    const rest = file.startsWith(prefix) ? file.slice(prefix.length) : undefined;
    if (rest === undefined || rest.startsWith("..")) return relativeFile(file, this.#root, own);
    return projectPath(rest);
  }
}

/** The stack text of the callers of `below`, at most `frames` frames. */
function stackText(below: FrameMarker, frames: number): string {
  const limit = V8_ERROR.stackTraceLimit;
  const holder: { stack?: unknown } = {};
  V8_ERROR.stackTraceLimit = frames;
  try {
    V8_ERROR.captureStackTrace(holder, below);
    // Read while the limit is set: the stack is prepared on first access.
    const stack = holder.stack;
    return typeof stack === "string" ? stack : "";
  } finally {
    V8_ERROR.stackTraceLimit = limit;
  }
}

/**
 * The first project frame among this function's callers, as {@link callSiteOf} finds it in the
 * formatted stack: at most 10 frames (V8's default) are looked at.
 */
export function captureCallSite(root: string, ownDir: string): string | null {
  return new CallSiteFinder(root, ownDir).find(captureCallSite);
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
