/**
 * Runs inside the loopback-only namespace (see agent_cli.ts): reads its config from stdin,
 * starts the fake model servers (by name; `""` is the unnamed one), runs niceeval to its end,
 * lists surviving marked processes and prints one JSON line with everything.
 */
import { childEnv, MOD } from "./cli.ts";

interface Fake extends AsyncDisposable {
  readonly baseUrl: string;
  readonly requests: unknown[];
}

interface FakeRef {
  readonly module: string;
  readonly factory: string;
  readonly args: unknown[];
}

const config = JSON.parse(await new Response(Deno.stdin.readable).text());
const fakes = new Map<string, Fake>();
let result;
try {
  for (const [name, ref] of Object.entries(config.fakes as Record<string, FakeRef>)) {
    const mod = await import(ref.module);
    fakes.set(name, mod[ref.factory](...ref.args));
  }
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(config.env as Record<string, string>)) {
    env[k] = v.replaceAll(/\{\{baseUrl(?::([^}]+))?\}\}/g, (whole, name?: string) => {
      const fake = fakes.get(name ?? "");
      if (!fake) throw new Error(`${k}: no fake for ${whole}`);
      return fake.baseUrl;
    });
  }
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--frozen", MOD, ...config.args],
    cwd: config.project,
    env: childEnv(config.stateDir, env),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  result = {
    code: out.code,
    stdout: decoder.decode(out.stdout),
    stderr: decoder.decode(out.stderr),
    requestsOf: Object.fromEntries([...fakes].map(([name, fake]) => [name, fake.requests])),
    survivors: await survivors(config.markers),
  };
} finally {
  for (const fake of fakes.values()) await fake[Symbol.asyncDispose]();
}
await Deno.stdout.write(new TextEncoder().encode(JSON.stringify(result) + "\n"));

/** Command lines of live processes (other than this one) containing one of `markers`. */
async function survivors(markers: string[]): Promise<string[]> {
  if (markers.length === 0) return [];
  const found: string[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name) || Number(entry.name) === Deno.pid) continue;
    let cmdline: string;
    try {
      cmdline = (await Deno.readTextFile(`/proc/${entry.name}/cmdline`)).replaceAll("\0", " ");
    } catch {
      continue;
    }
    if (markers.some((m) => cmdline.includes(m))) found.push(cmdline.trim());
  }
  return found;
}
