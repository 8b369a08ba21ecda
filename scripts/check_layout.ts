/**
 * Layout and dependency-direction check (toolchain.md §2.9, STYLE.md §1–§4), run by
 * `deno task lint`.
 *
 * Usage: `deno run -A --frozen scripts/check_layout.ts [--root <dir>] [--sizes]`
 *
 * Prints one `path: message` line per problem and exits 1 when there is any, else 0.
 * `--sizes` adds the advisory size report of STYLE.md §3, which never fails.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import {
  checkPackages,
  checkSrcImports,
  DEPENDENCY_TABLE,
  findCycles,
  findDomainCycles,
} from "./_layout/domains.ts";
import { checkNames } from "./_layout/naming.ts";
import { loadProject, type Problem, type Project, type SourceFile } from "./_layout/project.ts";
import { sizeReport } from "./_layout/sizes.ts";

export type { Problem } from "./_layout/project.ts";

/** Options of {@link checkLayout}. */
export interface CheckLayoutOptions {
  /** Also compute the advisory size report. */
  sizes?: boolean;
}

/** What {@link checkLayout} found. */
export interface LayoutReport {
  /** Rule violations, sorted by path. */
  problems: Problem[];
  /** Advisory size lines (only with `sizes`). */
  sizes: string[];
  /** Number of code files inspected. */
  files: number;
}

const SANITIZER_OPTION_REGEXP = /^sanitize(Ops|Resources|Exit)$/;
const EXEMPT_REGEXP = /\/\/\s*sanitizer-exempt:\s*\S/;
const MODULE_DOC_REGEXP = /^\/\*\*[\s\S]*@module\b/;

/** Domain folders: known names, and a mod.ts in each except `public/` (STYLE.md §1.1, §1.3). */
function checkDomainFolders(project: Project): Problem[] {
  const problems: Problem[] = [];
  for (const entry of project.entries) {
    if (!entry.startsWith("src/")) continue;
    const parts = entry.split("/");
    if (entry.endsWith("/") && parts.length === 3) {
      const domain = parts[1]!;
      if (!Object.hasOwn(DEPENDENCY_TABLE, domain)) {
        problems.push({
          path: entry,
          message:
            "unknown domain folder; a new domain needs STYLE.md §1 and the §2 dependency table first",
        });
      } else if (domain !== "public" && !project.entries.includes(`src/${domain}/mod.ts`)) {
        problems.push({ path: entry, message: "domain folder has no mod.ts (STYLE.md §1.1)" });
      }
    } else if (!entry.endsWith("/") && parts.length === 2) {
      problems.push({ path: entry, message: "src/ holds only domain folders (STYLE.md §1)" });
    }
  }
  return problems;
}

/** True when the file opens (before any code) with a `/** … @module … *\/` comment. */
function opensWithModuleDoc(file: SourceFile): boolean {
  const firstCode = file.tokens[0]?.start ?? file.text.length;
  return file.comments.some((c) => c.start < firstCode && MODULE_DOC_REGEXP.test(c.text));
}

/** mod.ts files and public entries open with `@module`; only the root mod.ts uses `export *`. */
function checkSurfaces(file: SourceFile): Problem[] {
  const problems: Problem[] = [];
  const isModFile = file.path === "mod.ts" || (file.path.startsWith("src/") &&
    file.path.endsWith("/mod.ts"));
  const isPublicEntry = /^src\/public\/[^/]+\.ts$/.test(file.path);
  if ((isModFile || isPublicEntry) && !opensWithModuleDoc(file)) {
    problems.push({
      path: file.path,
      message: "does not open with a /** … @module */ comment (STYLE.md §1.1, §7)",
    });
  }
  if (file.path.startsWith("src/")) {
    for (const ref of file.imports) {
      if (!ref.exportStar) continue;
      problems.push({
        path: file.path,
        message:
          `line ${ref.line}: export * from "${ref.specifier}"; only the root mod.ts uses export *, domains list names (STYLE.md §1.1)`,
      });
    }
  }
  return problems;
}

/** Sanitizer exemptions need `// sanitizer-exempt: <reason>` on the line before (§5.4). */
function checkSanitizerExemptions(file: SourceFile): Problem[] {
  const problems: Problem[] = [];
  const lines = file.text.split("\n");
  const { tokens } = file;
  for (let i = 0; i + 2 < tokens.length; i++) {
    const t = tokens[i]!;
    const isOption = (t.kind === "name" || t.kind === "string") &&
      SANITIZER_OPTION_REGEXP.test(t.value);
    if (!isOption || tokens[i + 1]!.value !== ":" || tokens[i + 2]!.value !== "false") continue;
    if (tokens[i - 1]?.value === ".") continue;
    const before = lines[t.line - 2] ?? "";
    if (!EXEMPT_REGEXP.test(before)) {
      problems.push({
        path: file.path,
        message:
          `line ${t.line}: ${t.value}: false needs a "// sanitizer-exempt: <reason>" comment on the line before (toolchain.md §5.4)`,
      });
    }
  }
  return problems;
}

/** Runs every layout rule on the repository at `root`. */
export async function checkLayout(
  root: string,
  options: CheckLayoutOptions = {},
): Promise<LayoutReport> {
  const project = await loadProject(root);
  const problems = [...project.problems, ...checkNames(project.entries)];
  problems.push(...checkDomainFolders(project));
  for (const file of project.files) {
    problems.push(...checkSurfaces(file));
    if (file.path.startsWith("src/")) problems.push(...checkSrcImports(file, project.imports));
    problems.push(...checkSanitizerExemptions(file));
  }
  problems.push(...findCycles(project), ...findDomainCycles(project), ...checkPackages(project));
  problems.sort((a, b) => a.path.localeCompare(b.path));

  const sizes: string[] = [];
  if (options.sizes) {
    for (const file of project.files) {
      if (file.path.startsWith("tests/") || file.path.startsWith("bench/")) continue;
      sizes.push(...sizeReport(file));
    }
  }
  return { problems, sizes, files: project.files.length };
}

function parseArgs(args: string[]): { root: string; sizes: boolean } | string {
  let root = fileURLToPath(new URL("..", import.meta.url));
  let sizes = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--sizes") sizes = true;
    else if (arg === "--root" && args[i + 1] !== undefined) root = args[++i]!;
    else if (arg.startsWith("--root=")) root = arg.slice("--root=".length);
    else return `unknown argument "${arg}"`;
  }
  return { root, sizes };
}

async function writeAll(stream: { write(p: Uint8Array): Promise<number> }, text: string) {
  let bytes = new TextEncoder().encode(text);
  while (bytes.length > 0) bytes = bytes.subarray(await stream.write(bytes));
}

async function main(args: string[]): Promise<number> {
  const parsed = parseArgs(args);
  if (typeof parsed === "string") {
    const usage = "usage: check_layout.ts [--root <dir>] [--sizes]";
    await writeAll(Deno.stderr, `check_layout: ${parsed}\n${usage}\n`);
    return 2;
  }
  const report = await checkLayout(parsed.root, { sizes: parsed.sizes });
  let out = report.problems.map((p) => `${p.path}: ${p.message}\n`).join("");
  if (parsed.sizes) {
    out += `\nSize report (advisory, STYLE.md §3): ${report.sizes.length} notes\n`;
    out += report.sizes.map((line) => `  ${line}\n`).join("");
  }
  const count = report.problems.length;
  out += count === 0
    ? `check_layout: ${report.files} files OK\n`
    : `check_layout: ${count} problem${count === 1 ? "" : "s"} in ${report.files} files\n`;
  await writeAll(Deno.stdout, out);
  return count === 0 ? 0 : 1;
}

if (import.meta.main) {
  Deno.exitCode = await main(Deno.args);
}
