import assert from "node:assert/strict";
import { abortable, AbortReason, onAbort, raceAbort, sleep } from "../../src/_shared/mod.ts";
import { createFakeClock } from "../_fakes/clock.ts";

/** An abort controller whose signal counts the abort listeners currently added to it. */
function countingController(): { controller: AbortController; listeners: () => number } {
  const controller = new AbortController();
  const signal = controller.signal;
  const live = new Set<EventListenerOrEventListenerObject>();
  const wrappers = new Map<EventListenerOrEventListenerObject, EventListener>();
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = (
    type: string,
    listener: EventListenerOrEventListenerObject,
    options?: boolean | AddEventListenerOptions,
  ) => {
    if (type !== "abort") return add(type, listener, options);
    const once = typeof options === "object" && options.once === true;
    const tracked: EventListener = (event) => {
      if (once) live.delete(listener);
      if (typeof listener === "function") listener(event);
      else listener.handleEvent(event);
    };
    wrappers.set(listener, tracked);
    live.add(listener);
    add(type, tracked, options);
  };
  signal.removeEventListener = (
    type: string,
    listener: EventListenerOrEventListenerObject,
    options?: boolean | EventListenerOptions,
  ) => {
    if (type !== "abort") return remove(type, listener, options);
    live.delete(listener);
    remove(type, wrappers.get(listener) ?? listener, options);
  };
  return { controller, listeners: () => live.size };
}

Deno.test("raceAbort() resolves like the promise and leaves no abort listener", async () => {
  const { controller, listeners } = countingController();
  const { promise, resolve } = Promise.withResolvers<number>();
  const raced = raceAbort(promise, controller.signal);
  assert.equal(listeners(), 1);
  resolve(7);
  assert.equal(await raced, 7);
  assert.equal(listeners(), 0);
});

Deno.test("raceAbort() rejects like the promise and leaves no abort listener", async () => {
  const { controller, listeners } = countingController();
  const error = new Error("boom");
  await assert.rejects(raceAbort(Promise.reject(error), controller.signal), error);
  assert.equal(listeners(), 0);
});

Deno.test("raceAbort() rejects with the abort reason when the signal fires first", async () => {
  const { controller, listeners } = countingController();
  const { promise, resolve } = Promise.withResolvers<number>();
  const raced = raceAbort(promise, controller.signal);
  const reason = new AbortReason("interrupt");
  controller.abort(reason);
  await assert.rejects(raced, (error) => error === reason);
  assert.equal(listeners(), 0);
  resolve(1); // a late settlement changes nothing
  await assert.rejects(raced, (error) => error === reason);
});

Deno.test("raceAbort() rejects at once without a listener when the signal already aborted", async () => {
  const { controller, listeners } = countingController();
  const reason = new AbortReason("timeout");
  controller.abort(reason);
  await assert.rejects(
    raceAbort(new Promise<never>(() => {}), controller.signal),
    (e) => e === reason,
  );
  assert.equal(listeners(), 0);
});

Deno.test("raceAbort() settles like the promise when there is no signal", async () => {
  assert.equal(await raceAbort(Promise.resolve("ok"), undefined), "ok");
});

Deno.test("raceAbort() leaves no listener after many settled waits on one signal", async () => {
  const { controller, listeners } = countingController();
  for (let i = 0; i < 100; i++) await raceAbort(Promise.resolve(i), controller.signal);
  assert.equal(listeners(), 0);
});

Deno.test("abortable() runs the cancel function on abort, and not once settled", async (t) => {
  await t.step("abort", async () => {
    const { controller, listeners } = countingController();
    let cancelled = 0;
    const waiting = abortable<void>(controller.signal, () => () => void cancelled++);
    controller.abort(new AbortReason("force"));
    await assert.rejects(waiting, (e) => e instanceof AbortReason && e.kind === "force");
    assert.equal(cancelled, 1);
    assert.equal(listeners(), 0);
  });
  await t.step("settled", async () => {
    const { controller, listeners } = countingController();
    let cancelled = 0;
    const waiting = abortable<number>(controller.signal, (resolve) => {
      resolve(3);
      return () => void cancelled++;
    });
    assert.equal(await waiting, 3);
    controller.abort();
    assert.equal(cancelled, 0);
    assert.equal(listeners(), 0);
  });
});

Deno.test("abortable() rejects with what the executor throws and leaves no listener", async () => {
  const { controller, listeners } = countingController();
  const error = new Error("cannot start");
  await assert.rejects(
    abortable(controller.signal, () => {
      throw error;
    }),
    error,
  );
  assert.equal(listeners(), 0);
});

Deno.test("onAbort() calls the listener once on abort; disposing removes it", async (t) => {
  await t.step("fires", () => {
    const { controller, listeners } = countingController();
    let calls = 0;
    using _listener = onAbort(controller.signal, () => void calls++);
    controller.abort();
    assert.equal(calls, 1);
    assert.equal(listeners(), 0);
  });
  await t.step("disposed", () => {
    const { controller, listeners } = countingController();
    let calls = 0;
    const listener = onAbort(controller.signal, () => void calls++);
    listener[Symbol.dispose]();
    listener[Symbol.dispose]();
    assert.equal(listeners(), 0);
    controller.abort();
    assert.equal(calls, 0);
  });
  await t.step("already aborted", () => {
    const controller = new AbortController();
    controller.abort();
    let calls = 0;
    using _listener = onAbort(controller.signal, () => void calls++);
    assert.equal(calls, 0);
  });
});

Deno.test("sleep() resolves on the clock and leaves no listener or timer behind", async () => {
  const clock = createFakeClock();
  const { controller, listeners } = countingController();
  let done = false;
  const sleeping = sleep(clock, 1000, { signal: controller.signal }).then(() => void (done = true));
  await clock.tickAsync(999);
  assert.equal(done, false);
  await clock.tickAsync(1);
  await sleeping;
  assert.equal(listeners(), 0);
  assert.equal(clock.countTimers(), 0);
});

Deno.test("sleep() rejects with the abort reason and clears its timer when the signal fires", async () => {
  const clock = createFakeClock();
  const { controller, listeners } = countingController();
  const sleeping = sleep(clock, 1000, { signal: controller.signal });
  const reason = new AbortReason("interrupt");
  controller.abort(reason);
  await assert.rejects(sleeping, (e) => e === reason);
  assert.equal(listeners(), 0);
  assert.equal(clock.countTimers(), 0);
});
