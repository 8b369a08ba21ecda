import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describeLoadError } from "../../src/loader/mod.ts";

const ROOT = "/projects/demo";
const url = (relative: string) => pathToFileURL(join(ROOT, relative)).href;

Deno.test("describeLoadError() keeps the first line and shows project files relative to the root", () => {
  const error = new TypeError(
    `Module not found "${url("evals/missing.ts")}".\n    at ${url("evals/a.eval.ts")}:3:15`,
  );
  assert.equal(
    describeLoadError(error, ROOT),
    'Module not found "evals/missing.ts" (at evals/a.eval.ts:3:15)',
  );
});

Deno.test("describeLoadError() strips colour codes from runtime messages", () => {
  const error = new TypeError(
    'Import "left-pad" not a dependency\n  \u001b[0m\u001b[36mhint:\u001b[0m try something\n' +
      `    at \u001b[0m\u001b[36m${
        url("evals/b.eval.ts")
      }\u001b[0m:\u001b[0m\u001b[33m2\u001b[0m:` +
      "\u001b[0m\u001b[33m15\u001b[0m",
  );
  assert.equal(
    describeLoadError(error, ROOT),
    'Import "left-pad" not a dependency (at evals/b.eval.ts:2:15)',
  );
});

Deno.test("describeLoadError() takes the location of an exception from its stack", () => {
  const error = new Error("boom\nmore detail");
  error.stack = `Error: boom\n    at ${url("evals/c.eval.ts")}:7:9\n    at async ${
    url("x.ts")
  }:1:1`;
  assert.equal(describeLoadError(error, ROOT), "boom (at evals/c.eval.ts:7:9)");
});

Deno.test("describeLoadError() keeps absolute paths outside the project and decodes URLs", () => {
  const error = new Error(`cannot read ${pathToFileURL("/elsewhere/my lib.ts").href}`);
  error.stack = "";
  assert.equal(describeLoadError(error, ROOT), "cannot read /elsewhere/my lib.ts");
  const inside = new Error(`bad ${url("evals/with space.eval.ts")}`);
  inside.stack = "";
  assert.equal(describeLoadError(inside, ROOT), "bad evals/with space.eval.ts");
});

Deno.test("describeLoadError() describes thrown non-errors", () => {
  assert.equal(describeLoadError("plain string", ROOT), "plain string");
  assert.equal(describeLoadError({ code: 1 }, ROOT), '{"code":1}');
  assert.equal(describeLoadError(new Error(""), ROOT).length > 0, true);
});

Deno.test("describeLoadError() ignores stack frames outside the project", () => {
  const error = new Error("bad option");
  error.stack = `Error: bad option\n    at ${
    pathToFileURL("/opt/niceeval/src/x.ts").href
  }:1:1\n    at ${url("agents/a.ts")}:4:2`;
  assert.equal(describeLoadError(error, ROOT), "bad option (at agents/a.ts:4:2)");
  error.stack = `Error: bad option\n    at ${pathToFileURL("/opt/niceeval/src/x.ts").href}:1:1`;
  assert.equal(describeLoadError(error, ROOT), "bad option");
});
