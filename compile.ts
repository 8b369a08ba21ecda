/**
 * `deno task compile` (toolchain.md §9): builds standalone niceeval binaries into `dist/bin/`.
 *
 * Usage: `deno run -A --frozen compile.ts [--target <t>]… [--all] [--probe] [--out <dir>]`
 *
 * Every requested target first needs a runtime (`denort`): `DENORT_BIN` (host target only), a zip
 * pre-seeded in Deno's cache, or a download whose availability a HEAD request decides. Nothing is
 * built unless every target has one. The host binary then has to pass a smoke test, or it is
 * deleted. All side effects go through a {@link CompilePort}, so tests drive every path without a
 * runtime. `docs/compile.md` describes the workflow.
 *
 * One file on purpose, although past the 500-line guideline: a build script outside `src/` that
 * runs with nothing but Deno, so there is no domain folder for its parts to live in.
 *
 * @module
 */

import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { UsageError } from "./src/_shared/mod.ts";
import { LAUNCHER_V8_FLAGS } from "./src/_shared/heap_flags.ts";

/** The six targets Deno compiles for. */
export const TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
  "aarch64-pc-windows-msvc",
] as const;

/** One compile target. */
export type Target = (typeof TARGETS)[number];

/** Where a target's runtime comes from; `none` when no source has one. */
export type RuntimeSource = "DENORT_BIN" | "cache" | "download" | "none";

const REPO_ROOT = dirname(fileURLToPath(import.meta.url));
const DOWNLOAD_BASE_URL = "https://dl.deno.land/release";
/** How long the download probe waits for an answer (toolchain.md §9.2). */
export const PROBE_TIMEOUT_MS = 5_000;
/** A smoke-test command that runs longer is killed and fails: a hung binary must not hang us. */
export const SMOKE_TIMEOUT_MS = 60_000;
const CHECKSUM_FILE = "scripts/denort.sha256";
const SMOKE_PROJECT = "tests/fixtures/smoke_project";
const SMOKE_EVAL_REGEXP = /^\s*smoke\/hello(\s|$)/m;
const CHECKSUM_LINE_REGEXP = /^([0-9a-f]{64}) {2}(v[^/\s]+\/denort-[a-z0-9_-]+\.zip)$/;
const FETCH_PREFIX_REGEXP = /^error sending request for url \([^)]*\): /;
const HELP_HINT = "run `./scripts/deno task compile --help` for the flags";

const HELP = `Usage: deno task compile [--target <t>]... [--all] [--probe] [--out <dir>]

Builds standalone niceeval binaries, niceeval-<target> (.exe on Windows), for the host target by
default, then smoke-tests the host binary.

Options:
  --target <t>  build for <t>; repeatable (default: the host target)
  --all         build for all six targets
  --probe       only print "<target>  <source|none>  <detail>" for each target
  --out <dir>   output directory (default: dist/bin)
  -h, --help    print help

Runtime sources, in order: DENORT_BIN (host target only), a pre-seeded
$DENO_DIR/dl/release/v<deno version>/denort-<target>.zip, a download.
Targets: ${TARGETS.join(", ")}
Exit codes: 0 built and smoke-tested; 1 a build, smoke test or checksum failed;
2 bad flags, or no runtime for some target (nothing built)`;

/** What a finished child process returned. */
export interface ProcessResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Every side effect of compile.ts: environment, files, network, child processes, output. */
export interface CompilePort {
  /** Reads an environment variable; `undefined` when unset. */
  env(name: string): string | undefined;
  /** Deno's cache directory, as `deno info --json` reports it. */
  denoDir(): Promise<string>;
  /** True when `path` is an existing file. */
  isFile(path: string): Promise<boolean>;
  /** Reads a file's bytes; `null` when it does not exist. */
  readFile(path: string): Promise<Uint8Array<ArrayBuffer> | null>;
  /** Sends a HEAD request and resolves to the HTTP status; rejects when no answer comes in time. */
  head(url: string, timeoutMs: number): Promise<number>;
  /**
   * Runs `deno <args>` in `cwd` and resolves to its exit code. The child sees `DENORT_BIN` only
   * when `denortBin` is given.
   */
  runDeno(
    args: readonly string[],
    options: { cwd: string; denortBin: string | null },
  ): Promise<number>;
  /** Runs a built binary in `cwd` without input, killed after {@link SMOKE_TIMEOUT_MS}. */
  runBinary(
    path: string,
    args: readonly string[],
    options: { cwd: string },
  ): Promise<ProcessResult>;
  /** Creates a directory and its parents. */
  makeDir(path: string): Promise<void>;
  /** Removes a file; a missing file is not an error. */
  remove(path: string): Promise<void>;
  /** Writes one line to stdout. */
  print(line: string): void;
  /** Writes one line to stderr. */
  printError(line: string): void;
}

/** Parsed command-line flags. */
export interface CompileFlags {
  /** Requested targets, in order, without duplicates. */
  readonly targets: readonly Target[];
  readonly probe: boolean;
  readonly help: boolean;
  /** The `--out` directory as given, or `null` for the default `dist/bin`. */
  readonly out: string | null;
}

/** The runtime found for one target, or why none was found. */
export interface Resolution {
  readonly target: Target;
  readonly source: RuntimeSource;
  /** The runtime's path or URL, or, for `none`, what went wrong. */
  readonly detail: string;
  /** Each source tried before the one chosen (all of them for `none`), with its outcome. */
  readonly tried: readonly string[];
  /** True when the cached zip's sha256 differs from the listed one; fatal. */
  readonly mismatch: boolean;
}

/** Inputs of {@link runCompile} and {@link resolveRuntimes}; every one has a production default. */
export interface CompileOptions {
  /** The side effects. @default createSystemPort() */
  readonly port?: CompilePort;
  /** Holds mod.ts, deno.json and the smoke project. @default the directory of compile.ts */
  readonly root?: string;
  /** What a relative `--out` is resolved against. @default Deno.cwd() */
  readonly cwd?: string;
  /** The host's target triple. @default Deno.build.target */
  readonly host?: string;
  /** The running Deno version, which names the cached zip. @default Deno.version.deno */
  readonly denoVersion?: string;
  /** The list of known zip digests. @default `<root>/scripts/denort.sha256` */
  readonly checksumFile?: string;
  /** The esbuild.wasm passed with `--include`. @default the file in the esbuild-wasm package */
  readonly wasmPath?: string;
}

type Context = Required<Omit<CompileOptions, "wasmPath">> & { readonly wasmPath: () => string };

/** True when `value` names one of the {@link TARGETS}. */
export function isTarget(value: string): value is Target {
  return (TARGETS as readonly string[]).includes(value);
}

/** The file name of a target's binary: `niceeval-<target>`, plus `.exe` on Windows. */
export function binaryName(target: Target): string {
  return `niceeval-${target}${target.includes("windows") ? ".exe" : ""}`;
}

/**
 * Parses the flags. Without `--target` or `--all` the host target is built.
 *
 * @throws {UsageError} code `usage` on an unknown flag or target, a missing value, a stray
 * argument, or a host that is not a compile target when no target is given
 */
export function parseFlags(args: readonly string[], host: string): CompileFlags {
  const targets = new Set<Target>();
  let all = false, probe = false, help = false;
  let out: string | null = null;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const name = eq < 0 ? arg : arg.slice(0, eq);
    const inline = eq < 0 ? null : arg.slice(eq + 1);
    const value = () => inline ?? valueAfter(args, ++i, name);
    if (inline !== null && !["--target", "--out"].includes(name)) {
      throw usage(`Flag "${name}" takes no value, got "${arg}"`, HELP_HINT);
    }
    if (name === "--all") all = true;
    else if (name === "--probe") probe = true;
    else if (name === "--help" || name === "-h") help = true;
    else if (name === "--target") targets.add(toTarget(value()));
    else if (name === "--out") out = value();
    else if (arg.startsWith("-")) throw usage(`Unknown flag "${arg}"`, HELP_HINT);
    else throw usage(`Unexpected argument "${arg}"`, HELP_HINT);
  }
  if (all) return { targets: [...TARGETS], probe, help, out };
  if (targets.size === 0 && !help) {
    if (!isTarget(host)) {
      throw usage(`The host "${host}" is not a compile target`, "pass --target <t> or --all");
    }
    targets.add(host);
  }
  return { targets: [...targets], probe, help, out };
}

function valueAfter(args: readonly string[], index: number, name: string): string {
  const value = args[index];
  if (value === undefined || value.startsWith("-")) {
    throw usage(`Flag "${name}" needs a value`, HELP_HINT);
  }
  return value;
}

function toTarget(value: string): Target {
  if (isTarget(value)) return value;
  throw usage(`Unknown target "${value}"`, `use one of: ${TARGETS.join(", ")}`);
}

function usage(message: string, hint: string): UsageError {
  return new UsageError("usage", message, hint);
}

/**
 * Reads the digest list: one `<sha256 hex>  v<deno version>/denort-<target>.zip` line per zip
 * (the path relative to `$DENO_DIR/dl/release/`); blank lines and `#` comments are skipped.
 *
 * @returns the digest for each listed zip path
 * @throws {TypeError} on a line of any other shape
 */
export function parseChecksums(text: string): Map<string, string> {
  const digests = new Map<string, string>();
  for (const [index, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const match = CHECKSUM_LINE_REGEXP.exec(line);
    if (match === null) {
      throw new TypeError(
        `${CHECKSUM_FILE} line ${
          index + 1
        }: expected "<sha256 hex>  v<version>/denort-<target>.zip", got "${line}"`,
      );
    }
    digests.set(match[2]!, match[1]!);
  }
  return digests;
}

/**
 * Finds a runtime for each target, in the order of toolchain.md §9.2: `DENORT_BIN` (host target
 * only), the pre-seeded zip in Deno's cache (checked against the digest list when listed), then a
 * download, probed with a HEAD request bounded by {@link PROBE_TIMEOUT_MS}. The targets are
 * probed concurrently, so the whole call is bounded by one timeout.
 */
export async function resolveRuntimes(
  targets: readonly Target[],
  options: CompileOptions = {},
): Promise<Resolution[]> {
  return await resolveWith(targets, contextOf(options));
}

async function resolveWith(targets: readonly Target[], ctx: Context): Promise<Resolution[]> {
  const denoDir = await ctx.port.denoDir();
  const checksums = parseChecksums(new TextDecoder().decode(
    await ctx.port.readFile(ctx.checksumFile) ?? new Uint8Array(),
  ));
  // Bounded: at most the six TARGETS are probed at once.
  return await Promise.all(targets.map((target) => resolveTarget(target, ctx, denoDir, checksums)));
}

async function resolveTarget(
  target: Target,
  ctx: Context,
  denoDir: string,
  checksums: Map<string, string>,
): Promise<Resolution> {
  const tried: string[] = [];
  const found = (source: RuntimeSource, detail: string): Resolution => ({
    target,
    source,
    detail,
    tried,
    mismatch: false,
  });
  const bin = ctx.port.env("DENORT_BIN") ?? "";
  if (bin === "") tried.push("DENORT_BIN not set");
  else if (target !== ctx.host) tried.push(`DENORT_BIN skipped: host target "${ctx.host}" only`);
  else if (await ctx.port.isFile(bin)) return found("DENORT_BIN", bin);
  else tried.push(`DENORT_BIN "${bin}" is not a file`);

  const name = `v${ctx.denoVersion}/denort-${target}.zip`;
  const zip = join(denoDir, "dl", "release", name);
  if (await ctx.port.isFile(zip)) {
    const expected = checksums.get(name);
    if (expected === undefined) return found("cache", `${zip} (not listed in ${CHECKSUM_FILE})`);
    const actual = await sha256(await ctx.port.readFile(zip) ?? new Uint8Array());
    if (actual === expected) return found("cache", `${zip} (sha256 verified)`);
    const detail =
      `checksum mismatch: ${zip} has sha256 ${actual}, ${CHECKSUM_FILE} lists ${expected}`;
    return { target, source: "none", detail, tried: [...tried, detail], mismatch: true };
  }
  tried.push(`${zip} absent`);

  const url = `${DOWNLOAD_BASE_URL}/${name}`;
  const failure = await probeDownload(ctx.port, url);
  if (failure === null) return found("download", url);
  tried.push(`${url} ${failure}`);
  return { target, source: "none", detail: `tried ${tried.join("; ")}`, tried, mismatch: false };
}

/** `null` when the URL answers with a 2xx status, else why the download is unavailable. */
async function probeDownload(port: CompilePort, url: string): Promise<string | null> {
  try {
    const status = await port.head(url, PROBE_TIMEOUT_MS);
    return status >= 200 && status < 300 ? null : `unavailable: HTTP ${status}`;
  } catch (error) {
    // A network failure is the answer "not available", kept as data in the tried list.
    return `unreachable: ${networkMessage(error)}`;
  }
}

function networkMessage(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const message = cause instanceof Error ? cause.message : String(cause);
  return message.replace(FETCH_PREFIX_REGEXP, "");
}

async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * Runs compile.ts: parses `args`, resolves a runtime for every target, then builds each target
 * and smoke-tests the host binary.
 *
 * @returns the exit code: 0 everything built and the host binary passed its smoke test; 1 a
 * build, a smoke test or a checksum failed; 2 bad flags or no runtime for some target
 */
export async function runCompile(
  args: readonly string[],
  options: CompileOptions = {},
): Promise<number> {
  const ctx = contextOf(options);
  let flags: CompileFlags;
  try {
    flags = parseFlags(args, ctx.host);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    ctx.port.printError(`error: ${error.message} [${error.code}]`);
    ctx.port.printError(`hint: ${error.hint}`);
    return 2;
  }
  if (flags.help) {
    ctx.port.print(HELP);
    return 0;
  }
  noteDenortBin(flags.targets, ctx);
  const resolutions = await resolveWith(flags.targets, ctx);
  if (flags.probe) return printProbe(resolutions, ctx.port);
  const blocked = reportUnresolved(resolutions, ctx.port);
  if (blocked !== 0) return blocked;

  const outDir = flags.out === null ? join(ctx.root, "dist", "bin") : resolve(ctx.cwd, flags.out);
  await ctx.port.makeDir(outDir);
  let code = 0;
  // One build at a time: each `deno compile` is heavy in memory and disk.
  for (const resolution of resolutions) {
    if (!await buildTarget(resolution, join(outDir, binaryName(resolution.target)), ctx)) code = 1;
  }
  return code;
}

function noteDenortBin(targets: readonly Target[], ctx: Context): void {
  const cross = targets.filter((target) => target !== ctx.host);
  if ((ctx.port.env("DENORT_BIN") ?? "") === "" || cross.length === 0) return;
  ctx.port.printError(
    `note: DENORT_BIN is used for the host target "${ctx.host}" only; skipped for ${
      cross.join(", ")
    }`,
  );
}

function printProbe(resolutions: readonly Resolution[], port: CompilePort): number {
  for (const { target, source, detail } of resolutions) {
    port.print(`${target}  ${source}  ${detail}`);
  }
  if (resolutions.some((r) => r.mismatch)) return 1;
  return resolutions.every((r) => r.source !== "none") ? 0 : 2;
}

/** Prints why some target has no usable runtime; returns the exit code, or 0 to go on. */
function reportUnresolved(resolutions: readonly Resolution[], port: CompilePort): number {
  const mismatched = resolutions.filter((r) => r.mismatch);
  for (const { target, detail } of mismatched) {
    port.printError(`error: Cannot use the runtime of "${target}": ${detail} [compile.checksum]`);
  }
  if (mismatched.length > 0) {
    port.printError(`hint: delete the zip, or correct ${CHECKSUM_FILE}; nothing was built`);
    return 1;
  }
  const missing = resolutions.filter((r) => r.source === "none");
  for (const { target, tried } of missing) {
    port.printError(
      `error: No runtime for "${target}": tried ${tried.join("; ")} [compile.no-runtime]`,
    );
  }
  if (missing.length === 0) return 0;
  port.printError(
    "hint: set DENORT_BIN to the host's denort, or pre-seed the zip (docs/compile.md); " +
      "nothing was built",
  );
  return 2;
}

/** Builds one target and smoke-tests it when it is the host's; true when both succeeded. */
async function buildTarget(resolution: Resolution, file: string, ctx: Context): Promise<boolean> {
  const { target, source, detail } = resolution;
  const args = ["compile", "-A", "--no-check", "--frozen", "--target", target];
  // deno.json turns on lazy-dynamic-imports for a fast start, and deno compile honours it too: it
  // would embed only what mod.ts imports statically. Every module of src/ is a root of its own,
  // so the binary holds the whole CLI and the packages it imports (docs/start.md).
  // The binary's V8 heap settings (docs/memory.md).
  args.push(`--v8-flags=${LAUNCHER_V8_FLAGS}`);
  args.push("--include", "src", "--include", ctx.wasmPath(), "--output", file, "mod.ts");
  const denortBin = source === "DENORT_BIN" ? detail : null;
  const code = await ctx.port.runDeno(args, { cwd: ctx.root, denortBin });
  if (code !== 0) {
    ctx.port.printError(`error: Cannot build "${target}": deno compile exited ${code}`);
    return false;
  }
  if (target !== ctx.host) {
    ctx.port.print(`${target}  built  ${file}  smoke test not run (cross target)`);
    return true;
  }
  const failure = await smokeTest(file, ctx);
  if (failure === null) {
    ctx.port.print(`${target}  built  ${file}  smoke test passed`);
    return true;
  }
  await ctx.port.remove(file);
  ctx.port.printError(
    `error: ${file} did not behave like niceeval: ${failure}; the binary was deleted`,
  );
  return false;
}

/** `null` when the binary passes the smoke test of toolchain.md §9.5, else what went wrong. */
async function smokeTest(file: string, ctx: Context): Promise<string | null> {
  const expected = `${await readVersion(ctx)}\n`;
  const version = await ctx.port.runBinary(file, ["--version"], { cwd: ctx.root });
  if (version.code !== 0 || version.stdout !== expected) {
    return `\`--version\` exited ${version.code} and printed ${excerpt(version.stdout)}, ` +
      `expected ${JSON.stringify(expected)}`;
  }
  const list = await ctx.port.runBinary(file, ["list"], { cwd: join(ctx.root, SMOKE_PROJECT) });
  if (list.code !== 0 || !SMOKE_EVAL_REGEXP.test(list.stdout)) {
    return `\`list\` in ${SMOKE_PROJECT} exited ${list.code} without listing "smoke/hello" ` +
      `(stdout ${excerpt(list.stdout)}, stderr ${excerpt(list.stderr)})`;
  }
  return null;
}

async function readVersion(ctx: Context): Promise<string> {
  const bytes = await ctx.port.readFile(join(ctx.root, "deno.json"));
  const version = bytes === null ? undefined : JSON.parse(new TextDecoder().decode(bytes)).version;
  if (typeof version !== "string") throw new TypeError(`deno.json in "${ctx.root}" has no version`);
  return version;
}

function excerpt(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

function contextOf(options: CompileOptions): Context {
  const root = options.root ?? REPO_ROOT;
  const wasmPath = options.wasmPath;
  return {
    port: options.port ?? createSystemPort(),
    root,
    cwd: options.cwd ?? Deno.cwd(),
    host: options.host ?? Deno.build.target,
    denoVersion: options.denoVersion ?? Deno.version.deno,
    checksumFile: options.checksumFile ?? join(root, CHECKSUM_FILE),
    wasmPath: () => wasmPath ?? esbuildWasmPath(),
  };
}

/**
 * The esbuild.wasm file of the installed esbuild-wasm package, resolved exactly as the embedded
 * loader resolves it at run time, so the file `--include` embeds is the one the binary reads.
 */
export function esbuildWasmPath(): string {
  return fileURLToPath(import.meta.resolve("esbuild-wasm/esbuild.wasm"));
}

/** Options of {@link createSystemPort}. */
export interface SystemPortOptions {
  /** The environment seen by compile.ts and handed to its children. @default Deno.env.toObject() */
  readonly env?: Readonly<Record<string, string>>;
}

/** The production {@link CompilePort}, wired to Deno, the file system and the network. */
export function createSystemPort(options: SystemPortOptions = {}): CompilePort {
  const env = { ...(options.env ?? Deno.env.toObject()) };
  const encoder = new TextEncoder();
  return {
    env: (name) => env[name],
    denoDir: async () => {
      const result = await runProcess(Deno.execPath(), ["info", "--json"], { cwd: REPO_ROOT, env });
      const denoDir = result.code === 0 ? JSON.parse(result.stdout).denoDir : undefined;
      if (typeof denoDir !== "string") {
        throw new Error(`Cannot read DENO_DIR: deno info --json exited ${result.code}`);
      }
      return denoDir;
    },
    isFile: async (path) => (await unlessMissing(Deno.stat(path)))?.isFile ?? false,
    readFile: (path) => unlessMissing(Deno.readFile(path)),
    head: headStatus,
    runDeno: async (args, { cwd, denortBin }) => {
      const childEnv = withDenortBin(env, denortBin);
      // deno compile's own output goes straight to the user.
      return (await runProcess(Deno.execPath(), args, { cwd, env: childEnv, show: true })).code;
    },
    runBinary: (path, args, { cwd }) =>
      runProcess(path, args, { cwd, env: { ...env, NO_COLOR: "1" }, timeoutMs: SMOKE_TIMEOUT_MS }),
    makeDir: (path) => Deno.mkdir(path, { recursive: true }),
    remove: async (path) => void await unlessMissing(Deno.remove(path)),
    print: (line) => void Deno.stdout.writeSync(encoder.encode(`${line}\n`)),
    printError: (line) => void Deno.stderr.writeSync(encoder.encode(`${line}\n`)),
  };
}

/** The operation's result, or `null` when it failed because the file does not exist. */
async function unlessMissing<T>(operation: Promise<T>): Promise<T | null> {
  try {
    return await operation;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/** `env` with `DENORT_BIN` removed, or set to `denortBin` when one was chosen. */
function withDenortBin(
  env: Readonly<Record<string, string>>,
  denortBin: string | null,
): Record<string, string> {
  const { DENORT_BIN: _ignored, ...rest } = env;
  return denortBin === null ? rest : { ...rest, DENORT_BIN: denortBin };
}

/** HEAD request; rejects with "no answer within …" when the timeout fires first. */
async function headStatus(url: string, timeoutMs: number): Promise<number> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new Error(`no answer within ${timeoutMs / 1000} s`)),
    timeoutMs,
  );
  try {
    const response = await fetch(url, { method: "HEAD", signal: controller.signal });
    await response.body?.cancel();
    return response.status;
  } finally {
    clearTimeout(timer);
  }
}

/** Runs a program without input; its output is collected, or shown when `show` is set. */
async function runProcess(
  program: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number; show?: boolean },
): Promise<ProcessResult> {
  const controller = new AbortController();
  const timer = options.timeoutMs === undefined
    ? undefined
    : setTimeout(() => controller.abort(), options.timeoutMs);
  try {
    const output = await new Deno.Command(program, {
      args: [...args],
      cwd: options.cwd,
      env: options.env,
      clearEnv: true,
      stdin: "null",
      stdout: options.show ? "inherit" : "piped",
      stderr: options.show ? "inherit" : "piped",
      signal: controller.signal,
    }).output();
    const decoder = new TextDecoder();
    if (options.show) return { code: output.code, stdout: "", stderr: "" };
    return {
      code: output.code,
      stdout: decoder.decode(output.stdout),
      stderr: decoder.decode(output.stderr),
    };
  } finally {
    clearTimeout(timer);
  }
}

if (import.meta.main) {
  Deno.exit(await runCompile(Deno.args));
}
