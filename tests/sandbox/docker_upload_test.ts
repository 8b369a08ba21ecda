/**
 * `uploadDirectory` on the docker provider (sandboxes.md rules 32, 110) against a real daemon: the
 * whole directory travels as one archive (`putArchive` counted through the client seam), and the
 * files arrive with their modes, owned by the default user, with empty directories kept, ignored
 * paths left out and no symlink followed out of the directory.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { dockerAvailability } from "../_helpers/docker.ts";
import { realClock } from "../../src/_shared/clock.ts";
import { createFacade } from "../../src/sandbox/mod.ts";
import { dockerClient } from "../../src/sandbox/providers/docker/client.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { dockerTestBed, text } from "./_docker.ts";

const docker = await dockerAvailability();

/** Files of the host project: path → [content, mode]. */
const FILES: Record<string, [string, number]> = {
  "run.sh": ["#!/bin/sh\necho run\n", 0o755],
  "private.key": ["k", 0o600],
  "src/a.ts": ["a", 0o644],
  "src/deep/b.ts": ["b", 0o640],
  "src/a.log": ["ignored", 0o644],
  "node_modules/x/i.js": ["ignored", 0o644],
  ...Object.fromEntries(
    Array.from(
      { length: 20 },
      (_, i) => [`many/f${String(i).padStart(2, "0")}.txt`, [`${i}`, 0o644]],
    ),
  ),
};

/** A docker client whose containers count their `putArchive` calls. */
function countingClient() {
  const real = dockerClient(Deno.env.toObject());
  /** One entry per `putArchive` request: `ok` or the daemon's status. */
  const puts: string[] = [];
  const bind = <T extends object>(target: T, key: string | symbol) => {
    const value = Reflect.get(target, key);
    return typeof value === "function" ? value.bind(target) : value;
  };
  const container = <T extends object>(c: T): T =>
    new Proxy(c, {
      get(target, key) {
        if (key !== "putArchive") return bind(target, key);
        return async (...args: unknown[]) => {
          const put = (target as unknown as { putArchive(...a: unknown[]): Promise<unknown> })
            .putArchive(...args);
          try {
            const answer = await put;
            puts.push("ok");
            return answer;
          } catch (error) {
            puts.push(String((error as { statusCode?: number }).statusCode));
            throw error;
          }
        };
      },
    });
  const client = new Proxy(real, {
    get(target, key) {
      if (key !== "createContainer") return bind(target, key);
      return async (options: Parameters<typeof real.createContainer>[0]) =>
        container(await target.createContainer(options));
    },
  });
  return { client, puts };
}

async function hostProject(host: string): Promise<string> {
  const dir = join(host, "project");
  for (const [path, [content, mode]] of Object.entries(FILES)) {
    const file = join(dir, ...path.split("/"));
    await Deno.mkdir(join(file, ".."), { recursive: true });
    await Deno.writeTextFile(file, content);
    await Deno.chmod(file, mode);
  }
  await Deno.mkdir(join(dir, "empty", "nested"), { recursive: true });
  for (const d of ["many", "src", "src/deep", "empty/nested"]) {
    await Deno.chmod(join(dir, ...d.split("/")), 0o755);
  }
  await Deno.chmod(join(dir, "empty"), 0o750);
  await Deno.writeTextFile(join(host, "secret.txt"), "secret");
  await Deno.symlink(join(host, "secret.txt"), join(dir, "escape.txt"));
  await Deno.symlink(join(dir, "src", "a.ts"), join(dir, "inside.ts"));
  return dir;
}

Deno.test({
  name:
    "rule 110: uploadDirectory() sends one archive per call; modes, owner, empty directories and ignore rules arrive intact",
  ignore: !docker.ok,
  fn: async () => {
    const host = await Deno.makeTempDir({ prefix: "niceeval-docker-upload-" });
    try {
      await hostProject(host);
      const { client, puts } = countingClient();
      await using bed = dockerTestBed({ docker: client });
      const handle = await bed.create({ user: "sandbox" });
      const sb = createFacade({
        handle,
        shell: "sh",
        clock: realClock,
        random: createSeededRandom(1),
        signal: new AbortController().signal,
        hostDir: host,
        phase: () => "test",
        onEvidence: () => {},
        onDiagnostic: () => {},
      });
      // A root-owned file already in the target stays as it was.
      await handle.exec({ argv: ["sh", "-c", "mkdir -p up && echo keep > up/root.txt"] }, {
        user: "root",
      });
      assert.deepEqual(puts, []);
      await sb.uploadDirectory("project", "up", { ignore: ["node_modules/", "*.log"] });
      assert.deepEqual(puts, ["ok"]);
      const listing = await handle.exec({
        argv: ["sh", "-c", "cd up && find . -mindepth 1 | sort | xargs stat -c '%n %a %u:%g %F'"],
      });
      assert.equal(listing.exitCode, 0, text(listing.stderr));
      const regular = "regular file";
      const expected = [
        `./empty 750 1000:1000 directory`,
        `./empty/nested 755 1000:1000 directory`,
        `./inside.ts 644 1000:1000 ${regular}`,
        `./many 755 1000:1000 directory`,
        ...Array.from(
          { length: 20 },
          (_, i) => `./many/f${String(i).padStart(2, "0")}.txt 644 1000:1000 ${regular}`,
        ),
        `./private.key 600 1000:1000 ${regular}`,
        `./root.txt 644 0:0 ${regular}`,
        `./run.sh 755 1000:1000 ${regular}`,
        `./src 755 1000:1000 directory`,
        `./src/a.ts 644 1000:1000 ${regular}`,
        `./src/deep 755 1000:1000 directory`,
        `./src/deep/b.ts 640 1000:1000 ${regular}`,
      ];
      assert.deepEqual(text(listing.stdout).trim().split("\n"), expected);
      assert.equal(await sb.readText("up/src/deep/b.ts"), "b");
      assert.equal(await sb.readText("up/inside.ts"), "a");
      assert.equal((await sb.runCommand("./up/run.sh")).stdout, "run\n");
      // A missing target answers 404: it is created for the default user and the same archive
      // sent again.
      await sb.uploadDirectory("project/src", "new/dir");
      assert.deepEqual(puts, ["ok", "404", "ok"]);
      const owner = await handle.exec({ argv: ["stat", "-c", "%u %n", "new", "new/dir/a.log"] });
      assert.equal(text(owner.stdout), "1000 new\n1000 new/dir/a.log\n");
    } finally {
      await Deno.remove(host, { recursive: true });
    }
  },
});
