/**
 * Typed projects (docs/install.md): the `deno.json` that `niceeval init --example` writes in a
 * fresh directory lets `deno check` type the user's files against the running clone, and lets
 * `deno run` import the four public entries. On a cold Deno cache both fetch the npm packages of
 * the clone's imports from the registry, so the child gets the host's TLS and proxy settings.
 */
import assert from "node:assert/strict";
import { EXAMPLE_FILES } from "../../src/cli/example_files.ts";
import { childEnv, tempProject } from "../_helpers/cli.ts";
import { runDeno } from "./_tree.ts";

/** The example's TypeScript files, as `deno check` takes them. */
const SOURCES = Object.keys(EXAMPLE_FILES).sort();

/**
 * The host's TLS and proxy settings: with a cold cache, `deno check` fetches the type packages of
 * the clone's dependencies from the npm registry, which this machine may reach only through them.
 */
function networkEnv(): Record<string, string> {
  const names = [
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "DENO_CERT",
    "DENO_TLS_CA_STORE",
    "NODE_EXTRA_CA_CERTS",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "no_proxy",
  ];
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

Deno.test("niceeval init --example: deno check types the project against the clone", async (t) => {
  await using p = await tempProject(null);
  const env = childEnv(p.stateDir, networkEnv());
  const check = () => runDeno(["check", ...SOURCES], { cwd: p.dir, env, clearEnv: true });

  await t.step("init --example writes deno.json", async () => {
    const r = await p.run(["init", "--example"]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.includes("created deno.json\n"), r.stdout);
  });

  await t.step("deno check passes on every eval, experiment, agent and the config", async () => {
    const r = await check();
    assert.equal(r.code, 0, r.stderr);
  });

  await t.step("deno check fails on a misspelt turn property and names it", async () => {
    const file = "evals/greet/hello.eval.ts";
    const text = await p.read(file);
    assert.ok(text.includes("turn.message"));
    await p.write(file, text.replace("turn.message", "turn.mesage"));
    const r = await check();
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Property 'mesage' does not exist/);
    assert.match(r.stderr, /evals\/greet\/hello\.eval\.ts:\d+:\d+/);
  });

  await t.step("deno run of a user file imports all four public entries", async () => {
    await p.write(
      "entries.ts",
      [
        'import { defineEval } from "niceeval";',
        'import { includes } from "niceeval/expect";',
        'import { scriptedAgent } from "niceeval/adapter";',
        'import * as sandbox from "niceeval/sandbox";',
        "console.log([defineEval, includes, scriptedAgent].map((f) => typeof f).join(' '));",
        "console.log(typeof sandbox);",
        "",
      ].join("\n"),
    );
    const r = await runDeno(["run", "entries.ts"], { cwd: p.dir, env, clearEnv: true });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "function function function\nobject\n");
  });
});
