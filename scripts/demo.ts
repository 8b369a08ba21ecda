/**
 * `deno task demo` (toolchain.md §3.4): copies examples/keyless into a temporary directory and runs
 * the day-one session end to end, checking every exit code. Exits 0 only when all steps behaved.
 */
import { cp } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const encoder = new TextEncoder();
const say = (text: string) => Deno.stdout.writeSync(encoder.encode(text + "\n"));
const repo = fileURLToPath(new URL("../", import.meta.url));
const dir = await Deno.makeTempDir({ prefix: "niceeval-demo-" });
await cp(join(repo, "examples", "keyless"), dir, { recursive: true });

const steps: { args: string[]; expect: number; why: string }[] = [
  { args: ["list"], expect: 0, why: "discover the example's evals" },
  { args: ["exp", "local"], expect: 0, why: "run the local experiment: every Attempt passes" },
  { args: ["exp", "local"], expect: 0, why: "run it again: every slot is carried from the Record" },
  { args: ["exp", "checks/fail"], expect: 1, why: "a deliberately failing eval exits 1" },
  { args: ["show"], expect: 0, why: "render the project's current results" },
];

const env = { ...Deno.env.toObject(), NICEEVAL_STATE_DIR: join(dir, ".state") };
let ok = true;
say(`niceeval demo in ${dir}\n`);
for (const step of steps) {
  say(`$ niceeval ${step.args.join(" ")}    # ${step.why}`);
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--frozen", join(repo, "mod.ts"), ...step.args],
    cwd: dir,
    env,
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  const mark = code === step.expect ? "ok" : "UNEXPECTED";
  say(`[exit ${code}, expected ${step.expect}: ${mark}]\n`);
  ok &&= code === step.expect;
}
say(
  ok
    ? `demo passed; the project stays in ${dir}`
    : "demo FAILED: a step returned an unexpected exit code",
);
Deno.exit(ok ? 0 : 1);
