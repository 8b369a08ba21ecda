/**
 * The terminal experience of the real CLI (cli.md §5): the day-one example under a real
 * pseudo-terminal (`script` from util-linux) in live mode, Ctrl+C restoring the terminal, and plain
 * mode output that is stable and diffable.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { childEnv, MOD, REPO, type TempProject, tempProject } from "../_helpers/cli.ts";

const EXAMPLE = join(REPO, "examples", "keyless");
const COLUMNS = 100;
const ROWS = 30;
const HIDE = "\x1b[?25l";
const SHOW = "\x1b[?25h";
// deno-lint-ignore no-control-regex
const ESCAPE_REGEXP = /\x1b\[[0-9;?]*[A-Za-z]/g;
/** One control sequence, one other escape, or one printable code point. */
// deno-lint-ignore no-control-regex
const TOKEN_REGEXP = /\x1b\[[0-9;?]*[A-Za-z]|\x1b.|[^\x1b]/gsu;

async function hasScript(): Promise<boolean> {
  try {
    const { success } = await new Deno.Command("script", {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    })
      .output();
    return success;
  } catch {
    return false;
  }
}

const SCRIPT = await hasScript();
if (!SCRIPT) {
  // `script` ships with util-linux (Debian: bsdutils, an essential package), so CI always has it.
  await Deno.stderr.write(
    new TextEncoder().encode(
      "pseudo-terminal tests skipped: the `script` command of util-linux is not installed\n",
    ),
  );
}

/** A CLI child on a pseudo-terminal of COLUMNS × ROWS; `output` grows as the terminal prints. */
interface PtyRun {
  /** Everything the terminal received so far. */
  output(): string;
  /** Resolves once `output()` satisfies `until`; rejects after `timeoutMs` (a hang, not a claim). */
  waitFor(until: (text: string) => boolean, timeoutMs?: number): Promise<void>;
  /** Types into the terminal (`\x03` is Ctrl+C). */
  type(text: string): Promise<void>;
  /** Waits for the exit; returns the CLI's exit code. */
  exit(): Promise<number>;
}

function quote(arg: string): string {
  return `'${arg.replaceAll("'", `'"'"'`)}'`;
}

function ptyRun(p: TempProject, args: readonly string[], columns = COLUMNS): PtyRun {
  const cli = [Deno.execPath(), "run", "-A", "--frozen", MOD, ...args].map(quote).join(" ");
  const child = new Deno.Command("script", {
    args: ["-qefc", `stty cols ${columns} rows ${ROWS}; exec ${cli}`, "/dev/null"],
    cwd: p.dir,
    // A terminal with colour: no CI, NO_COLOR empty (unset).
    env: childEnv(p.stateDir, { TERM: "xterm-256color", NO_COLOR: "" }),
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdin = child.stdin.getWriter();
  let text = "";
  const decoder = new TextDecoder();
  const reading = (async () => {
    for await (const chunk of child.stdout) text += decoder.decode(chunk, { stream: true });
  })();
  const errors = new Response(child.stderr).text();
  return {
    output: () => text,
    waitFor: async (until, timeoutMs = 120_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!until(text)) {
        if (Date.now() > deadline) {
          throw new Error(`terminal never showed it; screen:\n${screen(text)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    type: (keys) => stdin.write(new TextEncoder().encode(keys)),
    exit: async () => {
      const status = await child.status;
      await stdin.close().catch(() => undefined);
      await reading;
      assert.equal(await errors, "", "script itself reported nothing");
      return status.code;
    },
  };
}

/**
 * What a terminal shows after `raw`: printable text, CR/LF, and the sequences niceeval and the
 * terminal use (cursor up, column, erase line, erase down); colours are ignored.
 */
function screen(raw: string): string {
  const lines: string[][] = [[]];
  let row = 0;
  let col = 0;
  const line = () => (lines[row] ??= []);
  const tokens = raw.match(TOKEN_REGEXP) ?? [];
  for (const token of tokens) {
    if (token === "\r") col = 0;
    else if (token === "\n") row++;
    else if (token.startsWith("\x1b[")) {
      const n = Number.parseInt(token.slice(2), 10);
      const op = token.at(-1);
      if (op === "A") row = Math.max(0, row - (Number.isNaN(n) ? 1 : n));
      else if (op === "G") col = Number.isNaN(n) || n === 0 ? 0 : n - 1;
      else if (op === "K") lines[row] = [];
      else if (op === "J") {
        lines[row] = line().slice(0, col);
        lines.length = row + 1;
      }
    } else if (!token.startsWith("\x1b")) {
      line()[col++] = token;
    }
  }
  return lines.map((cells) => Array.from(cells, (c) => c ?? " ").join("").trimEnd()).join("\n")
    .trimEnd();
}

function cursorShown(raw: string): boolean {
  return raw.lastIndexOf(SHOW) > raw.lastIndexOf(HIDE);
}

Deno.test({
  name:
    "niceeval exp: the example under a pseudo-terminal shows the PLAN box, the live counters and the headline, then restores the cursor exits 0",
  ignore: !SCRIPT,
  fn: async () => {
    await using p = await tempProject(EXAMPLE);
    const run = ptyRun(p, ["exp", "local"]);
    const code = await run.exit();
    const raw = run.output();
    const final = screen(raw);
    assert.equal(code, 0, final);
    assert.ok(raw.includes(HIDE), "the panel hid the cursor while it was up");
    assert.ok(cursorShown(raw), "the cursor is shown at the end");
    const plain = raw.replace(ESCAPE_REGEXP, "");
    assert.match(
      plain,
      /│ 4 total · 0 reused · \d running · \d queued · \d passed · 0 failed · 0 errored · 0 skipped +│/,
    );
    assert.match(
      final,
      /^╭─ PLAN ─+╮\n│ 4 attempts \(4 evals × 1 experiment\) · concurrency 4 \(from config\) +│\n╰─+╯\n/,
    );
    assert.match(
      final,
      /\n╭─ PASSED ─+ \d+\.\ds ─╮\n│ 4 passed · 0 failed · 0 errored {2}\(0 reused\) +│\n/,
    );
    assert.match(final, /\n│ local {2}4\/4 passed \(100%\) · \d+\.\ds · 21 new tok +│\n/);
    assert.ok(
      !final.includes("niceeval exp local"),
      `the live panel was erased for good:\n${final}`,
    );
    assert.ok(
      final.split("\n").every((l) => [...l].length <= COLUMNS),
      "nothing is wider than the terminal",
    );
  },
});

Deno.test({
  name:
    "issue 18.5: niceeval exp on a 50-column pseudo-terminal breaks end panels between words, run IDs and locators whole exits 1",
  ignore: !SCRIPT,
  fn: async () => {
    await using p = await tempProject(EXAMPLE);
    const run = ptyRun(p, ["exp"], 50);
    const code = await run.exit();
    const final = screen(run.output());
    assert.equal(code, 1, final);
    const lines = final.split("\n");
    assert.deepEqual(lines.filter((l) => [...l].length > 50), [], "nothing wider than 50");
    assert.match(
      final,
      /\n {2}niceeval show --run\n {4}[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}\n/,
    );
    assert.match(final, /\n {4}✗ @1[0-9A-Z]{12} {2}checks\/fail\n {6}deliberate-fail\/broken#0\n/);
  },
});

Deno.test({
  name:
    "niceeval exp: Ctrl+C under a pseudo-terminal shows the cleanup, ends INTERRUPTED and restores the cursor exits 130",
  ignore: !SCRIPT,
  fn: async () => {
    await using p = await tempProject("slow_project");
    const run = ptyRun(p, ["exp"]);
    await run.waitFor((text) => text.includes("running eval"));
    const before = run.output();
    assert.ok(
      before.includes(HIDE) && !cursorShown(before),
      "the cursor is hidden while the panel is up",
    );
    await run.type("\x03");
    const code = await run.exit();
    const raw = run.output();
    const final = screen(raw);
    assert.equal(code, 130, final);
    assert.ok(cursorShown(raw), "the cursor is shown after Ctrl+C");
    assert.ok(!final.includes("╭─ niceeval exp"), `the live panel was erased:\n${final}`);
    assert.match(final, /\n! interrupted — cleaning up \(Ctrl\+C again forces exit\)\n/);
    assert.match(final, /\n╭─ INTERRUPTED ─+ \d+\.\ds ─╮\n/);
    assert.match(final, /\n│ niceeval exp +│\n╰─+╯$/, "NEXT suggests running again");
  },
});

/** Masks what varies between runs: locators, run ids, temporary paths and durations. */
function mask(text: string): string {
  return text
    .replace(/@1[0-9A-Z]{12}/g, "@LOCATOR")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "RUN-ID")
    .replace(/\/\S*\/niceeval-demo-[0-9a-f]+/g, "DEMO-DIR")
    .replace(/ {2}\d+(\.\d)?s\n/g, "  DURATION\n")
    .replace(/ \d+(\.\d)?s(?=[ \n])/g, " DURATION")
    // A slow machine may print progress lines (issue 18.4); tests/e2e/progress_test.ts pins them.
    .replace(/^\d+\/\d+ · .* · ETA .*\n/gm, "");
}

/** Plain output of `exp` on a fresh copy of the example. */
async function plainRun(): Promise<{ code: number; text: string }> {
  await using p = await tempProject(EXAMPLE);
  // NO_COLOR stays empty: plain mode alone must keep the output free of escape sequences.
  const r = await p.run(["exp"], { env: { CI: "1", NO_COLOR: "" } });
  assert.equal(r.stderr, "");
  return { code: r.code, text: r.stdout };
}

Deno.test("niceeval exp: plain mode (CI) output of the example is append-only text that diffs cleanly between runs exits 1", async () => {
  const first = await plainRun();
  const second = await plainRun();
  assert.equal(first.code, 1);
  assert.equal(second.code, 1);
  assert.ok(!first.text.includes("\x1b"), "no ANSI sequences");
  assert.ok(!first.text.includes("\r"), "no carriage returns");
  assert.equal(mask(first.text), mask(second.text));
  assert.equal(
    mask(first.text),
    [
      "PLAN",
      "  6 attempts (6 evals across 3 experiments) · concurrency 4 (from config)",
      "✗ deliberate-fail/broken  checks/fail#0  failed  @LOCATOR",
      "    turn succeeded · expected completed · received failed · deterministic failure",
      "FAILED  DURATION",
      "  4 passed · 1 failed · 1 scored · 0 errored  (0 reused)",
      "  21 new tok",
      "RESULTS  3 experiments",
      "  checks/fail   0/1 passed (0%) · 1 failed · DURATION · 0 new tok",
      "    deliberate-fail/broken  0/1 passed · 1 failed",
      "  checks/score  score 2 · 1/1 complete · DURATION · 0 new tok",
      "  local         4/4 passed (100%) · DURATION · 21 new tok",
      "FAILURES  1 failed · 0 errored",
      "  turn succeeded · expected completed · received failed  (1×)",
      "    reason: deterministic failure",
      "    ✗ @LOCATOR  checks/fail  deliberate-fail/broken#0",
      "NEXT",
      "  niceeval show",
      "  niceeval show --run RUN-ID",
      "  niceeval show --run RUN-ID",
      "  niceeval show --run RUN-ID",
      "  niceeval exp --rerun",
      "",
    ].join("\n"),
  );
});

/** One `deno task demo` in plain mode; the directory it leaves behind is removed. */
async function plainDemo(): Promise<{ code: number; text: string }> {
  const stateDir = await Deno.makeTempDir({ prefix: "niceeval-state-" });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--frozen", join(REPO, "scripts", "demo.ts")],
      cwd: REPO,
      env: childEnv(stateDir, { CI: "1", NO_COLOR: "" }),
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.equal(new TextDecoder().decode(out.stderr), "");
    const dir = /^niceeval demo in (\S+)$/m.exec(text)?.[1];
    if (dir) await Deno.remove(dir, { recursive: true });
    return { code: out.code, text };
  } finally {
    await Deno.remove(stateDir, { recursive: true });
  }
}

Deno.test("niceeval exp: the demo in plain mode (CI) prints no ANSI and no carriage return, and two runs differ only in ids, paths and durations exits 0", async () => {
  // Two demos side by side: each has its own temporary project, Record and state directory.
  const [first, second] = await Promise.all([plainDemo(), plainDemo()]);
  assert.equal(first.code, 0, first.text);
  assert.equal(second.code, 0, second.text);
  for (const { text } of [first, second]) {
    assert.ok(!text.includes("\x1b"), "no ANSI sequences");
    assert.ok(!text.includes("\r"), "no carriage returns");
  }
  assert.equal(mask(first.text), mask(second.text));
  // The carried rerun is part of the demo: its PLAN says so and its headline counts the reuse.
  assert.match(
    mask(first.text),
    /\n\$ niceeval exp local {4}# run it again[^\n]*\nPLAN\n {2}4 attempts \(4 evals × 1 experiment\) · concurrency 4 \(from config\)\n {2}4 of 4 reused from earlier runs · 0 to run\nPASSED {2}DURATION\n {2}4 passed · 0 failed · 0 errored {2}\(4 reused\)\n/,
  );
});
