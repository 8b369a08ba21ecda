/**
 * Framing of a Run's append-only log: `frame` and `scanLog` round trip, a torn or damaged tail
 * never becomes a record, and `recordLine` redacts credential values while staying one line of
 * valid JSON. The property tests use a seeded random loop (NICEEVAL_FUZZ_SEED explores).
 */
import assert from "node:assert/strict";
import { Redactor } from "../../src/_shared/mod.ts";
import { crc32, frame, frameAt, recordLine, scanLog } from "../../src/record/log.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import type { Random } from "../../src/_shared/random.ts";
import { concatBytes } from "../_helpers/record_files.ts";

const SEED = Number(Deno.env.get("NICEEVAL_FUZZ_SEED") ?? "20261202");
const ENCODER = new TextEncoder();

/** Characters that stress the framing: multi-byte UTF-8, escapes, digits and spaces. */
const ALPHABET = ["a", "Z", "0", "9", " ", "\n", "\r", '"', "\\", "é", "€", "😀", "\u0000", "}"];

function randomText(random: Random, max: number): string {
  const length = Math.floor(random.next() * max);
  return Array.from({ length }, () => ALPHABET[Math.floor(random.next() * ALPHABET.length)])
    .join("");
}

function randomRecord(random: Random, i: number): Record<string, unknown> {
  return {
    record: ["attempt", "member", "diagnostic", "end"][i % 4],
    i,
    text: randomText(random, 40),
    n: Math.floor(random.next() * 1e9),
    nested: { list: [randomText(random, 5), null, true] },
  };
}

/** A log of `n` random records: the records, their frames and the frames' end offsets. */
function randomLog(random: Random, n: number) {
  const records = Array.from({ length: n }, (_, i) => randomRecord(random, i));
  const frames = records.map((r) => frame(recordLine(r)));
  const ends: number[] = [];
  let at = 0;
  for (const f of frames) ends.push(at += f.length);
  return { records, frames, ends, bytes: concatBytes(frames) };
}

Deno.test("frame() writes `<length> <crc32> <json>\\n` with the byte length of the JSON", () => {
  const json = recordLine({ record: "end", text: "é€" });
  const line = new TextDecoder().decode(frame(json));
  const body = ENCODER.encode(json);
  assert.equal(line, `${body.length} ${crc32(body).toString(16).padStart(8, "0")} ${json}\n`);
  assert.equal(line.split("\n").length, 2, "a frame is exactly one line");
});

Deno.test("crc32() is the IEEE CRC-32", () => {
  assert.equal(crc32(ENCODER.encode("123456789")), 0xcbf43926);
  assert.equal(crc32(new Uint8Array()), 0);
});

Deno.test("scanLog() reads back every framed record in order, with offsets and lengths", () => {
  const { records, frames, ends, bytes } = randomLog(createSeededRandom(SEED), 20);
  const scan = scanLog(bytes);
  assert.deepEqual(scan.entries.map((e) => e.value), records);
  assert.deepEqual(scan.entries.map((e) => e.length), frames.map((f) => f.length));
  assert.deepEqual(scan.entries.map((e) => e.offset + e.length), ends);
  assert.deepEqual([scan.validEnd, scan.tornBytes], [bytes.length, 0]);
  for (const entry of scan.entries) {
    assert.deepEqual(frameAt(bytes, entry.offset)?.value, entry.value);
  }
  assert.deepEqual(scanLog(new Uint8Array()), { entries: [], validEnd: 0, tornBytes: 0 });
});

Deno.test("scanLog() of any prefix of a log returns exactly the whole records in it", () => {
  const random = createSeededRandom(SEED + 1);
  for (const n of [1, 2, 3, 7]) {
    const { records, ends, bytes } = randomLog(random, n);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const scan = scanLog(bytes.subarray(0, cut));
      const k = ends.filter((end) => end <= cut).length;
      const validEnd = k === 0 ? 0 : ends[k - 1]!;
      assert.deepEqual(scan.entries.map((e) => e.value), records.slice(0, k), `n ${n}, cut ${cut}`);
      assert.deepEqual([scan.validEnd, scan.tornBytes], [validEnd, cut - validEnd]);
    }
  }
});

Deno.test("scanLog() drops exactly the last record when any one of its bytes is flipped", () => {
  const random = createSeededRandom(SEED + 2);
  for (const n of [1, 4]) {
    const { records, ends, bytes } = randomLog(random, n);
    const start = n === 1 ? 0 : ends[n - 2]!;
    for (let at = start; at < bytes.length; at++) {
      const damaged = bytes.slice();
      damaged[at] = damaged[at]! ^ (1 + Math.floor(random.next() * 255));
      const scan = scanLog(damaged);
      assert.deepEqual(scan.entries.map((e) => e.value), records.slice(0, n - 1), `byte ${at}`);
      assert.deepEqual([scan.validEnd, scan.tornBytes], [start, bytes.length - start]);
    }
  }
});

Deno.test("scanLog() stops at a damaged record in the middle: nothing after it is read", () => {
  const { records, ends, bytes } = randomLog(createSeededRandom(SEED + 3), 5);
  const damaged = bytes.slice();
  damaged[ends[1]! + 15] = damaged[ends[1]! + 15]! ^ 0x01;
  const scan = scanLog(damaged);
  assert.deepEqual(scan.entries.map((e) => e.value), records.slice(0, 2));
  assert.equal(scan.validEnd, ends[1]);
});

Deno.test("scanLog() takes no frame whose body is not a JSON object, even with a right checksum", async (t) => {
  const good = frame(recordLine({ record: "end" }));
  // A frame with a right checksum and the given length field.
  const withHead = (length: string, body: Uint8Array) => {
    const head = ENCODER.encode(`${length} ${crc32(body).toString(16).padStart(8, "0")} `);
    return concatBytes([head, body, ENCODER.encode("\n")]);
  };
  const raw = (body: Uint8Array) => withHead(String(body.length), body);
  const cases: [string, Uint8Array][] = [
    ["an array", raw(ENCODER.encode("[1]"))],
    ["null", raw(ENCODER.encode("null"))],
    ["not JSON", raw(ENCODER.encode("{"))],
    ["invalid UTF-8", raw(new Uint8Array([0x22, 0xff, 0x22]))],
    ["a length of more than 10 digits", withHead("00000000002", ENCODER.encode("{}"))],
    ["a length one short", withHead("1", ENCODER.encode("{}"))],
    ["no newline after the body", raw(ENCODER.encode("{}")).subarray(0, -1)],
    ["no length", ENCODER.encode(` 00000000 {}\n`)],
  ];
  for (const [name, bad] of cases) {
    await t.step(name, () => {
      const scan = scanLog(concatBytes([good, bad, good]));
      assert.deepEqual(scan.entries.map((e) => e.value), [{ record: "end" }]);
      assert.equal(scan.validEnd, good.length);
    });
  }
});

Deno.test("recordLine() is compact JSON, unchanged without a redactor or a match", () => {
  const value = { record: "member", text: "line\nbreak", n: 1 };
  assert.equal(recordLine(value), JSON.stringify(value));
  assert.equal(recordLine(value, new Redactor()), JSON.stringify(value));
  assert.equal(recordLine(value, new Redactor(["sk-secret-1"])), JSON.stringify(value));
  assert.ok(!recordLine(value).includes("\n"), "an escaped line break keeps one line");
});

Deno.test("recordLine() redacts credential values in strings, escaped strings and keys", () => {
  const redactor = new Redactor(["sk-secret-1", 'pa"ss\\wd']);
  const line = recordLine(
    { message: "key sk-secret-1", nested: [{ text: 'x pa"ss\\wd y' }], ["sk-secret-1"]: 1 },
    redactor,
  );
  assert.deepEqual(JSON.parse(line), {
    message: "key ***",
    nested: [{ text: "x *** y" }],
    "***": 1,
  });
  assert.deepEqual(scanLog(frame(line)).entries.map((e) => e.value), [JSON.parse(line)]);
});

Deno.test("recordLine() keeps numbers and stays valid JSON when a secret is made of digits", () => {
  const redactor = new Redactor(["123456"]);
  const line = recordLine({ durationMs: 123456, pin: "pin 123456", other: 1234567 }, redactor);
  assert.deepEqual(JSON.parse(line), { durationMs: 123456, pin: "pin ***", other: 1234567 });
  assert.deepEqual(scanLog(frame(line)).entries.length, 1);
});

Deno.test("recordLine() redacts a key too when a secret made of digits is also a number", () => {
  // The text redaction breaks the number, so strings are redacted one by one: keys included.
  const line = recordLine(
    { durationMs: 123456, ["token 123456"]: "pin 123456" },
    new Redactor(["123456"]),
  );
  assert.deepEqual(JSON.parse(line), { durationMs: 123456, "token ***": "pin ***" });
  assert.ok(!line.includes("token 123456"), line);
});
