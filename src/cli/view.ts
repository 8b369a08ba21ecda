/**
 * `niceeval view` (issue 17, item 1): builds one self-contained HTML report of the results, writes
 * it atomically and prints its path; `--open` opens it, `--serve` serves it on 127.0.0.1 and
 * rebuilds it whenever a Run is published. Reads the Record, never writes it.
 */
import { dirname, isAbsolute, relative, resolve } from "node:path";
import { UsageError } from "../_shared/mod.ts";
import { RecordReader, redactedJson, writeTextAtomic } from "../record/mod.ts";
import { renderHtml, type ViewModel } from "../report/mod.ts";
import { DEFAULT_RECORD_ROOT } from "./exp_defaults.ts";
import { gatherView, type ViewSelection } from "./_view_gather.ts";
import type { Io } from "./io.ts";
import { checkRecordRoot, junitTarget } from "./path_flags.ts";
import { requireConfig } from "./project.ts";
import { openInBrowser } from "./_open.ts";
import { DEFAULT_REPORT_PATH } from "./view_flags.ts";
export { VIEW_FLAGS } from "./view_flags.ts";

/** Options of `view`. */
export interface ViewOptions extends ViewSelection {
  readonly out?: string;
  readonly open: boolean;
  readonly serve: boolean;
  readonly port?: number;
  readonly record?: string;
}

/** Runs `view`; exit 0 once the report is written (or, with `--serve`, once stopped). */
export async function runView(io: Io, options: ViewOptions): Promise<number> {
  checkUsage(options);
  const recordRoot = resolve(io.cwd, options.record ?? DEFAULT_RECORD_ROOT);
  await checkRecordRoot(recordRoot, options.record);
  if (options.runs.length === 0) await requireConfig(io.cwd);
  const out = await outPath(io, options);
  const build = async () => {
    const model = await gatherView(io, recordRoot, options);
    return { model, html: renderHtml(redactedJson(model, io.redactor), model.title) };
  };
  if (options.serve) return await serve(io, options, recordRoot, out, build);
  const { model, html } = await build();
  await write(io, out!, html);
  for (const p of model.problems) io.stderr.write(`! ${p.message}\n`);
  io.stdout.write(`${shownPath(io, out!)}\n`);
  io.stderr.write(`${summaryOf(model, html)}\n`);
  if (options.open) openOrWarn(io, out!);
  return 0;
}

function checkUsage(options: ViewOptions): void {
  if (options.runs.length > 0 && options.experiments.length > 0) {
    throw new UsageError(
      "usage",
      "--experiment applies to the project scope only, not with --run",
      "drop --experiment",
    );
  }
  if (options.port !== undefined && !options.serve) {
    throw new UsageError("usage", "--port applies to view --serve only", "add --serve");
  }
}

/** The report file: `--out`, else the default; null when `--serve` alone keeps it in memory. */
async function outPath(io: Io, options: ViewOptions): Promise<string | null> {
  if (options.out !== undefined) {
    return await junitTarget(io.cwd, options.out, { flag: "out", example: "report.html" });
  }
  if (options.serve) return null;
  const path = resolve(io.cwd, DEFAULT_REPORT_PATH);
  await Deno.mkdir(dirname(path), { recursive: true });
  return await junitTarget(io.cwd, DEFAULT_REPORT_PATH, { flag: "out", example: "report.html" });
}

async function write(io: Io, path: string, html: string): Promise<void> {
  await writeTextAtomic(path, html, io.random);
}

/** The path as the user would type it: relative inside the project, else absolute. */
function shownPath(io: Io, path: string): string {
  const rel = relative(io.cwd, path);
  return rel.startsWith("..") || isAbsolute(rel) ? path : rel;
}

function summaryOf(model: ViewModel, html: string): string {
  const bytes = new TextEncoder().encode(html).length;
  const size = bytes >= 1_000_000
    ? `${(bytes / 1_000_000).toFixed(1)} MB`
    : `${Math.max(1, Math.round(bytes / 1000))} kB`;
  const counts = [
    count(model.experiments.length, "experiment"),
    count(model.attempts.length, "Attempt"),
    count(model.runs.length, "Run"),
  ];
  return `report: ${counts.join(", ")} (${size})`;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function openOrWarn(io: Io, target: string): void {
  const problem = openInBrowser(io, target);
  if (problem !== null) io.stderr.write(`! could not open the report: ${problem}\n`);
}

/**
 * `--serve`: answers `GET /` with the report, rebuilt first when the set of published Runs
 * changed since the last build; stops on the first interrupt signal.
 */
async function serve(
  io: Io,
  options: ViewOptions,
  recordRoot: string,
  out: string | null,
  build: () => Promise<{ model: ViewModel; html: string }>,
): Promise<number> {
  let current = { signature: await signatureOf(recordRoot), ...await build() };
  if (out !== null) await write(io, out, current.html);
  let rebuilding: Promise<void> | null = null;
  const refresh = async () => {
    try {
      const signature = await signatureOf(recordRoot);
      if (signature === current.signature) return;
      current = { signature, ...await build() };
      if (out !== null) await write(io, out, current.html);
      io.stderr.write(`rebuilt ${summaryOf(current.model, current.html)}\n`);
    } catch (error) {
      // The last good report stays served; the next request tries again.
      io.stderr.write(`! could not rebuild the report: ${(error as Error).message}\n`);
    }
  };
  const { promise: listening, resolve: listened } = Promise.withResolvers<string>();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: options.port ?? 0,
    signal: io.interrupt,
    onListen: ({ port }) => listened(`http://127.0.0.1:${port}/`),
  }, async (request) => {
    const path = new URL(request.url).pathname;
    if (request.method !== "GET" && request.method !== "HEAD") {
      return new Response("method not allowed\n", { status: 405 });
    }
    if (path !== "/" && path !== "/index.html") return new Response("not found\n", { status: 404 });
    rebuilding ??= refresh().finally(() => rebuilding = null);
    await rebuilding;
    return new Response(current.html, {
      headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
    });
  });
  const url = await listening;
  io.stdout.write(`${url}\n`);
  io.stderr.write(`serving ${summaryOf(current.model, current.html)}; Ctrl-C stops\n`);
  if (options.open) openOrWarn(io, url);
  await server.finished;
  return 0;
}

/** The published Runs, by name: a new one (or one cleaned away) changes it. */
async function signatureOf(recordRoot: string): Promise<string> {
  const { published } = await new RecordReader(recordRoot).markers();
  return [...published].sort().join("\n");
}
