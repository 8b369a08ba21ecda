/** Dependencies (toolchain.md §4): README table, deno.json imports and allowed majors agree. */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseDependencyTable } from "../../scripts/_layout/project.ts";
import { REPO_ROOT } from "./_tree.ts";

const SELF_NAME_REGEXP = /^niceeval(\/|$)/;
/** toolchain.md §4.3: majors compatible with Node 20; the next major of each needs Node 22. */
const ALLOWED_MAJORS: Record<string, number> = {
  "commander": 14,
  "string-width": 8,
  "log-update": 7,
  "p-queue": 9,
  "p-retry": 7,
  "p-timeout": 7,
  "puppeteer-core": 24,
};

async function thirdPartyImports(): Promise<Record<string, string>> {
  const config = JSON.parse(await readFile(join(REPO_ROOT, "deno.json"), "utf8")) as {
    imports: Record<string, string>;
  };
  return Object.fromEntries(
    Object.entries(config.imports).filter(([name]) => !SELF_NAME_REGEXP.test(name)),
  );
}

async function readmeRows(): Promise<Array<{ name: string; specifier: string }>> {
  const readme = await readFile(join(REPO_ROOT, "README.md"), "utf8");
  const table = parseDependencyTable(readme);
  assert.ok(table !== null, "README.md has no ## Dependencies table with Bare name and Used by");
  // The specifier column is read directly: `| \`name\` | \`npm:…\` | … |`.
  const specifiers = new Map<string, string>();
  for (const line of readme.split("\n")) {
    const cells = line.split("|").map((c) => c.trim().replaceAll("`", ""));
    if (cells.length > 3 && table.has(cells[1]!)) specifiers.set(cells[1]!, cells[2]!);
  }
  return [...table.keys()].map((name) => ({ name, specifier: specifiers.get(name) ?? "" }));
}

Deno.test("README dependency table and deno.json imports list the same packages", async () => {
  const imports = await thirdPartyImports();
  const rows = await readmeRows();
  assert.deepEqual(rows.map((r) => r.name).sort(), Object.keys(imports).sort());
  for (const row of rows) {
    assert.equal(row.specifier, imports[row.name], `README specifier of "${row.name}"`);
  }
});

Deno.test("every deno.json import of a package is an npm: specifier", async () => {
  for (const [name, specifier] of Object.entries(await thirdPartyImports())) {
    assert.match(specifier, /^npm:/, `"${name}" maps to "${specifier}"`);
    assert.ok(
      specifier.startsWith(`npm:${name}@`),
      `"${name}" maps to "${specifier}", not to the npm package of the same name`,
    );
  }
});

Deno.test("packages stay on majors compatible with Node 20", async () => {
  const imports = await thirdPartyImports();
  for (const required of ["commander", "string-width"]) {
    assert.ok(required in imports, `"${required}" is not mapped in deno.json`);
  }
  for (const [name, major] of Object.entries(ALLOWED_MAJORS)) {
    const specifier = imports[name];
    if (specifier === undefined) continue;
    const match = /^npm:(?:@[^/@]+\/)?[^@]+@\^?(\d+)(?:\.\d+)*$/.exec(specifier);
    assert.ok(match !== null, `"${name}" maps to "${specifier}", which pins no single major`);
    assert.equal(Number(match[1]), major, `"${name}" must stay on major ${major} (Node 20)`);
  }
});
