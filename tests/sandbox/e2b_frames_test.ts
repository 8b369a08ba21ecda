/**
 * sandboxes.md rule 123 (§9.1 `e2b_frames`): the exec wrapper and its control-frame parser —
 * frames split across chunks, marker text in the payload, malformed frames; the wrapper text is
 * also run by a real local shell to prove the frames it prints parse back.
 */
import assert from "node:assert/strict";
import {
  commandLine,
  FrameParser,
  FrameProtocolError,
  shellQuote,
  wrapCommand,
} from "../../src/sandbox/providers/e2b/frames.ts";

const MARKER = "0123456789abcdef";
const frame = (kind: string, n: number) => `\x1e${MARKER}:${kind}:${n}\n`;

function parseAll(chunks: readonly string[]) {
  const parser = new FrameParser(MARKER);
  const events = [...chunks.flatMap((c) => parser.feed(c)), ...parser.end()];
  const data = events.filter((e) => e.kind === "data").map((e) => e.text).join("");
  const frames = events.filter((e) => e.kind !== "data");
  return { data, frames };
}

Deno.test("rule 123: control frames are stripped and reported; payload passes through unchanged", () => {
  const text = `hello\n${frame("pgid", 42)}world${frame("exit", 3)}`;
  const { data, frames } = parseAll([text]);
  assert.equal(data, "hello\nworld");
  assert.deepEqual(frames, [{ kind: "pgid", value: 42 }, { kind: "exit", value: 3 }]);
});

Deno.test("rule 123: a frame split across chunks at every position parses the same", () => {
  const text = `a\x1eb${frame("pgid", 7)}tail ${MARKER}${frame("exit", 0)}`;
  for (let cut = 0; cut <= text.length; cut++) {
    const { data, frames } = parseAll([text.slice(0, cut), text.slice(cut)]);
    assert.equal(data, `a\x1ebtail ${MARKER}`, `cut at ${cut}`);
    assert.deepEqual(frames, [{ kind: "pgid", value: 7 }, { kind: "exit", value: 0 }]);
  }
  const oneByOne = parseAll([...text]);
  assert.equal(oneByOne.data, `a\x1ebtail ${MARKER}`);
  assert.equal(oneByOne.frames.length, 2);
});

Deno.test("rule 123: marker text in the payload, and frames of another marker, are payload", () => {
  const other = `\x1effffffffffffffff:exit:0\n`;
  const text = `${MARKER}:exit:1\n${other}\x1e${MARKER.slice(0, 8)}x\n`;
  const { data, frames } = parseAll([text]);
  assert.equal(data, text);
  assert.deepEqual(frames, []);
});

Deno.test("rule 123: a malformed frame of this marker is a protocol error", () => {
  for (const bad of [`\x1e${MARKER}:exit:x\n`, `\x1e${MARKER}:kill:1\n`, `\x1e${MARKER}:exit:\n`]) {
    assert.throws(() => new FrameParser(MARKER).feed(bad), FrameProtocolError, JSON.stringify(bad));
  }
  // Detected before its newline arrives when it can no longer become a frame.
  assert.throws(() => new FrameParser(MARKER).feed(`\x1e${MARKER}:pgix`), FrameProtocolError);
  const parser = new FrameParser(MARKER);
  assert.deepEqual(parser.feed(`\x1e${MARKER}:exi`), []);
  assert.throws(() => parser.end(), FrameProtocolError);
});

Deno.test("rule 123: the wrapper never contains the marker literally; argv is quoted", () => {
  const line = commandLine({ argv: ["printf", "%s|", "a b", "it's", "$HOME"] }, "bash");
  assert.equal(line, `printf '%s|' 'a b' 'it'\\''s' '$HOME'`);
  assert.equal(commandLine({ script: "echo $0" }, "sh"), `/bin/sh -c 'echo $0'`);
  const wrapper = wrapCommand(line, MARKER);
  assert.ok(!wrapper.includes(MARKER), wrapper);
  assert.equal(shellQuote("plain/path-1.txt"), "plain/path-1.txt");
});

async function runWrapper(command: string, stdin?: string) {
  const out = await new Deno.Command("bash", {
    args: ["-c", wrapCommand(command, MARKER)],
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const writer = out.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const r = await out.output();
  return {
    code: r.code,
    stdout: parseAll([new TextDecoder().decode(r.stdout)]),
    stderr: parseAll([new TextDecoder().decode(r.stderr)]),
  };
}

Deno.test("rule 123: the wrapper run by a real shell reports pgid and exit frames on both streams", async () => {
  const argv = commandLine({
    argv: ["sh", "-c", 'printf "%s|" "$@"; echo err >&2; exit 3', "sh", "a b", "it's"],
  }, "bash");
  const r = await runWrapper(argv);
  assert.equal(r.code, 3);
  assert.equal(r.stdout.data, "a b|it's|");
  assert.equal(r.stderr.data, "err\n");
  assert.equal(r.stdout.frames[0]!.kind, "pgid");
  assert.ok(r.stdout.frames[0]!.value > 1);
  assert.deepEqual(r.stdout.frames.slice(1), [{ kind: "exit", value: 3 }]);
  assert.deepEqual(r.stderr.frames, [{ kind: "exit", value: 3 }]);
});

Deno.test("rule 123: the wrapper hands its stdin to the command and reports 128+N for a signal", async () => {
  const cat = await runWrapper("cat", "from stdin");
  assert.equal(cat.stdout.data, "from stdin");
  assert.deepEqual(cat.stdout.frames.at(-1), { kind: "exit", value: 0 });
  const term = await runWrapper(commandLine({ script: "kill -TERM $$" }, "sh"));
  assert.deepEqual(term.stdout.frames.at(-1), { kind: "exit", value: 143 });
});
