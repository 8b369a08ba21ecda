/** The live writer (OUT-H6): every write, escape sequences included, on a fake clock. */
import assert from "node:assert/strict";
import { FRAME_MS, LiveWriter, TICK_MS } from "../../src/panel/mod.ts";
import { createFakeClock, type FakeClock } from "../_fakes/clock.ts";
import { activity, diagnostic, ended, interrupted, panelStart, slot, started } from "./_events.ts";

type Write = readonly ["err" | "out", string];

/** A writer on a fake terminal of `columns` × `rows`; `writes` lists every write in order. */
function terminal(options: { columns?: number; rows?: number; noColor?: boolean } = {}) {
  const clock = createFakeClock();
  const writes: Write[] = [];
  const writer = new LiveWriter(panelStart(2, 0, { positionals: ["local"] }), {
    panel: {
      write: (text) => void writes.push(["err", text]),
      columns: () => options.columns,
      rows: () => options.rows,
    },
    lines: { write: (text) => void writes.push(["out", text]) },
    clock,
    noColor: options.noColor ?? true,
  });
  return { clock, writes, writer };
}

const A = slot(0, "local", "greet/hello");
const B = slot(1, "local", "math/0000");
// The sequences are spelled out so that the frames are checked byte for byte.
const cursorHide = "\x1b[?25l";
const cursorShow = "\x1b[?25h";
/** Cursor up `lines`, to column 1, erase down. */
const erase = (lines: number) => `\x1b[${lines}A\x1b[G\x1b[J`;
const frame = (...lines: string[]) => lines.map((line) => line + "\n").join("");
const COUNTERS_0 =
  "  2 total · 0 reused · 0 running · 2 queued · 0 passed · 0 failed · 0 errored · 0 skipped";
const COUNTERS_1 =
  "  2 total · 0 reused · 1 running · 1 queued · 0 passed · 0 failed · 0 errored · 0 skipped";

async function at(clock: FakeClock, ms: number): Promise<void> {
  await clock.tickAsync(ms - (clock.now() - Date.UTC(2026, 10, 29, 10, 0, 0)));
}

/** The one-row frame of `A` running `activity` at `elapsed`, after erasing `erased` lines. */
const runningA = (elapsed: string, activity: string, erased = 4) =>
  erase(erased) + frame(
    `niceeval exp local  ${elapsed}`,
    COUNTERS_1,
    "  ACTIVE",
    `  ● greet/hello  local#0  ${elapsed.padStart(6)}  ${activity}`,
  );

Deno.test("LiveWriter redraws at most 4 times per second, only when the frame changed, and every second while running (OUT-H6)", async () => {
  const { clock, writes, writer } = terminal({ columns: 100 });
  writer.start();
  writer.event(started(A, 0));
  await at(clock, 100);
  writer.event(activity(A, 100, "running eval"));
  assert.equal(writes.length, 1, "events inside the frame interval wait for the next frame");
  await at(clock, FRAME_MS);
  await at(clock, 10_400);
  writer.event(diagnostic(10_400, "warning", "x", "nothing the panel shows"));
  await at(clock, 10_400 + FRAME_MS);
  writer.stop();
  // One tick per second from the start; the event at 10.4 s changed nothing on screen.
  assert.deepEqual(writes, [
    ["err", cursorHide + frame("niceeval exp local  0.0s", COUNTERS_0)],
    ["err", runningA("0.2s", "running eval", 2)],
    ...["1.0s", "2.0s", "3.0s", "4.0s", "5.0s", "6.0s", "7.0s", "8.0s", "9.0s", "10s"].map(
      (elapsed) => ["err", runningA(elapsed, "running eval")] as const,
    ),
    ["err", erase(4) + cursorShow],
  ]);
});

Deno.test("LiveWriter draws a frame changing every 10 ms at most once per 250 ms, with the latest state (OUT-H6)", async () => {
  const { clock, writes, writer } = terminal({ columns: 100 });
  writer.start();
  writer.event(started(A, 0));
  for (let i = 0; i < 100; i++) {
    await at(clock, i * 10 + 5);
    writer.event(activity(A, i * 10 + 5, `step ${i}`));
  }
  await at(clock, 1_000);
  writer.stop();
  // Four frames in the first second (0, 250, 500 and 750 ms), the fifth at 1 s.
  assert.deepEqual(writes, [
    ["err", cursorHide + frame("niceeval exp local  0.0s", COUNTERS_0)],
    ["err", runningA("0.2s", "step 24", 2)],
    ["err", runningA("0.5s", "step 49")],
    ["err", runningA("0.7s", "step 74")],
    ["err", runningA("1.0s", "step 99")],
    ["err", erase(4) + cursorShow],
  ]);
});

Deno.test("LiveWriter skips the every-second refresh while the frame stays the same (OUT-H6)", async () => {
  const { clock, writes, writer } = terminal({ columns: 100 });
  writer.start();
  writer.event(started(A, 0));
  writer.event(activity(A, 0, "running eval"));
  // Past one hour the elapsed time reads `1h 00m` for a whole minute.
  await at(clock, 3_600_000);
  // Thousands of frames lead up to one hour; the minute after it is compared in full.
  const before = writes.length;
  await at(clock, 3_659_999);
  await at(clock, 3_660_000);
  writer.stop();
  assert.deepEqual(writes.slice(before - 1), [
    ["err", runningA("1h 00m", "running eval")],
    ["err", runningA("1h 01m", "running eval")],
    ["err", erase(4) + cursorShow],
  ]);
});

Deno.test("LiveWriter erases the panel before permanent lines on stdout and redraws it after (OUT-H6, OUT-H9)", async () => {
  const { clock, writes, writer } = terminal({ columns: 100 });
  writer.start();
  writer.event(started(A, 0));
  writer.event(started(B, 0));
  await at(clock, 500);
  writer.event(ended(A, 500, "failed"), [
    "✗ greet/hello  local#0  failed  @1ABC",
    "    turn succeeded · expected completed · received failed",
  ]);
  await at(clock, 600);
  writer.permanent(["! a warning"]);
  await at(clock, 750);
  writer.stop();
  assert.deepEqual(writes, [
    ["err", cursorHide + frame("niceeval exp local  0.0s", COUNTERS_0)],
    [
      "err",
      erase(2) + frame(
        "niceeval exp local  0.2s",
        "  2 total · 0 reused · 2 running · 0 queued · 0 passed · 0 failed · 0 errored · 0 skipped",
        "  ACTIVE",
        "  ● greet/hello  local#0    0.2s",
        "  ● math/0000    local#0    0.2s",
      ),
    ],
    ["err", erase(5)],
    [
      "out",
      "✗ greet/hello  local#0  failed  @1ABC\n    turn succeeded · expected completed · received failed\n",
    ],
    [
      "err",
      frame(
        "niceeval exp local  0.5s · ETA 1s",
        "  2 total · 0 reused · 1 running · 0 queued · 0 passed · 1 failed · 0 errored · 0 skipped",
        "  ACTIVE",
        "  ● math/0000  local#0    0.5s",
      ),
    ],
    // Within the frame interval the line goes out at once and the panel follows at 750 ms.
    ["err", erase(4)],
    ["out", "! a warning\n"],
    [
      "err",
      frame(
        "niceeval exp local  0.7s · ETA 1s",
        "  2 total · 0 reused · 1 running · 0 queued · 0 passed · 1 failed · 0 errored · 0 skipped",
        "  ACTIVE",
        "  ● math/0000  local#0    0.7s",
      ),
    ],
    ["err", erase(4) + cursorShow],
  ]);
});

Deno.test("LiveWriter.stop() after an interrupt erases the panel, shows the cursor and leaves no timer behind", async () => {
  const { clock, writes, writer } = terminal({ columns: 70, rows: 24 });
  writer.start();
  writer.event(started(A, 0));
  await at(clock, 300);
  writer.event(interrupted(300));
  await at(clock, 600);
  // The interrupt at 300 ms is drawn at 500 ms, one frame interval after the draw at 250 ms.
  assert.ok(clock.countTimers() > 0);
  writer.stop();
  writer.stop();
  writer.event(ended(A, 700, "interrupted"));
  await at(clock, 5_000);
  const counters = "  2 total · 0 reused · 1 running · 1 queued · 0 passed · 0 failed";
  assert.deepEqual(writes, [
    [
      "err",
      cursorHide +
      frame(
        "niceeval exp local  0.0s",
        "  2 total · 0 reused · 0 running · 2 queued · 0 passed · 0 failed",
      ),
    ],
    [
      "err",
      erase(2) +
      frame("niceeval exp local  0.2s", counters, "  ACTIVE", "  ● greet/hello  local#0    0.2s"),
    ],
    [
      "err",
      erase(4) + frame(
        "niceeval exp local  0.5s",
        counters,
        "  interrupted — cleaning up · Ctrl+C again forces exit",
        "  ACTIVE",
        "  ● greet/hello  local#0    0.5s",
      ),
    ],
    ["err", erase(5) + cursorShow],
  ]);
  assert.equal(clock.countTimers(), 0);
});

Deno.test("LiveWriter draws a coloured rounded box when NO_COLOR is unset and the terminal is 60 columns or wider", () => {
  const { writes, writer } = terminal({ columns: 60, noColor: false });
  writer.start();
  writer.stop();
  assert.deepEqual(writes, [
    [
      "err",
      cursorHide + frame(
        "\x1b[2m╭─\x1b[22m \x1b[1mniceeval exp local\x1b[22m \x1b[2m────────────────────────────── 0.0s ─╮\x1b[22m",
        "\x1b[2m│\x1b[22m 2 total · 0 reused · 0 running · 2 queued · 0 passed     \x1b[2m│\x1b[22m",
        "\x1b[2m╰──────────────────────────────────────────────────────────╯\x1b[22m",
      ),
    ],
    ["err", erase(3) + cursorShow],
  ]);
  const narrow = terminal({ columns: 59, noColor: false });
  narrow.writer.start();
  narrow.writer.stop();
  assert.deepEqual(narrow.writes, [
    [
      "err",
      cursorHide + frame(
        "\x1b[1mniceeval exp local  0.0s\x1b[22m",
        "  2 total · 0 reused · 0 running · 2 queued · 0 passed",
      ),
    ],
    ["err", erase(2) + cursorShow],
  ], "unboxed below 60 columns");
});

Deno.test("LiveWriter writes permanent lines straight to stdout before start and after stop", () => {
  const { writes, writer } = terminal();
  writer.permanent(["PLAN", "  2 attempts"]);
  writer.stop();
  writer.permanent(["late"]);
  assert.deepEqual(writes, [["out", "PLAN\n  2 attempts\n"], ["out", "late\n"]]);
  assert.equal(TICK_MS, 1000);
});
