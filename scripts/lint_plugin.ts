/**
 * The niceeval `deno lint` plugin (toolchain.md §2.8): four rules that keep process access, time,
 * randomness, file locks and module specifiers behind their seams.
 *
 * Scope decisions use the linted file's path relative to the project root: the nearest ancestor
 * directory whose `deno.json`/`deno.jsonc` declares `lint.plugins` (this repository, or a test's
 * temporary project), else this repository. Fixture projects (`tests/fixtures/`) and `examples/`
 * are outside every rule.
 *
 * @module
 */

import { fileURLToPath } from "node:url";

type Node = Deno.lint.Node;
type Context = Deno.lint.RuleContext;

const PROCESS_SEAM = "src/cli/process.ts";
const CLOCK_SEAMS = ["src/_shared/clock.ts", "src/_shared/random.ts"];
const LOCK_SEAM = "src/coordination/lock.ts";
const PROCESS_MEMBERS = new Set(["args", "env", "exit", "addSignalListener", "build", "ppid"]);
const TIMER_GLOBALS = new Set(["setTimeout", "setInterval"]);
const LOCK_METHODS = new Set(["lock", "tryLock", "lockSync", "tryLockSync"]);
const GLOBAL_OBJECTS = new Set(["globalThis", "window", "self"]);
const SELF_NAME_REGEXP = /^niceeval(\/|$)/;
const FORBIDDEN_SCHEME_REGEXP = /^(npm|jsr|https?):/i;
const TS_TYPES_REGEXP = /@ts-types\s*=\s*["']([^"']+)["']/;

const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");

interface ProjectInfo {
  /** Absolute project root, without a trailing slash. */
  root: string;
  /** Keys of the `imports` map of the project's deno.json. */
  imports: string[];
}

/** Reads the `imports` keys and whether `lint.plugins` is declared; `null` when unreadable. */
function readConfig(path: string): { imports: string[]; hasPlugins: boolean } | null {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    return null;
  }
  try {
    const json = JSON.parse(stripJsonComments(text)) as {
      imports?: Record<string, unknown>;
      lint?: { plugins?: unknown };
    };
    return {
      imports: Object.keys(json.imports ?? {}),
      hasPlugins: Array.isArray(json.lint?.plugins) && json.lint.plugins.length > 0,
    };
  } catch {
    return null;
  }
}

/** Removes `//` and `/* … *\/` comments and trailing commas outside strings (for deno.jsonc). */
function stripJsonComments(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 2;
    } else {
      out += c;
      i++;
    }
  }
  return out.replace(/,(\s*[}\]])/g, "$1");
}

// Read once at plugin load (a synchronous read, as the linter loads plugins synchronously).
const repoConfig = readConfig(`${REPO_ROOT}/deno.json`);
const projectByDir = new Map<string, ProjectInfo>();

/** Finds the project a linted file belongs to (cached per directory). */
function projectOf(filename: string): ProjectInfo {
  const normalized = filename.replaceAll("\\", "/");
  let dir = normalized.slice(0, normalized.lastIndexOf("/"));
  const visited: string[] = [];
  let found: ProjectInfo | undefined;
  while (dir !== "" && found === undefined) {
    const cached = projectByDir.get(dir);
    if (cached !== undefined) {
      found = cached;
      break;
    }
    visited.push(dir);
    for (const name of ["deno.json", "deno.jsonc"]) {
      const config = dir === REPO_ROOT && name === "deno.json"
        ? repoConfig
        : readConfig(`${dir}/${name}`);
      if (config?.hasPlugins) {
        found = { root: dir, imports: config.imports };
        break;
      }
    }
    const parent = dir.slice(0, dir.lastIndexOf("/"));
    if (parent === dir) break;
    dir = parent;
  }
  found ??= { root: REPO_ROOT, imports: repoConfig?.imports ?? [] };
  for (const d of visited) projectByDir.set(d, found);
  return found;
}

/** The file's path relative to its project root, or `null` when it lies outside the root. */
function relativePath(ctx: Context): string | null {
  const filename = ctx.filename.replaceAll("\\", "/");
  const { root } = projectOf(filename);
  return filename.startsWith(`${root}/`) ? filename.slice(root.length + 1) : null;
}

/** True for fixture projects and examples, which no rule covers. */
function isOutsideEveryScope(rel: string | null): boolean {
  return rel !== null && (rel.startsWith("tests/fixtures/") || rel.startsWith("examples/"));
}

function inSrc(rel: string | null): rel is string {
  return rel !== null && rel.startsWith("src/");
}

/** The name of a global object reference: `X`, `globalThis.X`, `window.X` or `self.X`. */
function globalName(node: Node): string | null {
  if (node.type === "Identifier") return node.name;
  if (node.type === "MemberExpression" && node.object.type === "Identifier") {
    if (!GLOBAL_OBJECTS.has(node.object.name)) return null;
    return propertyName(node);
  }
  return null;
}

/** The static property name of a member expression (`a.b`, `a["b"]`), else `null`. */
function propertyName(node: Deno.lint.MemberExpression): string | null {
  const p = node.property;
  if (!node.computed && p.type === "Identifier") return p.name;
  if (node.computed && p.type === "Literal" && typeof p.value === "string") return p.value;
  return null;
}

/** The static key of an object-pattern property, else `null`. */
function keyName(node: Deno.lint.Property): string | null {
  const k = node.key;
  if (!node.computed && k.type === "Identifier") return k.name;
  if (k.type === "Literal" && typeof k.value === "string") return k.value;
  return null;
}

/** True when `node` is an identifier that names a property or a type, not a variable reference. */
function isNonReference(node: Deno.lint.Identifier): boolean {
  const parent = node.parent;
  switch (parent.type) {
    case "MemberExpression":
      return parent.property === node && !parent.computed;
    case "Property":
      return parent.key === node && !parent.computed && !parent.shorthand;
    case "MethodDefinition":
    case "PropertyDefinition":
    case "TSPropertySignature":
    case "TSMethodSignature":
    case "TSAbstractMethodDefinition":
    case "TSAbstractPropertyDefinition":
      return parent.key === node && !parent.computed;
    case "ImportSpecifier":
    case "ExportSpecifier":
    case "TSTypeQuery":
    case "TSQualifiedName":
    case "LabeledStatement":
    case "TSEnumMember":
      return true;
    default:
      return false;
  }
}

/** True when `node` declares a local binding (variable, parameter, import, function, class). */
function isBinding(node: Deno.lint.Identifier): boolean {
  const parent = node.parent;
  switch (parent.type) {
    case "VariableDeclarator":
      return parent.id === node;
    case "Property":
      return parent.parent.type === "ObjectPattern" && parent.value === node;
    case "ArrayPattern":
    case "RestElement":
      return true;
    case "AssignmentPattern":
      return parent.left === node;
    case "FunctionDeclaration":
    case "FunctionExpression":
    case "ArrowFunctionExpression":
      return (parent.params as Node[]).includes(node) ||
        ("id" in parent && parent.id === node);
    case "ClassDeclaration":
      return parent.id === node;
    case "ImportSpecifier":
    case "ImportDefaultSpecifier":
    case "ImportNamespaceSpecifier":
      return parent.local === node;
    case "CatchClause":
      return parent.param === node;
    default:
      return false;
  }
}

const processSeam: Deno.lint.Rule = {
  create(ctx) {
    const rel = relativePath(ctx);
    if (rel !== "mod.ts" && !inSrc(rel)) return {};
    if (rel === PROCESS_SEAM) return {};
    const report = (node: Node, member: string) =>
      ctx.report({
        node,
        message: `Deno.${member} is process access: only ${PROCESS_SEAM} may use it`,
        hint: `Take the value from the injected io (STYLE.md §8) instead of reading Deno.${member}`,
      });
    return {
      MemberExpression(node) {
        const member = propertyName(node);
        if (member === null || !PROCESS_MEMBERS.has(member)) return;
        if (globalName(node.object) === "Deno") report(node, member);
      },
      VariableDeclarator(node) {
        if (node.id.type !== "ObjectPattern" || node.init === null) return;
        if (globalName(node.init) !== "Deno") return;
        for (const prop of node.id.properties) {
          if (prop.type !== "Property") continue;
          const key = keyName(prop);
          if (key !== null && PROCESS_MEMBERS.has(key)) report(prop, key);
        }
      },
    };
  },
};

const clockSeam: Deno.lint.Rule = {
  create(ctx) {
    const rel = relativePath(ctx);
    if (!inSrc(rel) || CLOCK_SEAMS.includes(rel)) return {};
    const reported = new Set<number>();
    const timerReferences: Deno.lint.Identifier[] = [];
    const localNames = new Set<string>();
    const report = (node: Node, what: string) => {
      if (reported.has(node.range[0])) return;
      reported.add(node.range[0]);
      ctx.report({
        node,
        message: `${what} reads real time or randomness: only ${
          CLOCK_SEAMS.join(" and ")
        } may use it`,
        hint: "Use the injected Clock or Random (STYLE.md §9)",
      });
    };
    return {
      MemberExpression(node) {
        const member = propertyName(node);
        const object = globalName(node.object);
        if (
          (object === "Date" && member === "now") ||
          (object === "performance" && member === "now") ||
          (object === "Math" && member === "random")
        ) {
          report(node, `${object}.${member}`);
        } else if (
          member !== null && TIMER_GLOBALS.has(member) &&
          node.object.type === "Identifier" && GLOBAL_OBJECTS.has(node.object.name)
        ) {
          report(node, member); // globalThis.setTimeout and friends
        }
      },
      NewExpression(node) {
        if (node.arguments.length === 0 && globalName(node.callee) === "Date") {
          report(node, "new Date()");
        }
      },
      Identifier(node) {
        if (!TIMER_GLOBALS.has(node.name)) return;
        if (isBinding(node)) localNames.add(node.name);
        else if (!isNonReference(node)) timerReferences.push(node);
      },
      "Program:exit"() {
        // A file that binds its own `setTimeout` (say, destructured from a Clock) uses that one.
        for (const node of timerReferences) {
          if (!localNames.has(node.name)) report(node, node.name);
        }
      },
      ImportDeclaration(node) {
        const source = node.source.value;
        if (source !== "node:timers" && source !== "node:timers/promises") return;
        for (const spec of node.specifiers) {
          if (spec.type !== "ImportSpecifier") {
            report(spec, source);
            continue;
          }
          const imported = spec.imported.type === "Identifier"
            ? spec.imported.name
            : spec.imported.value;
          if (TIMER_GLOBALS.has(imported) || imported === "scheduler") {
            report(spec, `${imported} from ${source}`);
          }
        }
      },
    };
  },
};

const lockSeam: Deno.lint.Rule = {
  create(ctx) {
    const rel = relativePath(ctx);
    if (!inSrc(rel) || rel === LOCK_SEAM) return {};
    return {
      CallExpression(node) {
        if (node.callee.type !== "MemberExpression") return;
        const method = propertyName(node.callee);
        if (method === null || !LOCK_METHODS.has(method)) return;
        ctx.report({
          node,
          message: `.${method}() takes a file lock: only ${LOCK_SEAM} may call it`,
          hint: "Use tryAcquireLock() from src/coordination/mod.ts (toolchain.md §6)",
        });
      },
    };
  },
};

/** Why `specifier` is not allowed in the file at `rel`, or `null` when it is fine. */
function specifierProblem(specifier: string, rel: string | null, imports: string[]): string | null {
  if (specifier.startsWith("./") || specifier.startsWith("../")) return null;
  if (specifier.startsWith("node:") || specifier.startsWith("data:")) return null;
  if (FORBIDDEN_SCHEME_REGEXP.test(specifier)) {
    return `"${specifier}" is a remote specifier: map the package in deno.json imports (as an npm: specifier) and import its bare name`;
  }
  if (SELF_NAME_REGEXP.test(specifier)) {
    const allowed = rel === null || rel === "npm/entry.ts" || rel.startsWith("tests/");
    return allowed
      ? null
      : `"${specifier}" is a niceeval self-mapping: only npm/entry.ts, tests, examples and fixture projects may import it; use a relative import`;
  }
  if (specifier.startsWith("/") || /^[a-z][a-z0-9+.-]*:/i.test(specifier)) {
    return `"${specifier}" is neither relative, node:, nor a bare name mapped in deno.json imports`;
  }
  const mapped = imports.some((key) =>
    key === specifier ||
    (key.endsWith("/") ? specifier.startsWith(key) : specifier.startsWith(`${key}/`))
  );
  return mapped
    ? null
    : `"${specifier}" is not mapped in deno.json imports: add it (and a README dependency row) or use a relative import`;
}

/** The string value of a literal specifier node (string or expression-less template). */
function literalValue(node: Node | null | undefined): string | null {
  if (node === null || node === undefined) return null;
  if (node.type === "Literal" && typeof node.value === "string") return node.value;
  if (node.type === "TemplateLiteral" && node.expressions.length === 0) {
    return node.quasis[0]?.cooked ?? null;
  }
  if (node.type === "TSLiteralType") return literalValue(node.literal);
  return null;
}

const specifierHygiene: Deno.lint.Rule = {
  create(ctx) {
    const rel = relativePath(ctx);
    if (isOutsideEveryScope(rel)) return {};
    const { imports } = projectOf(ctx.filename);
    const check = (node: Node, source: Node | null | undefined) => {
      const specifier = literalValue(source);
      if (specifier === null) return;
      const problem = specifierProblem(specifier, rel, imports);
      if (problem !== null) {
        ctx.report({
          node,
          message: problem,
          hint:
            "Imports are relative, node:, or bare names mapped in deno.json (toolchain.md §4.1)",
        });
      }
    };
    return {
      Program() {
        for (const comment of ctx.sourceCode.getAllComments()) {
          const match = TS_TYPES_REGEXP.exec(comment.value);
          if (match === null) continue;
          const problem = specifierProblem(match[1]!, rel, imports);
          if (problem !== null) ctx.report({ range: comment.range, message: problem });
        }
      },
      ImportDeclaration(node) {
        check(node, node.source);
      },
      ExportNamedDeclaration(node) {
        check(node, node.source);
      },
      ExportAllDeclaration(node) {
        check(node, node.source);
      },
      ImportExpression(node) {
        check(node, node.source);
      },
      TSImportType(node) {
        check(node, node.argument);
      },
      TSExternalModuleReference(node) {
        check(node, node.expression);
      },
    };
  },
};

export default {
  name: "niceeval",
  rules: {
    "process-seam": processSeam,
    "clock-seam": clockSeam,
    "lock-seam": lockSeam,
    "specifier-hygiene": specifierHygiene,
  },
} satisfies Deno.lint.Plugin;
