/**
 * Finds user frames in stacks: the call site of an assertion (the first stack frame inside the
 * project) and the location and trimmed stack of an error that user code threw.
 */
import { isAbsolute, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * A frame: `at fn (<where>:<line>:<col>)` or `at <where>:<line>:<col>`. Groups: the function
 * part (when there is one), where, line, column.
 */
const FRAME_REGEXP = /^\s*at (?:(.*?) \()?(.+?):(\d+):(\d+)\)?$/;
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
/** User frames kept in an error's trimmed stack (V8 formats 10 frames by default). */
const MAX_TRACE_FRAMES = 10;
/** Characters of an error's trimmed stack; frames past the bound are dropped. */
const MAX_TRACE_CHARS = 4_096;
/** Lines of an error's stack looked at: a long message must not make the trim costly. */
const MAX_TRACE_LINES = 200;
/** Errors looked at along a `cause` chain when the thrown one has no user frame. */
const MAX_CAUSES = 4;

/** V8's stack-trace API on `Error`. */
interface V8ErrorConstructor {
  stackTraceLimit: number;
  captureStackTrace(target: object, constructorOpt?: (...args: never[]) => unknown): void;
}

const V8_ERROR = Error as unknown as V8ErrorConstructor;

/** A function that is on the stack of every capture: frames above its call are skipped. */
type FrameMarker = (...args: never[]) => unknown;

/** Where a thrown error came from in the project. */
interface ErrorTrace {
  /** `<project-relative file>:<line>:<column>` of the first user frame, or null. */
  readonly location: string | null;
  /**
   * The user frames, one `at [<fn> (]<file>:<line>:<column>[)]` line each (the message is not
   * repeated), at most {@link MAX_TRACE_FRAMES} frames and {@link MAX_TRACE_CHARS} characters;
   * null without a user frame.
   */
  readonly stack: string | null;
}

/** The trace of a value without a user frame: a non-Error throw, or an error of niceeval's own. */
const NO_TRACE: ErrorTrace = Object.freeze({ location: null, stack: null });

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

  /**
   * The location and trimmed stack of a thrown value: the frames of its stack that lie in the
   * project outside `node_modules` and niceeval's own sources, as {@link find} looks for them;
   * runtime frames (`ext:`, `node:`) and files outside the root (the npm cache) are dropped. When
   * the thrown error has no user frame, its `cause` chain is looked at (niceeval wraps some
   * errors). A value that is not an `Error`, or whose stack cannot be read, has no trace. Meant
   * for the error of an errored Attempt only: reading `error.stack` formats the whole stack.
   */
  trace(error: unknown): ErrorTrace {
    return errorTrace(error, (where) => this.#projectRelative(where));
  }

  /** The first frame line (after the header) that lies in the project, formatted. */
  #firstProjectFrame(lines: readonly string[]): string | null {
    for (let i = 1; i < lines.length; i++) {
      const match = FRAME_REGEXP.exec(lines[i]!);
      if (!match) continue;
      const rel = this.#projectRelative(match[2]!);
      if (rel !== undefined) return this.#shared(`${rel}:${match[3]}`);
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
    const rel = projectRelative(match[2]!, root, ownDir);
    if (rel !== undefined) return `${rel}:${match[3]}`;
  }
  return null;
}

function errorTrace(
  error: unknown,
  relativeOf: (where: string) => string | undefined,
): ErrorTrace {
  try {
    let current = error;
    for (let i = 0; i < MAX_CAUSES && current instanceof Error; i++) {
      const stack = current.stack;
      if (typeof stack !== "string") return NO_TRACE;
      const trace = userFrames(framesOf(current, stack), relativeOf);
      if (trace !== NO_TRACE) return trace;
      current = current.cause;
    }
    return NO_TRACE;
  } catch {
    // A hostile thrown value (a Proxy trap, a throwing getter) has no location; never a crash.
    return NO_TRACE;
  }
}

/**
 * The frames part of a stack: its `<name>: <message>` header cut off, so that no line of a
 * message is read as a frame.
 */
function framesOf(error: Error, stack: string): string {
  const header = `${error.name}: ${error.message}`;
  return stack.startsWith(header) ? stack.slice(header.length) : stack;
}

function userFrames(
  stack: string,
  relativeOf: (where: string) => string | undefined,
): ErrorTrace {
  const frames: string[] = [];
  let location: string | null = null;
  let chars = 0;
  let start = 0;
  for (let n = 0; n < MAX_TRACE_LINES && start < stack.length; n++) {
    const end = stack.indexOf("\n", start);
    const line = stack.slice(start, end < 0 ? stack.length : end);
    start = end < 0 ? stack.length : end + 1;
    const match = FRAME_REGEXP.exec(line);
    if (!match) continue;
    const rel = relativeOf(match[2]!);
    if (rel === undefined) continue;
    const where = `${rel}:${match[3]}:${match[4]}`;
    location ??= where;
    const frame = match[1] ? `at ${match[1]} (${where})` : `at ${where}`;
    if (chars + frame.length + 1 > MAX_TRACE_CHARS) break;
    frames.push(frame);
    chars += frame.length + 1;
    if (frames.length === MAX_TRACE_FRAMES) break;
  }
  if (location === null) return NO_TRACE;
  return { location, stack: frames.length > 0 ? frames.join("\n") : null };
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
