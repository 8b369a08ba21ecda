/** The public surface changes only on purpose (toolchain.md §2.2): entries vs public_api.txt. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const ENTRIES: Record<string, string> = {
  ".": "mod.ts",
  "./expect": "src/public/expect.ts",
  "./adapter": "src/public/adapter.ts",
  "./sandbox": "src/public/sandbox.ts",
};

/** `<entry> <kind> <name>` lines of every exported symbol, sorted. */
async function surface(): Promise<string[]> {
  const lines: string[] = [];
  for (const [entry, file] of Object.entries(ENTRIES)) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["doc", "--json", file],
      cwd: REPO,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const doc = JSON.parse(new TextDecoder().decode(out.stdout));
    const node = doc.nodes[pathToFileURL(join(REPO, file)).href];
    for (const symbol of node.symbols as { name: string; declarations: { kind: string }[] }[]) {
      lines.push(`${entry} ${symbol.declarations.map((d) => d.kind).join("+")} ${symbol.name}`);
    }
  }
  return lines.sort();
}

Deno.test("the names exported by each package entry equal tests/toolchain/public_api.txt", async () => {
  const expected = (await Deno.readTextFile(join(REPO, "tests", "toolchain", "public_api.txt")))
    .split("\n").filter((l) => l.trim() !== "" && !l.startsWith("#"));
  assert.deepEqual(await surface(), expected.sort());
});

Deno.test("deno.json exports exactly the four package entries", async () => {
  const config = JSON.parse(await Deno.readTextFile(join(REPO, "deno.json")));
  assert.deepEqual(config.exports, {
    ".": "./mod.ts",
    "./expect": "./src/public/expect.ts",
    "./adapter": "./src/public/adapter.ts",
    "./sandbox": "./src/public/sandbox.ts",
  });
});

if (Deno.args.includes("--write")) {
  await Deno.writeTextFile(
    join(REPO, "tests", "toolchain", "public_api.txt"),
    "# <entry> <declaration kind> <name>; regenerate with: deno run -A tests/toolchain/exports_test.ts --write\n" +
      (await surface()).join("\n") + "\n",
  );
}
