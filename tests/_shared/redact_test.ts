import assert from "node:assert/strict";
import { credentialValues, isCredentialName, Redactor } from "../../src/_shared/mod.ts";

Deno.test("isCredentialName() accepts the documented names and suffixes, case-insensitively", () => {
  for (
    const name of [
      "OPENAI_API_KEY",
      "E2B_API_KEY",
      "VERCEL_TOKEN",
      "MY_SERVICE_TOKEN",
      "DB_PASSWORD",
      "APP_SECRET",
      "AWS_SECRET_ACCESS_KEY",
      "SIGNING_PRIVATE_KEY",
      "STRIPE_SECRET_KEY",
      "github_token",
      "PASSWORD",
    ]
  ) assert.ok(isCredentialName(name), name);
  for (const name of ["PATH", "HOME", "DOCKER_HOST", "TOKENS", "MY_TOKEN_URL", "NO_COLOR"]) {
    assert.ok(!isCredentialName(name), name);
  }
});

Deno.test("credentialValues() keeps credential values of 6 characters or more", () => {
  assert.deepEqual(
    credentialValues({ OPENAI_API_KEY: "sk-123456", SHORT_TOKEN: "abcde", PATH: "/usr/bin:/bin" }),
    ["sk-123456"],
  );
  assert.deepEqual(credentialValues([["DB_PASSWORD", "hunter22"], ["X", "hunter33"]]), [
    "hunter22",
  ]);
});

Deno.test("Redactor.redact() returns its input when there is nothing to redact", () => {
  const text = "nothing secret here…";
  assert.equal(new Redactor().redact(text), text);
  assert.equal(new Redactor(["sk-abcdef"]).redact(text), text);
  assert.ok(new Redactor(["short"]).isEmpty);
});

Deno.test("Redactor.redact() replaces every occurrence of every value", () => {
  const r = new Redactor(["sk-abcdef123", "hunter2hunter2"]);
  assert.equal(
    r.redact("key sk-abcdef123 and hunter2hunter2, again sk-abcdef123."),
    "key *** and ***, again ***.",
  );
});

Deno.test("Redactor.redact() prefers the longer of two values that share a start", () => {
  const r = new Redactor(["abcdef", "abcdefghij"]);
  assert.equal(r.redact("x abcdefghij y"), "x *** y");
  assert.equal(new Redactor(["abcdefghij", "abcdef"]).redact("x abcdefghij y"), "x *** y");
});

Deno.test("Redactor.redact() merges overlapping values into one span", () => {
  const r = new Redactor(["abcdefgh", "efghijkl"]);
  assert.equal(r.redact("<abcdefghijkl>"), "<***>");
});

Deno.test("Redactor.redact() ignores values shorter than 6 characters", () => {
  const r = new Redactor(["abc12", "abcdef"]);
  assert.equal(r.redact("abc12 abcdef"), "abc12 ***");
});

Deno.test("Redactor.redact() redacts a value cut by a truncation next to …", () => {
  const r = new Redactor(["sk-proc-SECRET-0123456789"]);
  assert.equal(r.redact("thrown with sk-proc-SECRE…"), "thrown with ***…");
  assert.equal(r.redact("…ET-0123456789 end"), "…*** end");
  assert.equal(r.redact("ends with sk-…"), "ends with sk-…");
});

Deno.test("Redactor.redact() leaves a digit-only value inside a longer number alone", () => {
  const r = new Redactor(["123456"]);
  assert.equal(r.redact('{"at":1712345678,"pin":"123456"}'), '{"at":1712345678,"pin":"***"}');
});

Deno.test("Redactor.redact() finds JSON-escaped values and keeps JSON valid", () => {
  const secrets = ['pa"ss\\word', "line1\nline2", "nABCDEFG", "0e9abcdef", "abcdef\\"];
  const r = new Redactor(secrets);
  const samples: unknown[] = [
    { a: 'x pa"ss\\word y', b: "line1\nline2" },
    { text: "\nABCDEFG" }, // newline + ABCDEFG: the match starts inside the escape `\n`
    { text: "\u00e9abcdef" }, // `\u00e9abcdef`: the match starts inside `\u00e9`
    { text: 'abcdef"rest' }, // `abcdef\"`: a raw match would end inside the escape `\"`
    { [`key pa"ss\\word`]: 1 },
    ["plain", 'pa"ss\\word', "abcdef\\"],
  ];
  for (const sample of samples) {
    for (const json of [JSON.stringify(sample), JSON.stringify(sample, null, 2)]) {
      const redacted = r.redact(json);
      assert.doesNotThrow(() => JSON.parse(redacted), redacted);
      const decoded = JSON.stringify(JSON.parse(redacted));
      for (const secret of secrets) {
        assert.ok(!decoded.includes(JSON.stringify(secret).slice(1, -1)), redacted);
      }
    }
  }
  assert.equal(
    r.redact(JSON.stringify({ a: 'x pa"ss\\word y' })),
    '{"a":"x *** y"}',
  );
});
