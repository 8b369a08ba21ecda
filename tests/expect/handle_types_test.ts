/**
 * Type-level tests: a test context typed with the exported handle types infers refined values,
 * offers the methods of its eval kind and rejects matches of the wrong domain.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import {
  and,
  type BooleanMatch,
  type BoolHandle,
  type DirectScoreHandle,
  equals,
  eventMatch,
  includes,
  isDefined,
  isTrue,
  jsonMatch,
  type Kind,
  matches,
  type MeasureHandle,
  not,
  or,
  type OrderedAssertions,
  satisfies,
  type ScopedAssertions,
  type ScoreMatch,
  similarity,
  toolMatch,
} from "../../src/expect/mod.ts";
import type { JsonValue } from "../../src/_shared/mod.ts";
import { recorder, snapshot, turn } from "./_turns.ts";

/** The shape the lead gives `t` (authoring.md §3.2), reduced to assertions. */
interface Context<K extends Kind> extends ScopedAssertions<K>, OrderedAssertions<K> {
  check<T, R>(value: T, match: BooleanMatch<T, R>): BoolHandle<K, R>;
  check<T>(value: T, match: ScoreMatch<T>): MeasureHandle<K>;
  score(points: number): K extends "score" ? DirectScoreHandle : never;
}

function context<K extends Kind>(kind: K): Context<K> {
  const r = recorder(kind);
  return {
    ...r.scoped(() => snapshot([turn({ tools: [{ name: "a" }, { name: "b" }], text: "hi" })])),
    check: r.check,
    score: r.score as Context<K>["score"],
  };
}

Deno.test("Context<pass> check() refines orStop() values through isDefined and matches", async () => {
  const t = context("pass");
  const maybe = "x" as string | undefined;
  const defined: string = await t.check(maybe, isDefined()).orStop();
  const parsed: { n: number } = await t.check({ n: 1 }, matches(z.object({ n: z.number() })))
    .orStop();
  const text: string = await t.check("hello", and(includes("h"), includes("o"))).orStop();
  assert.equal(defined, "x");
  assert.deepEqual(parsed, { n: 1 });
  assert.equal(text, "hello");
});

Deno.test("and(), or() and not() type-check generic value children against any subject", async () => {
  const t = context("pass");
  // A generic child (isDefined) must not be inferred against the tool or event overload first.
  const data = null as JsonValue | undefined;
  t.check(data, not(isDefined()));
  t.check(data, not(equals(null)));
  t.check(data, and(isDefined(), jsonMatch({ a: 1 })));
  t.check(data, or(isDefined(), isTrue()));
  t.check("abc", or(includes("a"), isTrue(), includes("b")));
  t.check("abc", and(includes("a"), satisfies("long", (v: string) => v.length > 1)));
  t.check("abc", not(satisfies("long", (v: string) => v.length > 1)));
  const either: string | true = await t.check("abc", or(includes("a"), isTrue())).orStop();
  const text: string = await t.check("abc", or(includes("a"), includes("z"))).orStop();
  t.calledTool(and(toolMatch("a"), not(toolMatch({ status: "failed" }))));
  t.calledTool(or(toolMatch("a"), toolMatch(/b/)));
  t.calledTool(toolMatch("a", { input: not(isDefined()) }));
  t.event(or(eventMatch("message"), eventMatch("operation.started")));
  t.event(eventMatch("message", { text: not(includes("x")) }));
  // @ts-expect-error a number predicate cannot check a string
  t.check("abc", or(includes("a"), satisfies("n", (v: number) => v > 1)));
  // @ts-expect-error a value match is not a tool match
  assert.throws(() => t.calledTool(not(includes("x"))));
  // @ts-expect-error domains cannot be mixed
  assert.throws(() => t.calledTool(and(toolMatch("a"), includes("x"))));
  assert.equal(either, "abc");
  assert.equal(text, "abc");
});

Deno.test("Context<pass> handles offer optional and gate, measurements gate(n)", async () => {
  const t = context("pass");
  t.calledTool("a").optional().gate().key("called-a");
  t.toolOrder([toolMatch("a"), toolMatch("b")]).label("a then b");
  t.event(eventMatch("message", { text: "hi" }), { count: { atLeast: 1 } });
  const value: number = await t.check("ab", similarity("ab")).gate(0.5).orStop();
  assert.equal(value, 1);
  // @ts-expect-error pass handles have no score()
  assert.throws(() => t.check("a", includes("a")).score(1));
  // @ts-expect-error a value match is not a tool match
  assert.throws(() => t.calledTool(includes("a")));
});

Deno.test("Context<score> handles offer score and atLeast, and t.score exists", () => {
  const t = context("score");
  t.check("a", includes("a")).score(2).label("has a");
  t.check("ab", similarity("ab")).atLeast(0.5).score(3);
  t.score(1).key("bonus");
  // @ts-expect-error score handles have no optional()
  assert.throws(() => t.succeeded().optional());
});

Deno.test("Context<pass> score() is typed never", () => {
  const t = context("pass");
  // @ts-expect-error t.score() does not exist on pass contexts
  assert.throws(() => t.score(1).label("x"));
});
