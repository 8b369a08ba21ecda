/**
 * Bad-input fuzzing of user files: seeded hostile config, eval, group and experiment files
 * (Proxies with throwing traps, revoked Proxies, throwing getters, throwing toString, BigInt,
 * symbols, cycles, huge arrays, forged brands, top-level throws of odd values, syntax errors).
 * Oracle: exit 2 with ERR-5 lines (one `error:` line per bad file, one `hint:`), never 3.
 * Discovery reports every bad file at once, so one CLI process checks a whole batch.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createSeededRandom } from "../_fakes/random.ts";
import { localProject } from "../cli/_project.ts";
import { tempProject } from "../_helpers/cli.ts";
import { usageErrorProblem } from "../_helpers/fuzz_record.ts";

const SEED = Number(Deno.env.get("NICEEVAL_FUZZ_SEED") ?? "20261202");
const HEADER =
  `import { defineConfig, defineEval, defineEvalGroup, defineExperiment } from "niceeval";
import { scriptedAgent } from "niceeval/adapter";
const trap = () => { throw new Error("trap"); };
const proxy = () => new Proxy({}, { get: trap, has: trap, getPrototypeOf: trap, ownKeys: trap,
  getOwnPropertyDescriptor: trap, apply: trap, construct: trap });
const revoked = () => { const r = Proxy.revocable({}, {}); r.revoke(); return r.proxy; };
const getter = (o) => Object.defineProperty(o, "test", { get: trap, enumerable: true });
const cyclic = () => { const a = { b: {} }; a.b.a = a; return a; };
const brand = (kind, o = {}) => Object.defineProperty(o, Symbol.for("niceeval.definition"),
  { value: Object.freeze({ kind, version: 1 }) });
const agent = () => scriptedAgent({ name: "a", script: [], fallback: { text: "hi" } });
`;

/** Values a hostile file may hand over. */
const VALUES = [
  "proxy()",
  "revoked()",
  "getter({})",
  "cyclic()",
  "10n",
  "Symbol('s')",
  "{ toString: trap, valueOf: trap, [Symbol.toPrimitive]: trap }",
  "new Array(200000).fill(0)",
  "Object.create(Object.freeze(Object.create(null)))",
  "null",
  "42",
  "'text'",
  "() => {}",
  "class X {}",
  "[proxy()]",
  "{ a: proxy() }",
  "brand('eval')",
  "brand('experiment')",
  "brand('config')",
  "brand('eval-group')",
  "brand('eval', proxy())",
  "brand('experiment', getter({}))",
  "brand('experiment', { agent: proxy() })",
  "brand('experiment', { agent: brand('agent') })",
  "Object.freeze(brand('eval', { evaluationKind: 'pass' }))",
  "new Proxy(defineEval({ test() {} }), { get: trap })",
  '{ "line\\nbreak": 1, test() {} }',
];

/** Whole-file shapes; `$` is a value of {@link VALUES}. */
const SHAPES = [
  "export default $;",
  "export default [$];",
  "export default { row: $ };",
  "throw $;",
  "export default defineEval($);",
  "export default defineEval({ test() {}, metadata: { x: $ } });",
  "export default defineEval({ test() {}, tags: $ });",
  "export default defineEvalGroup({ evals: $, onUnavailable: 'stop-group' });",
  "export default defineExperiment({ agent: $ });",
  "export default defineExperiment({ agent: agent(), flags: { x: $ } });",
  "export default defineExperiment({ agent: agent(), evals: $ });",
  "export default defineConfig($);",
  "export default defineConfig({ maxConcurrency: $ });",
  "export default $ )(;",
  "await Promise.reject($); export default 1;",
];

type Rng = ReturnType<typeof createSeededRandom>;
const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng.next() * items.length)]!;

function hostileFile(rng: Rng): string {
  return HEADER + pick(rng, SHAPES).replace("$", pick(rng, VALUES)) + "\n";
}

const GOOD_CONFIG = 'import { defineConfig } from "niceeval";\nexport default defineConfig({});\n';

function checkUsageError(
  r: { code: number; stderr: string },
  files: readonly string[],
  what: string,
) {
  assert.equal(r.code, 2, `${what}\n${r.stderr}`);
  assert.equal(usageErrorProblem(r.stderr), undefined, `${what}\n${r.stderr}`);
  for (const file of files) assert.ok(r.stderr.includes(file), `${what}: ${file} not reported`);
}

Deno.test("fuzz: hostile eval, group and experiment files are discovery errors, never exit 3", async () => {
  const rng = createSeededRandom(SEED);
  await using p = await tempProject(null);
  await p.write("niceeval.config.ts", GOOD_CONFIG);
  const files: string[] = [];
  for (let i = 0; i < 60; i++) files.push(`evals/fz${String(i).padStart(3, "0")}.eval.ts`);
  for (let i = 0; i < 6; i++) files.push(`evals/g${i}/eval-group.ts`);
  for (let i = 0; i < 40; i++) files.push(`experiments/fz${String(i).padStart(3, "0")}.ts`);
  for (const file of files) await p.write(file, hostileFile(rng));
  // Group directories need a member so that only the group file itself is bad.
  for (let i = 0; i < 6; i++) {
    await p.write(`evals/g${i}/m.eval.ts`, HEADER + "export default defineEval({ test() {} });\n");
  }
  const r = await p.run(["exp", "--dry"]);
  await Deno.stderr.write(
    new TextEncoder().encode(
      `fuzz_user_files: ${files.length} hostile eval, group and experiment files, seed ${SEED}` +
        "\n",
    ),
  );
  // A file the generator made harmless (a valid definition) is not reported; every other is.
  const reported = files.filter((f) => r.stderr.includes(`${f}: `));
  assert.ok(reported.length >= files.length * 0.6, `few reported:\n${r.stderr}`);
  checkUsageError(r, reported, `seed ${SEED}`);
});

/** Whole-config shapes; `$` is a value of {@link VALUES}. */
const CONFIG_SHAPES = [
  "export default $;",
  "throw $;",
  "export default defineConfig($);",
  "export default defineConfig({ maxConcurrency: $ });",
  "export default defineConfig({ pricing: { m: $ } });",
  "export default defineConfig({ ramp: $ });",
  "export default brand('config', { maxConcurrency: $ });",
  "export default brand('config', { pricing: $, maxSandboxes: $ });",
  "export default $ )(;",
];

/** `main()` in-process, failing (instead of hanging) if it never settles. */
async function runGuarded(
  p: Awaited<ReturnType<typeof localProject>>,
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    // A hang detector only: nothing waits for it to make anything happen.
    timer = setTimeout(() => reject(new Error(`niceeval ${args.join(" ")} hangs`)), 20_000);
  });
  try {
    return await Promise.race([p.run(args, { NICEEVAL_STATE_DIR: join(p.dir, ".state") }), hang]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("fuzz: hostile config files are config errors, never exit 3 or a hang", async () => {
  const rng = createSeededRandom(SEED + 1);
  const count = 40;
  for (let index = 0; index < count; index++) {
    await using p = await localProject(null);
    const text = HEADER + pick(rng, CONFIG_SHAPES).replaceAll("$", pick(rng, VALUES)) + "\n";
    await p.write("niceeval.config.ts", text);
    for (const args of [["list"], ["exp", "--dry"], ["exp"]]) {
      const r = await runGuarded(p, args);
      const what = `NICEEVAL_FUZZ_SEED=${SEED} config index ${index} ${args.join(" ")}:\n${
        text.split("\n").at(-2)
      }`;
      assert.ok([0, 1, 2].includes(r.code), `${what}\n${r.stderr}`);
      if (r.code !== 2) continue; // the generator made a valid config (nothing to run)
      assert.equal(usageErrorProblem(r.stderr), undefined, `${what}\n${r.stderr}`);
      if (args[0] === "list") {
        assert.match(r.stderr, /niceeval\.config\.ts: .*\[config[-.a-z]*\]/, what);
      }
    }
  }
  await Deno.stderr.write(
    new TextEncoder().encode(`fuzz_user_files: ${count} hostile config files, seed ${SEED}\n`),
  );
});

/** Definitions branded by hand: the brand is right, the values behind it are not. */
const FORGED: Record<string, string>[] = [
  { "niceeval.config.ts": "export default brand('config');" },
  { "niceeval.config.ts": "export default brand('config', { maxConcurrency: 'x', sandbox: 5 });" },
  { "evals/a.eval.ts": "export default brand('eval');" },
  { "evals/a.eval.ts": "export default brand('eval', { evaluationKind: 'pass', test() {} });" },
  { "evals/a.eval.ts": "export default brand('eval', { evaluationKind: 'zz', test: 5 });" },
  { "experiments/x.ts": "export default brand('experiment');" },
  { "experiments/x.ts": "export default brand('experiment', { agent: brand('agent') });" },
  { "experiments/x.ts": "export default brand('experiment', { agent: agent(), attempts: 'x' });" },
  { "evals/g/eval-group.ts": "export default brand('eval-group', { evals: 5 });" },
  { "evals/g/eval-group.ts": "export default brand('eval-group', { evals: [5] });" },
];

Deno.test("fuzz: forged definitions end as exit 2 (or a harmless run), never exit 3 or a hang", async () => {
  for (const [index, files] of FORGED.entries()) {
    await using p = await localProject(null);
    const project: Record<string, string> = {
      "niceeval.config.ts": "export default defineConfig({});",
      "evals/a.eval.ts": "export default defineEval({ test() {} });",
      "evals/g/m.eval.ts": "export default defineEval({ test() {} });",
      "experiments/x.ts": "export default defineExperiment({ agent: agent() });",
      ...files,
    };
    for (const [path, text] of Object.entries(project)) await p.write(path, HEADER + text + "\n");
    for (const args of [["list"], ["exp", "list"], ["exp", "--dry"], ["show"], ["exp"]]) {
      const r = await runGuarded(p, args);
      const what = `forged index ${index} ${args.join(" ")}: ${Object.values(files)[0]}`;
      assert.ok([0, 1, 2].includes(r.code), `${what}\n${r.stderr}`);
      if (r.code === 2) {
        assert.equal(usageErrorProblem(r.stderr), undefined, `${what}\n${r.stderr}`);
      }
    }
  }
});
