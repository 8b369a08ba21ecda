/**
 * The `src/` domain rules of STYLE.md §1–§2: which domain may import which, surfaces through
 * `mod.ts`, private `_` files, value-import cycles among files, import cycles of any kind between
 * domains, and where each npm package may be imported.
 *
 * @module
 */

import { posix } from "node:path";
import type { DependencyRow, Problem, Project, SourceFile } from "./project.ts";
import { resolveSpecifier } from "./project.ts";

/** STYLE.md §2: the domains each domain may import values from (`*`: any). */
export const DEPENDENCY_TABLE: Readonly<Record<string, readonly string[] | "*">> = {
  _shared: [],
  coordination: ["_shared"],
  loader: ["_shared"],
  config: ["_shared", "loader"],
  discovery: ["_shared", "loader", "config"],
  plan: ["_shared", "config", "discovery"],
  scheduler: ["_shared", "plan", "coordination"],
  sandbox: ["_shared", "coordination"],
  agents: ["_shared", "sandbox"],
  expect: ["_shared", "agents"],
  attempt: ["_shared", "sandbox", "agents", "expect"],
  record: ["_shared", "plan", "expect", "coordination"],
  panel: ["_shared"],
  report: ["_shared", "expect", "record"],
  public: "*",
  cli: "*",
};

/** The domain folder of a `src/` path, or `null` outside `src/<domain>/`. */
export function domainOf(path: string): string | null {
  const parts = path.split("/");
  return parts[0] === "src" && parts.length > 2 ? parts[1]! : null;
}

function mayImportValues(from: string, to: string): boolean {
  if (to === "cli") return from === "cli";
  const allowed = DEPENDENCY_TABLE[from];
  return allowed === "*" || (allowed?.includes(to) ?? false);
}

/** The import surface of a domain: its mod.ts, or for `public/` its top-level entry files. */
function isSurface(domain: string, path: string): boolean {
  if (domain !== "public") return path === `src/${domain}/mod.ts`;
  const rest = path.slice("src/public/".length);
  return !rest.includes("/") && !rest.startsWith("_");
}

/** The first `_`-prefixed segment below the domain folder that `importer` may not reach into. */
function privateSegment(importer: string, target: string): string | null {
  const parts = target.split("/");
  // parts[0] is "src" and parts[1] the domain; a domain named `_shared` is not private.
  for (let i = 2; i < parts.length; i++) {
    if (!parts[i]!.startsWith("_")) continue;
    const folder = parts.slice(0, i).join("/");
    const importerDir = `${posix.dirname(importer)}/`;
    if (!importerDir.startsWith(`${folder}/`)) return parts.slice(0, i + 1).join("/");
  }
  return null;
}

/** Checks the imports of one `src/` file against STYLE.md §1.2 and §2. */
export function checkSrcImports(file: SourceFile, imports: Record<string, string>): Problem[] {
  const problems: Problem[] = [];
  const from = domainOf(file.path);
  const add = (line: number, message: string) =>
    problems.push({ path: file.path, message: `line ${line}: ${message}` });
  for (const ref of file.imports) {
    const resolved = resolveSpecifier(ref.specifier, { from: file.path, imports });
    if (resolved.kind === "self") {
      add(
        ref.line,
        `imports "${ref.specifier}": src/ never imports the niceeval* names (STYLE.md §2.2)`,
      );
      continue;
    }
    if (resolved.kind !== "file") continue;
    const target = resolved.path;
    if (!target.startsWith("src/")) {
      add(
        ref.line,
        `imports "${ref.specifier}" (${target}): src/ never imports tests/, scripts/, npm/, examples/ or other files outside src/ (STYLE.md §2.2)`,
      );
      continue;
    }
    const to = domainOf(target);
    if (from === null || to === null) continue;
    const kind = ref.typeOnly ? "type import" : "value import";
    if (from !== to) {
      if (!isSurface(to, target)) {
        const surface = to === "public" ? "a src/public/ entry file" : `src/${to}/mod.ts`;
        add(
          ref.line,
          `${kind} of ${target} reaches into another domain; import ${surface} instead (STYLE.md §2.1)`,
        );
        continue;
      }
      if (ref.typeOnly && to === "cli") {
        add(ref.line, `type import of ${target}: no other domain may import cli (STYLE.md §2.1)`);
      } else if (!ref.typeOnly && !mayImportValues(from, to)) {
        add(
          ref.line,
          `value import of ${target}: ${from} may not import ${to} (STYLE.md §2 dependency table${
            to === "cli" ? "" : "; use import type for types"
          })`,
        );
      }
      continue;
    }
    const hidden = privateSegment(file.path, target);
    if (hidden !== null) {
      add(ref.line, `${kind} of ${target}: ${hidden} is private to its folder (STYLE.md §1.2)`);
    }
  }
  return problems;
}

/** Finds value-import cycles among `src/` files (static imports and re-exports only). */
export function findCycles(project: Project): Problem[] {
  const graph = new Map<string, string[]>();
  const known = new Set(project.files.map((f) => f.path));
  for (const file of project.files) {
    if (!file.path.startsWith("src/")) continue;
    const edges: string[] = [];
    for (const ref of file.imports) {
      if (ref.typeOnly || ref.dynamic) continue;
      const resolved = resolveSpecifier(ref.specifier, {
        from: file.path,
        imports: project.imports,
      });
      if (
        resolved.kind === "file" && resolved.path.startsWith("src/") && known.has(resolved.path)
      ) {
        edges.push(resolved.path);
      }
    }
    graph.set(file.path, edges);
  }
  return stronglyConnected(graph).map((component) => {
    const cycle = cycleThrough(component, graph);
    return {
      path: cycle[0]!,
      message: `value-import cycle: ${cycle.join(" → ")} (STYLE.md §2.1)`,
    };
  });
}

/**
 * Finds import cycles between `src/` domains (STYLE.md §2.1): imports of every kind count, type-only
 * and dynamic included, so one type-only edge pointing back up is enough to report a cycle.
 * Reports one problem per strongly connected group of domains, on a shortest domain cycle through
 * its first domain, naming one importing file for each edge. An edge that `checkSrcImports`
 * already rejects (into a non-surface file, into `cli`, a value import against the table) is
 * reported there and left out here.
 */
export function findDomainCycles(project: Project): Problem[] {
  const graph = new Map<string, string[]>();
  /** `from → to` domain edge → the first importing file and its target, in path order. */
  const witness = new Map<string, string>();
  const files = project.files.filter((f) => f.path.startsWith("src/"));
  files.sort((a, b) => a.path.localeCompare(b.path));
  for (const file of files) {
    const from = domainOf(file.path);
    if (from === null) continue;
    if (!graph.has(from)) graph.set(from, []);
    for (const ref of file.imports) {
      const resolved = resolveSpecifier(ref.specifier, {
        from: file.path,
        imports: project.imports,
      });
      if (resolved.kind !== "file") continue;
      const to = domainOf(resolved.path);
      if (to === null || to === from || !isSurface(to, resolved.path)) continue;
      if (to === "cli" || (!ref.typeOnly && !mayImportValues(from, to))) continue;
      const key = `${from} → ${to}`;
      if (witness.has(key)) continue;
      witness.set(key, `${file.path} → ${resolved.path}`);
      graph.get(from)!.push(to);
    }
  }
  return stronglyConnected(graph).map((component) => {
    const cycle = cycleThrough(component, graph);
    const edges = cycle.slice(1).map((to, i) => witness.get(`${cycle[i]} → ${to}`)!);
    const more = component.length > cycle.length - 1
      ? `; the cycle group holds ${component.join(", ")}`
      : "";
    return {
      path: edges[0]!.split(" → ")[0]!,
      message: `cross-domain import cycle (type-only imports included): ${cycle.join(" → ")} via ${
        edges.join(", ")
      }${more} (STYLE.md §2.1)`,
    };
  });
}

/** Tarjan's algorithm; returns components that contain a cycle, each sorted. */
function stronglyConnected(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const result: string[][] = [];
  let counter = 0;
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) {
      result.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return result.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** A shortest cycle from the component's first node back to itself, as a path list. */
function cycleThrough(component: string[], graph: Map<string, string[]>): string[] {
  const start = component[0]!;
  const inside = new Set(component);
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const next of graph.get(node) ?? []) {
      if (!inside.has(next)) continue;
      if (next === start) {
        const path = [start];
        for (let n = node; n !== start; n = previous.get(n)!) path.splice(1, 0, n);
        return [...path, start];
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return [...component, start];
}

/** True when the file at `path` falls under one of a README row's Used-by entries. */
function isUsedByEntry(path: string, entry: string): boolean {
  if (entry === "tests") return path.startsWith("tests/") || path.startsWith("bench/");
  if (entry.includes("/") || entry.includes(".")) {
    const clean = entry.replace(/\/$/, "");
    return path === clean || path.startsWith(`${clean}/`);
  }
  return path.startsWith(`src/${entry}/`);
}

/** Checks that each package is imported only where its README row allows (toolchain.md §4.5). */
export function checkPackages(project: Project): Problem[] {
  const problems: Problem[] = [];
  const rows = project.dependencies ?? new Map<string, DependencyRow>();
  for (const [name, row] of rows) {
    for (const entry of row.usedBy) {
      const known = entry === "tests" || entry.includes("/") || entry.includes(".") ||
        Object.hasOwn(DEPENDENCY_TABLE, entry);
      if (!known) {
        problems.push({
          path: "README.md",
          message:
            `dependency "${name}" lists unknown user "${entry}" (a domain, tests, or a path)`,
        });
      }
    }
  }
  for (const file of project.files) {
    // Build scripts may use any mapped package (toolchain.md §2); compile.ts is one of them.
    if (file.path.startsWith("scripts/") || file.path === "compile.ts") continue;
    for (const ref of file.imports) {
      const resolved = resolveSpecifier(ref.specifier, {
        from: file.path,
        imports: project.imports,
      });
      if (resolved.kind !== "package") continue;
      const row = rows.get(resolved.name);
      if (row === undefined) {
        problems.push({
          path: file.path,
          message:
            `line ${ref.line}: package "${resolved.name}" has no row in the README dependency table (toolchain.md §4.5)`,
        });
      } else if (!row.usedBy.some((entry) => isUsedByEntry(file.path, entry))) {
        problems.push({
          path: file.path,
          message: `line ${ref.line}: package "${resolved.name}" may be imported only from ${
            row.usedBy.join(", ") || "nowhere"
          } (README dependency table, toolchain.md §4.5)`,
        });
      }
    }
  }
  return problems;
}
