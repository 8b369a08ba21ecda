import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { VERSION } from "../../src/_shared/mod.ts";
import { EXAMPLE_FILES, MINIMAL_CONFIG } from "../../src/cli/example_files.ts";
import type { Io } from "../../src/cli/io.ts";
import { main } from "../../src/cli/main.ts";
import type { ApiUrls } from "../../src/loader/mod.ts";
import { createFakeIo } from "../_fakes/io.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

function withDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  return withTempDir(fn, "niceeval-init-");
}

async function names(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) out.push(entry.name);
  return out.sort();
}

/** The repository root, a clone of niceeval. */
const REPO = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");

/** Entry URLs of the four public entries below `base` with the given file names. */
function urls(base: string, files: readonly [string, string, string, string]): ApiUrls {
  return {
    "niceeval": `${base}/${files[0]}`,
    "niceeval/expect": `${base}/${files[1]}`,
    "niceeval/adapter": `${base}/${files[2]}`,
    "niceeval/sandbox": `${base}/${files[3]}`,
  };
}

const SRC_FILES = [
  "mod.ts",
  "src/public/expect.ts",
  "src/public/adapter.ts",
  "src/public/sandbox.ts",
] as const;
/** The running niceeval as a clone (this repository). */
const CLONE_URLS = urls(`file://${REPO}`, SRC_FILES);
/** The running niceeval as a JSR install of version 0.3.1. */
const JSR_URLS = urls("https://jsr.io/@niceeval/cli/0.3.1", SRC_FILES);
/** The running niceeval as the npm package of a project. */
const NPM_URLS = urls("file:///home/u/p/node_modules/niceeval/dist", [
  "mod.js",
  "expect.js",
  "adapter.js",
  "sandbox.js",
]);

/** The import map a clone of this version writes. */
const CLONE_IMPORTS = {
  "niceeval": `jsr:@niceeval/cli@^${VERSION}`,
  "niceeval/expect": `jsr:@niceeval/cli@^${VERSION}/expect`,
  "niceeval/adapter": `jsr:@niceeval/cli@^${VERSION}/adapter`,
  "niceeval/sandbox": `jsr:@niceeval/cli@^${VERSION}/sandbox`,
};

async function init(dir: string, ...flags: string[]) {
  return await initWith(undefined, dir, ...flags);
}

async function initWith(apiUrls: ApiUrls | undefined, dir: string, ...flags: string[]) {
  const fake = createFakeIo({ cwd: dir });
  const io: Io = apiUrls === undefined ? fake : { ...fake, apiUrls };
  const code = await main(["init", ...flags], io);
  return { code, stdout: fake.stdout.text(), stderr: fake.stderr.text() };
}

async function readJson(path: string): Promise<unknown> {
  return JSON.parse(await Deno.readTextFile(path));
}

Deno.test("runInit() creates the config and both directories (CMD-3)", async () => {
  await withDir(async (dir) => {
    const r = await init(dir);
    assert.equal(r.code, 0);
    assert.equal(r.stderr, "");
    assert.deepEqual(r.stdout.split("\n").slice(0, 3), [
      "created evals",
      "created experiments",
      "created niceeval.config.ts",
    ]);
    assert.match(r.stdout.split("\n").at(-2)!, /^next: /);
    assert.equal(await Deno.readTextFile(join(dir, "niceeval.config.ts")), MINIMAL_CONFIG);
    assert.ok((await Deno.stat(join(dir, "evals"))).isDirectory);
    assert.ok((await Deno.stat(join(dir, "experiments"))).isDirectory);
    assert.match(MINIMAL_CONFIG, /export default defineConfig\(\{\}\);/);
    assert.match(MINIMAL_CONFIG, /experiments/);
  });
});

Deno.test("runInit() keeps existing files untouched (CMD-3)", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "niceeval.config.ts"), "// mine\n");
    const r = await init(dir);
    assert.equal(r.code, 0);
    assert.ok(r.stdout.includes("kept niceeval.config.ts (exists)\n"));
    assert.ok(r.stdout.includes("created evals\n"));
    assert.equal(await Deno.readTextFile(join(dir, "niceeval.config.ts")), "// mine\n");
  });
});

Deno.test("runInit() exits 2 when a path exists with the wrong type (CMD-3)", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "evals"), "");
    const r = await init(dir);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, "");
    assert.equal(
      r.stderr,
      "error: evals exists but is a file, not a directory [usage]\n" +
        "hint: move evals out of the way, then run niceeval init again\n",
    );
    assert.deepEqual(await names(dir), ["evals"]);
  });
});

Deno.test("runInit() exits 2, not 3, when a parent of an example file is a file (CMD-4)", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "agents"), "");
    const r = await init(dir, "--example");
    assert.equal(r.code, 2);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^error: agents exists but is a file, not a directory \[usage\]\n/);
    assert.deepEqual(await names(dir), ["agents"]);
  });
});

Deno.test("runInit() does not write through a dangling symlink", async () => {
  await withDir(async (dir) => {
    await Deno.symlink(join(dir, "elsewhere.ts"), join(dir, "niceeval.config.ts"));
    const r = await init(dir);
    assert.equal(r.code, 0);
    assert.ok(r.stdout.includes("kept niceeval.config.ts (exists)\n"));
    await assert.rejects(Deno.stat(join(dir, "elsewhere.ts")), Deno.errors.NotFound);
  });
});

Deno.test("runInit() writes every example file with --example (CMD-4)", async () => {
  await withDir(async (dir) => {
    const r = await init(dir, "--example");
    assert.equal(r.code, 0);
    for (const [path, text] of Object.entries(EXAMPLE_FILES)) {
      assert.equal(await Deno.readTextFile(join(dir, path)), text, path);
      assert.ok(r.stdout.includes(`created ${path}\n`), path);
    }
    assert.ok(r.stdout.endsWith("next: niceeval exp\n"));
  });
});

Deno.test("runInit() maps niceeval to the running clone through links in a new deno.json", async () => {
  await withDir(async (dir) => {
    const r = await initWith(CLONE_URLS, dir);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.split("\n").slice(3, 5), ["created deno.json", "created .gitignore"]);
    assert.deepEqual(await readJson(join(dir, "deno.json")), {
      imports: CLONE_IMPORTS,
      links: [REPO],
    });
    assert.equal(await Deno.readTextFile(join(dir, ".gitignore")), ".niceeval/\n");
  });
});

Deno.test("runInit() maps niceeval to the exact JSR version the CLI runs from", async () => {
  await withDir(async (dir) => {
    const r = await initWith(JSR_URLS, dir);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await readJson(join(dir, "deno.json")), {
      imports: {
        "niceeval": "jsr:@niceeval/cli@0.3.1",
        "niceeval/expect": "jsr:@niceeval/cli@0.3.1/expect",
        "niceeval/adapter": "jsr:@niceeval/cli@0.3.1/adapter",
        "niceeval/sandbox": "jsr:@niceeval/cli@0.3.1/sandbox",
      },
    });
  });
});

Deno.test("runInit() writes no deno.json under the npm package and says why", async () => {
  await withDir(async (dir) => {
    const r = await initWith(NPM_URLS, dir);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(
      r.stdout.includes(
        "note: no niceeval entries for deno.json: under the npm package, package.json resolves niceeval\n",
      ),
      r.stdout,
    );
    assert.deepEqual(await names(dir), [
      ".gitignore",
      "evals",
      "experiments",
      "niceeval.config.ts",
    ]);
  });
});

Deno.test("runInit() writes no import map entries without entry URLs and says so", async () => {
  await withDir(async (dir) => {
    const r = await init(dir);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.split("\n").slice(3), [
      "note: no niceeval entries for deno.json: this niceeval did not report its entry URLs",
      "created .gitignore",
      "next: add an experiment under experiments/ and an eval under evals/, then run niceeval exp",
      "",
    ]);
    await assert.rejects(Deno.stat(join(dir, "deno.json")), Deno.errors.NotFound);
  });
});

Deno.test("runInit() adds only missing keys to an existing deno.json and keeps the user's mapping", async () => {
  await withDir(async (dir) => {
    const mine = {
      tasks: { dev: "deno run main.ts" },
      imports: { "niceeval": "./vendor/niceeval/mod.ts", "zod": "npm:zod@^4" },
      links: ["../lib"],
    };
    await Deno.writeTextFile(join(dir, "deno.json"), JSON.stringify(mine, null, 4));
    const r = await initWith(CLONE_URLS, dir);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.includes("updated deno.json\n"), r.stdout);
    assert.ok(
      r.stdout.includes(
        `note: kept your own mapping of niceeval (this niceeval is "jsr:@niceeval/cli@^${VERSION}")\n`,
      ),
      r.stdout,
    );
    const text = await Deno.readTextFile(join(dir, "deno.json"));
    assert.match(text, /^\{\n {4}"tasks"/, "keeps the file's indentation");
    assert.deepEqual(JSON.parse(text), {
      tasks: { dev: "deno run main.ts" },
      imports: { ...CLONE_IMPORTS, "niceeval": "./vendor/niceeval/mod.ts", "zod": "npm:zod@^4" },
      links: ["../lib", REPO],
    });
  });
});

Deno.test("runInit() keeps a deno.json that already maps niceeval to the running clone", async () => {
  await withDir(async (dir) => {
    assert.equal((await initWith(CLONE_URLS, dir)).code, 0);
    const before = await Deno.readTextFile(join(dir, "deno.json"));
    const r = await initWith(CLONE_URLS, dir);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.includes("kept deno.json (exists)\nkept .gitignore (exists)\n"), r.stdout);
    assert.equal(await Deno.readTextFile(join(dir, "deno.json")), before);
  });
});

Deno.test("runInit() merges a plain-JSON deno.jsonc in place and writes no deno.json", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "deno.jsonc"), '{ "lock": false }\n');
    const r = await initWith(JSR_URLS, dir);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.includes("updated deno.jsonc\n"), r.stdout);
    const config = await readJson(join(dir, "deno.jsonc")) as Record<string, unknown>;
    assert.equal(config.lock, false);
    assert.deepEqual(Object.keys(config.imports as object), [
      "niceeval",
      "niceeval/expect",
      "niceeval/adapter",
      "niceeval/sandbox",
    ]);
    await assert.rejects(Deno.stat(join(dir, "deno.json")), Deno.errors.NotFound);
  });
});

Deno.test("runInit() keeps a deno.jsonc with comments untouched and prints the lines to add", async () => {
  await withDir(async (dir) => {
    const mine = '{\n  // my project\n  "imports": { "zod": "npm:zod@^4" },\n}\n';
    await Deno.writeTextFile(join(dir, "deno.jsonc"), mine);
    const r = await initWith(CLONE_URLS, dir);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await Deno.readTextFile(join(dir, "deno.jsonc")), mine);
    const start = r.stdout.indexOf("kept deno.jsonc");
    assert.equal(
      r.stdout.slice(start, r.stdout.indexOf("created .gitignore")),
      [
        "kept deno.jsonc (not plain JSON); add these lines to it:",
        '  "imports": {',
        `    "niceeval": "jsr:@niceeval/cli@^${VERSION}",`,
        `    "niceeval/expect": "jsr:@niceeval/cli@^${VERSION}/expect",`,
        `    "niceeval/adapter": "jsr:@niceeval/cli@^${VERSION}/adapter",`,
        `    "niceeval/sandbox": "jsr:@niceeval/cli@^${VERSION}/sandbox"`,
        "  },",
        '  "links": [',
        `    "${REPO}"`,
        "  ],",
        "",
      ].join("\n"),
    );
  });
});

Deno.test("runInit() appends .niceeval/ to an existing .gitignore only when it is missing", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, ".gitignore"), "node_modules/\n*.log");
    const first = await init(dir);
    assert.ok(first.stdout.includes("updated .gitignore\n"), first.stdout);
    assert.equal(
      await Deno.readTextFile(join(dir, ".gitignore")),
      "node_modules/\n*.log\n.niceeval/\n",
    );
    await Deno.writeTextFile(join(dir, ".gitignore"), "/.niceeval\n");
    const second = await init(dir);
    assert.ok(second.stdout.includes("kept .gitignore (exists)\n"), second.stdout);
    assert.equal(await Deno.readTextFile(join(dir, ".gitignore")), "/.niceeval\n");
  });
});

Deno.test("runInit() exits 2 when deno.json is a directory", async () => {
  await withDir(async (dir) => {
    await Deno.mkdir(join(dir, "deno.json"));
    const r = await initWith(CLONE_URLS, dir);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^error: deno\.json exists but is a directory, not a file \[usage\]\n/);
    assert.deepEqual(await names(dir), ["deno.json"]);
  });
});
